package rest

import (
	"errors"
	"net/http"

	"mirrorql/app"
	"mirrorql/rest/nodejson"
)

// statusError is an answer of the HTTP layer itself (Echo's 4xx other than
// 404/405) in the Node service's body.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return e.message }

// javaError is the rest-java form used by the topic details route:
// {"_status":{"messages":[{"message":<reason phrase>,"detail":...}]}}.
type javaError struct {
	status int
	detail string
}

func (e *javaError) Error() string { return e.detail }

// javaUnavailable is rest-java's 503 (reason phrase, empty detail) for an
// app.Unavailable.
type javaUnavailable struct{ *app.Unavailable }

func (u javaUnavailable) Unwrap() error { return u.Unavailable }

// errorBody is the one mapping of errors to the wire: app's vocabulary to the
// Node service's status and body, rest-java's errors to theirs, anything
// else to the generic 500. It unwraps by hand: errors.As would allocate a
// target per kind on every error answer.
func errorBody(err error) (status int, body []byte, contentType string) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *app.BadRequest:
			return http.StatusBadRequest, nodejson.AppendError(nil, v.Messages...), contentTypeJSON
		case *app.NotFound:
			return http.StatusNotFound, nodejson.AppendError(nil, v.Message), contentTypeJSON
		case javaUnavailable:
			return javaBody(&javaError{status: http.StatusServiceUnavailable})
		case *app.Unavailable:
			return http.StatusServiceUnavailable, nodejson.AppendError(nil, app.UnavailableMessage), contentTypeJSON
		case *statusError:
			return v.status, nodejson.AppendError(nil, v.message), contentTypeJSON
		case *javaError:
			return javaBody(v)
		}
	}
	return http.StatusInternalServerError, nodejson.AppendError(nil, "Internal error"), contentTypeJSON
}

func javaBody(je *javaError) (int, []byte, string) {
	j := getBuf()
	defer putBuf(j)
	j.raw(`{"_status":{"messages":[{"message":`)
	j.str(http.StatusText(je.status))
	j.raw(`,"detail":`)
	j.str(je.detail)
	j.raw(`}]}}`)
	return je.status, append([]byte(nil), j.b...), "application/json"
}

// outage reports whether err is a 503 because the database cannot be
// reached: db.Health logs that once per change of state, so the error
// handler does not log it once per request.
func outage(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *app.Unavailable:
			return v.Outage()
		case javaUnavailable:
			return v.Outage()
		}
	}
	return false
}

// NotFoundHandler answers the service's 404 body, for handlers that are
// mounted under Echo but route further themselves (the GraphQL explorer's
// assets).
func NotFoundHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		status, body, ct := errorBody(app.ErrNotFound)
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}
