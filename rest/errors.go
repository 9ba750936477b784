package rest

import (
	"net/http"

	"mirrorql/app"
)

// javaError is the rest-java form used by the topic details route:
// {"_status":{"messages":[{"message":<reason phrase>,"detail":...}]}}.
type javaError struct {
	status int
	detail string
}

func (e *javaError) Error() string { return e.detail }

// Render makes javaError a policy.Renderer: the service's error handler
// writes rest-java's body.
func (e *javaError) Render() (int, []byte, string) { return javaBody(e) }

// javaUnavailable is rest-java's 503 (reason phrase, empty detail) for an
// app.Unavailable.
type javaUnavailable struct{ *app.Unavailable }

func (u javaUnavailable) Unwrap() error { return u.Unavailable }

func (u javaUnavailable) Render() (int, []byte, string) {
	return javaBody(&javaError{status: http.StatusServiceUnavailable})
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
