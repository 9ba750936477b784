package app

import (
	"strconv"

	"mirrorql/model"
)

// SubscriptionArgs are a live subscription's arguments as the client gave
// them (nil: not given).
type SubscriptionArgs struct {
	Topic             string
	Start, End, Limit *string
}

// Subscription is a checked subscription: Start inclusive, End exclusive (0:
// never), Limit the most messages to send (0: no limit).
type Subscription struct {
	Topic      model.EntityID
	Start, End model.Timestamp
	Limit      int64
}

// Check applies the mirror node's TopicMessageFilter rules (docs/reference/live.md), with
// the query fields' messages for malformed values; now is the default start.
func (a SubscriptionArgs) Check(d model.EntityDefaults, now model.Timestamp) (Subscription, error) {
	var p Problems
	if !model.ValidEntityIDSyntax(a.Topic, false) {
		p.Invalid("topic.id")
	}
	s := Subscription{Start: now}
	if a.Start != nil {
		ts, err := model.ParseTimestamp(*a.Start)
		if err != nil {
			p.Invalid("consensusStartTime")
		}
		s.Start = ts
	}
	if a.End != nil {
		ts, err := model.ParseTimestamp(*a.End)
		if err != nil {
			p.Invalid("consensusEndTime")
		}
		s.End = ts
	}
	if a.Limit != nil {
		n, err := strconv.ParseInt(*a.Limit, 10, 64)
		switch {
		case err != nil:
			p.Invalid(LimitParameter)
		case n < 0:
			p.Message("limit must be greater than or equal to 0")
		}
		s.Limit = n
	}
	if !p.Any() {
		if s.Start > now {
			p.Message("Start time must be before the current time")
		}
		if a.End != nil && s.End <= s.Start {
			p.Message("End time must be after start time")
		}
	}
	if err := p.Err(); err != nil {
		return Subscription{}, err
	}
	topic, err := d.ParseEntityID(a.Topic, false)
	if err != nil {
		return Subscription{}, EntityIDError(err, "")
	}
	s.Topic = topic
	return s, nil
}
