// Package policy is the HTTP policy of every route of the service, whatever
// the face: the error bodies (the mirror node's, for app's vocabulary and
// Echo's own errors), the not-found answer and CORS. The service's assembly
// installs it; a face only returns app's errors, or an error that renders
// its own body (Renderer).
package policy

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"mirrorql/app"
	"mirrorql/nodehttp"
)

// Renderer is an error that brings its own wire body: a face's answer in
// another format than the mirror node's Node service (rest-java's topic
// route).
type Renderer interface {
	error
	Render() (status int, body []byte, contentType string)
}

// statusError is an answer of the HTTP layer itself (Echo's 4xx other than
// 404/405) in the Node service's body.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return e.message }

// Body is the one mapping of errors to the wire: app's vocabulary to the
// Node service's status and body, a Renderer to its own, anything else to
// the generic 500. It unwraps by hand: errors.As would allocate a target per
// kind on every error answer.
func Body(err error) (status int, body []byte, contentType string) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *app.BadRequest:
			return http.StatusBadRequest, nodehttp.AppendError(nil, v.Messages...), nodehttp.ContentType
		case *app.NotFound:
			return http.StatusNotFound, nodehttp.AppendError(nil, v.Message), nodehttp.ContentType
		case Renderer:
			return v.Render()
		case *app.Unavailable:
			return http.StatusServiceUnavailable, nodehttp.AppendError(nil, app.UnavailableMessage), nodehttp.ContentType
		case *statusError:
			return v.status, nodehttp.AppendError(nil, v.message), nodehttp.ContentType
		}
	}
	return http.StatusInternalServerError, nodehttp.AppendError(nil, "Internal error"), nodehttp.ContentType
}

// outage reports whether err is a 503 because the database cannot be
// reached: db.Health logs that once per change of state, so the error
// handler does not log it once per request.
func outage(err error) bool {
	var u *app.Unavailable
	return errors.As(err, &u) && u.Outage()
}

// ErrorHandler renders every error in the mirror node's bodies: Echo's own
// 404/405 become the Node service's `Not found`; anything unexpected is the
// generic 500 body, never a stack trace. log, when set, hears of every 5xx
// but an outage.
func ErrorHandler(log func(c echo.Context, err error)) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		var he *echo.HTTPError
		if errors.As(err, &he) {
			switch {
			case he.Code == http.StatusNotFound, he.Code == http.StatusMethodNotAllowed:
				err = app.ErrNotFound
			case he.Code >= 400 && he.Code < 500:
				err = &statusError{status: he.Code, message: http.StatusText(he.Code)}
			}
		}
		status, body, ct := Body(err)
		if status >= 500 && log != nil && !outage(err) {
			log(c, err)
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		c.Response().Header().Set(echo.HeaderContentType, ct)
		_ = c.Blob(status, ct, body)
	}
}

// NotFoundHandler answers the service's 404 body, for handlers that are
// mounted under Echo but route further themselves (the GraphQL explorer's
// assets).
func NotFoundHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		status, body, ct := Body(app.ErrNotFound)
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// ExposedHeaders is the Access-Control-Expose-Headers of every response.
const ExposedHeaders = "Link, X-Request-Id"

// CORS answers like the `cors` middleware with its defaults: every response
// allows any origin, and every OPTIONS request (cors treats each as a
// preflight) gets the method list and 204. Unlike those defaults, every
// response also exposes Link (the next page) and X-Request-Id to scripts of
// another origin, which could not read them otherwise. Echo's CORS
// middleware sets nothing on a request without an Origin header, where the
// mirror node's sets its headers on every response: hence ours.
func CORS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hdr := c.Response().Header()
		hdr.Set("Access-Control-Allow-Origin", "*")
		hdr.Set("Access-Control-Expose-Headers", ExposedHeaders)
		r := c.Request()
		if r.Method == http.MethodOptions {
			hdr.Set("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE")
			if h := r.Header.Get("Access-Control-Request-Headers"); h != "" {
				hdr.Set("Access-Control-Allow-Headers", h)
				hdr.Add("Vary", "Access-Control-Request-Headers")
			}
			hdr.Set("Content-Length", "0")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}
