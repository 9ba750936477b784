package app

import (
	"errors"
	"strings"

	"mirrorql/model"
)

// BadRequest is input the client must change. Messages are the mirror node's
// (docs/reference/behavior.md §1.4), in its order: a face reports all of them.
type BadRequest struct{ Messages []string }

func (e *BadRequest) Error() string { return strings.Join(e.Messages, "; ") }

// Invalid is a BadRequest of the given messages.
func Invalid(messages ...string) *BadRequest { return &BadRequest{Messages: messages} }

// InvalidParameter is the message for a value the rules refuse.
func InvalidParameter(name string) string { return "Invalid parameter: " + name }

// UnknownParameter is the message for a query parameter a route does not
// accept; name is already lower-cased.
func UnknownParameter(name string) string { return "Unknown query parameter: " + name }

// Problems collects what is wrong with a request in the order the mirror node
// reports it: every invalid value in the order given, then every unknown
// parameter.
type Problems struct {
	invalid, unknown []string
}

// Invalid records `Invalid parameter: <name>`.
func (p *Problems) Invalid(name string) { p.invalid = append(p.invalid, InvalidParameter(name)) }

// Message records a message of its own among the invalid values (an entity
// id's rebuilt form, a subscription's range checks).
func (p *Problems) Message(msg string) { p.invalid = append(p.invalid, msg) }

// Unknown records `Unknown query parameter: <name>`.
func (p *Problems) Unknown(name string) { p.unknown = append(p.unknown, UnknownParameter(name)) }

// Any reports whether anything was recorded.
func (p *Problems) Any() bool { return len(p.invalid)+len(p.unknown) > 0 }

// Err is nil when nothing was recorded, else the BadRequest of all of it.
func (p *Problems) Err() error {
	if !p.Any() {
		return nil
	}
	return &BadRequest{Messages: append(p.invalid, p.unknown...)}
}

// EntityIDError is the message for an id that passed the syntax check but not
// the parser: `Invalid entity ID "<rebuilt>"` when name is empty, else
// `Invalid parameter: <name>` (the routes that name their path parameter).
func EntityIDError(err error, name string) *BadRequest {
	var inv *model.InvalidEntityIDError
	if name == "" && errors.As(err, &inv) {
		return Invalid(inv.Error())
	}
	return Invalid(InvalidParameter(name))
}

// NotFound is a lookup that found nothing. Message is REST's body text; a
// face that answers null instead ignores it.
type NotFound struct{ Message string }

func (e *NotFound) Error() string { return e.Message }

// ErrNotFound is the plain `Not found`.
var ErrNotFound = &NotFound{Message: "Not found"}

// Unavailable is a query-layer failure. The client sees only
// UnavailableMessage (docs/reference/DECISIONS.md #9); Cause is for the log. Down: the
// database could not be reached at all (the store says so, db.Unavailable).
type Unavailable struct {
	Cause error
	Down  bool
}

// UnavailableMessage is what a client is told about any Unavailable.
const UnavailableMessage = "Service unavailable"

func (u *Unavailable) Error() string { return "database: " + u.Cause.Error() }
func (u *Unavailable) Unwrap() error { return u.Cause }

// Outage reports whether the database could not be reached at all: db.Health
// logs that once per change of state, so a face need not log it per request.
func (u *Unavailable) Outage() bool { return u.Down }

// AsUnavailable is err as an Unavailable: itself when it is one, else an
// Unavailable caused by it.
func AsUnavailable(err error) *Unavailable {
	var u *Unavailable
	if errors.As(err, &u) {
		return u
	}
	return &Unavailable{Cause: err}
}

// IsNotFound reports whether err is a NotFound.
func IsNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nf *NotFound
	return errors.As(err, &nf)
}
