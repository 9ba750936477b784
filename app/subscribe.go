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
func (a SubscriptionArgs) Check(r Rules, now model.Timestamp) (Subscription, error) {
	var p Problems
	CheckTopicID(&p, a.Topic)
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
		s.checkRange(&p, a.End != nil, now)
	}
	if err := p.Err(); err != nil {
		return Subscription{}, err
	}
	topic, err := r.TopicID(a.Topic)
	if err != nil {
		return Subscription{}, err
	}
	s.Topic = topic
	return s, nil
}

// checkRange records the mirror node's range rules: the start not after
// now, the end (when given) after the start.
func (s Subscription) checkRange(p *Problems, endGiven bool, now model.Timestamp) {
	if s.Start > now {
		p.Message("Start time must be before the current time")
	}
	if endGiven && s.End <= s.Start {
		p.Message("End time must be after start time")
	}
}

// Check applies the rules of SubscriptionArgs.Check to a subscription whose
// values a face read as numbers (gRPC's query carries no text): the limit
// not negative, then the range. endGiven: the client sent an end time.
func (s Subscription) Check(endGiven bool, now model.Timestamp) error {
	var p Problems
	if s.Limit < 0 {
		p.Message("limit must be greater than or equal to 0")
	} else {
		s.checkRange(&p, endGiven, now)
	}
	return p.Err()
}

// TopicOf is the topic with those parts, or the mirror node's message for
// an id out of range.
func TopicOf(shard, realm, num int64) (model.EntityID, error) {
	if shard < 0 || shard > model.MaxShard || realm < 0 || realm > model.MaxRealm || num < 0 || num > model.MaxNum {
		rebuilt := strconv.FormatInt(shard, 10) + "." + strconv.FormatInt(realm, 10) + "." + strconv.FormatInt(num, 10)
		return 0, Invalid((&model.InvalidEntityIDError{Rebuilt: rebuilt}).Error())
	}
	return model.NewEntityID(shard, realm, num), nil
}
