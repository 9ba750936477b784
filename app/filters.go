package app

import (
	"errors"

	"mirrorql/model"
)

// The list filters' names: REST's query parameters, GraphQL's filter
// arguments, and the name both faces report a refused value under.
const (
	ParamSequenceNumber = "sequencenumber"
	ParamTimestamp      = "timestamp"
	ParamScheduleID     = "schedule.id"
	ParamAccountID      = "account.id"
	ParamTopicID        = "topic.id"
)

// Reporter receives a request's problems in the order they are found:
// Problems, or a face's own list.
type Reporter interface{ Invalid(name string) }

// Filters are a list request's filter values, as a face received them: each
// is checked when it is added, in the order received (the order REST's
// query string and GraphQL's arguments give, which is the order of the
// messages). Repeated names and operators add conditions, ANDed.
type Filters struct {
	seq []model.Condition[int64]
	ts  []model.Condition[model.Timestamp]
	ids []idValue
}

// idValue is an entity-id value that passed the syntax check; it is parsed
// only once the whole request has been checked (entityIDs), as the mirror
// node parses after validation.
type idValue struct {
	name string
	op   model.Operator
	raw  string
}

// Add checks value raw of filter name with operator op, and reports
// `Invalid parameter: <name>` when the rules refuse it (docs/reference/behavior.md §1.5):
// a sequence number (0 included, docs/reference/DECISIONS.md #1), a query timestamp, an entity
// id (an EVM address too for schedule.id and account.id).
func (f *Filters) Add(r Reporter, name string, op model.Operator, raw string) {
	ok := false
	switch name {
	case ParamSequenceNumber:
		var v int64
		if v, ok = model.ParseSequenceNumber(raw); ok {
			f.seq = append(f.seq, model.Condition[int64]{Op: op, Value: v})
		}
	case ParamTimestamp:
		ts, err := model.ParseTimestamp(raw)
		if ok = err == nil; ok {
			f.ts = append(f.ts, model.Condition[model.Timestamp]{Op: op, Value: ts})
		}
	case ParamScheduleID, ParamAccountID, ParamTopicID:
		if ok = model.ValidEntityIDSyntax(raw, allowsEVM(name)); ok {
			f.ids = append(f.ids, idValue{name, op, raw})
		}
	}
	if !ok {
		r.Invalid(name)
	}
}

// allowsEVM: the schedules' filters take an EVM address (docs/reference/behavior.md §6.2),
// the topics' does not.
func allowsEVM(name string) bool { return name != ParamTopicID }

// Messages puts the message filters into q.
func (f *Filters) Messages(q *MessageQuery) {
	q.SequenceNumber, q.Timestamp = f.seq, f.ts
}

// Schedules puts the schedule.id and account.id filters into q, parsing
// the entity ids now that the rest of the request has passed its checks
// (entityIDs).
func (f *Filters) Schedules(d model.EntityDefaults, q *ScheduleQuery) error {
	return f.entityIDs(d, func(name string, c model.Condition[model.EntityID]) {
		if name == ParamAccountID {
			q.CreatorAccountID = append(q.CreatorAccountID, c)
		} else {
			q.ScheduleID = append(q.ScheduleID, c)
		}
	}, &q.NoMatch)
}

// Topics puts the topic.id filters into q, as Schedules does.
func (f *Filters) Topics(d model.EntityDefaults, q *TopicQuery) error {
	return f.entityIDs(d, func(_ string, c model.Condition[model.EntityID]) { q.ID = append(q.ID, c) }, nil)
}

// entityIDs parses the entity-id values in order: an id the parser refuses
// is the request's error (`Invalid entity ID "<rebuilt>"`, EntityIDError);
// an opaque EVM address names no entity, so the page is empty (noMatch).
func (f *Filters) entityIDs(d model.EntityDefaults, add func(string, model.Condition[model.EntityID]), noMatch *bool) error {
	for _, v := range f.ids {
		id, err := d.ParseEntityID(v.raw, allowsEVM(v.name))
		switch {
		case errors.Is(err, model.ErrOpaqueEVMAddress):
			if noMatch != nil {
				*noMatch = true
			}
		case err != nil:
			return EntityIDError(err, "")
		default:
			add(v.name, model.Condition[model.EntityID]{Op: v.op, Value: id})
		}
	}
	return nil
}
