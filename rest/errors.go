package rest

import (
	"errors"
	"net/http"
)

// apiError is an error the mirror node's Node service answers with
// {"_status":{"messages":[{"message":...}...]}}.
type apiError struct {
	status   int
	messages []string
}

func (e *apiError) Error() string { return e.messages[0] }

func badRequest(messages ...string) *apiError {
	return &apiError{status: http.StatusBadRequest, messages: messages}
}

var (
	errNotFound    = &apiError{status: http.StatusNotFound, messages: []string{"Not found"}}
	errUnavailable = &apiError{status: http.StatusServiceUnavailable, messages: []string{"Service unavailable"}}
	errInternal    = &apiError{status: http.StatusInternalServerError, messages: []string{"Internal error"}}
)

func invalidParameter(name string) string { return "Invalid parameter: " + name }
func unknownParameter(name string) string { return "Unknown query parameter: " + name }

// javaError is the rest-java form used by the topic details route:
// {"_status":{"messages":[{"message":<reason phrase>,"detail":...}]}}.
type javaError struct {
	status int
	detail string
}

func (e *javaError) Error() string { return e.detail }

func errorBody(err error) (int, []byte) {
	j := getBuf()
	defer putBuf(j)
	var je *javaError
	if errors.As(err, &je) {
		j.raw(`{"_status":{"messages":[{"message":`)
		j.str(http.StatusText(je.status))
		j.raw(`,"detail":`)
		j.str(je.detail)
		j.raw(`}]}}`)
		return je.status, append([]byte(nil), j.b...)
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = errInternal
	}
	j.raw(`{"_status":{"messages":[`)
	for i, m := range ae.messages {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.raw(`{"message":`)
		j.str(m)
		j.b = append(j.b, '}')
	}
	j.raw(`]}}`)
	return ae.status, append([]byte(nil), j.b...)
}

// NotFoundHandler answers the service's 404 body, for handlers that are
// mounted under Echo but route further themselves (the GraphQL explorer's
// assets).
func NotFoundHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		status, body := errorBody(errNotFound)
		w.Header().Set("Content-Type", contentTypeJSON)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}
