package graph

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"mirrorql/app"
	"mirrorql/model"
)

// Argument validation: the REST rule for the same value, reporting REST's
// message for the same mistake (docs/reference/behavior.md §1.4–1.7, §8), in app's
// vocabulary.

func invalidParameter(name string) string { return app.InvalidParameter(name) }

// argErrors collects messages in REST's order; like a REST 400 body, a
// request reports all of them (fieldError).
type argErrors []string

func (e *argErrors) add(msg string) { *e = append(*e, msg) }

// Invalid makes argErrors an app.Reporter.
func (e *argErrors) Invalid(name string) { e.add(invalidParameter(name)) }

func (e argErrors) err(ctx context.Context) error {
	if len(e) == 0 {
		return nil
	}
	return fieldError(ctx, app.Invalid(e...))
}

// first is app's page-size rule for `first`, reported as REST's `limit`.
func (r *Resolver) first(first *int, errs *argErrors) int {
	var n *int64
	if first != nil {
		v := int64(*first)
		n = &v
	}
	size, ok := r.rules.Pages.Requested(n)
	if !ok {
		errs.add(invalidParameter(app.LimitParameter))
	}
	return size
}

func orderOf(o *Order) model.Order {
	if o != nil && *o == OrderDesc {
		return model.Desc
	}
	return model.Asc
}

// operand is one operator of a filter input, in the schema's order.
type operand[T any] struct {
	op    model.Operator
	value *T
}

func operands[T any](eq, ne, gt, gte, lt, lte *T) []operand[T] {
	all := []operand[T]{{model.OpEq, eq}, {model.OpNe, ne}, {model.OpGt, gt}, {model.OpGte, gte}, {model.OpLt, lt}, {model.OpLte, lte}}
	out := all[:0]
	for _, o := range all {
		if o.value != nil {
			out = append(out, o)
		}
	}
	return out
}

// filter hands the values of a filter input to app's list filters, in the
// schema's order of its operators; app checks and reports them under name.
func filter[T ~string](fs *app.Filters, errs *argErrors, name string, eq, ne, gt, gte, lt, lte *T) {
	for _, o := range operands(eq, ne, gt, gte, lt, lte) {
		fs.Add(errs, name, o.op, string(*o.value))
	}
}

// Cursors are opaque to clients: base64url of "<kind>:<the row's paging
// key>" (app.MessageKey, app.TopicKey, app.ScheduleKey); the page after a
// cursor is app.After it, the bound REST's links.next adds.
const (
	cursorMessage  = "tm"
	cursorTopic    = "tp"
	cursorSchedule = "sc"
)

func encodeCursor(kind string, key int64) string {
	return string(appendCursor(nil, kind, key))
}

// appendCursor appends the cursor of key to b.
func appendCursor(b []byte, kind string, key int64) []byte {
	var raw [32]byte
	text := strconv.AppendInt(append(append(raw[:0], kind...), ':'), key, 10)
	return base64.RawURLEncoding.AppendEncode(b, text)
}

// afterCursor decodes an `after` cursor of the given kind; anything else is
// `Invalid parameter: after`.
func afterCursor(cursor *string, kind string, errs *argErrors) (key int64, ok bool) {
	if cursor == nil {
		return 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err == nil {
		if rest, found := strings.CutPrefix(string(raw), kind+":"); found {
			if key, err = strconv.ParseInt(rest, 10, 64); err == nil {
				return key, true
			}
		}
	}
	errs.add(invalidParameter("after"))
	return 0, false
}

// messageQuery validates the list arguments shared by Query.topicMessages
// and Topic.messages; the query looks one row ahead for hasNextPage.
func (r *Resolver) messageQuery(seq *LongFilter, ts *TimestampFilter, order *Order, first *int, cursor *string, errs *argErrors) app.MessageQuery {
	var fs app.Filters
	if seq != nil {
		filter(&fs, errs, app.ParamSequenceNumber, seq.Eq, seq.Ne, seq.Gt, seq.Gte, seq.Lt, seq.Lte)
	}
	if ts != nil {
		filter(&fs, errs, app.ParamTimestamp, ts.Eq, ts.Ne, ts.Gt, ts.Gte, ts.Lt, ts.Lte)
	}
	q := app.MessageQuery{Lookahead: true}
	fs.Messages(&q)
	q.Order = orderOf(order)
	q.Limit = r.first(first, errs)
	if key, ok := afterCursor(cursor, cursorMessage, errs); ok {
		q.Timestamp = append(q.Timestamp, app.After(q.Order, model.Timestamp(key)))
	}
	return q
}

// idFilter is filter for an entity-id filter input.
func idFilter(fs *app.Filters, errs *argErrors, name string, f *EntityIDFilter) {
	if f != nil {
		filter(fs, errs, name, f.Eq, f.Ne, f.Gt, f.Gte, f.Lt, f.Lte)
	}
}
