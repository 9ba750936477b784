package graph

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/db"
	"mirrorql/graph/view"
	"mirrorql/live"
	"mirrorql/model"
)

// Codes of the errors only a subscription answers (live.Error's codes come
// on top: INTERNAL, CLIENT_TOO_SLOW, UNAVAILABLE).
const (
	CodeNotFound             = "NOT_FOUND"
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
	CodeSubscriptionsOff     = "SUBSCRIPTIONS_DISABLED"
	CodeStreamRequired       = "STREAM_TRANSPORT_REQUIRED"
)

// errStreamStopped: the hub stopped a stream while it waited for its client.
var errStreamStopped = errors.New("stream stopped")

func coded(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}

// topicMessages is Subscription.topicMessages: the mirror node's
// subscribeTopic checks, in its order (the filter, then the topic), then a
// stream of the hub's.
func (r *Resolver) topicMessages(ctx context.Context, topicID view.EntityIDArg, startArg, endArg *view.TimestampArg, limitArg *view.LongArg) (<-chan *view.TopicMessage, error) {
	st := streamOf(ctx)
	if st == nil {
		return nil, coded(CodeStreamRequired, "Subscriptions need a WebSocket (graphql-transport-ws or graphql-ws) "+
			"or server-sent events (POST with Accept: text/event-stream)")
	}
	hub := r.opts.Streams.Hub()
	if hub == nil {
		return nil, coded(CodeSubscriptionsOff, "Live topic messages are turned off on this server")
	}
	req, err := r.liveRequest(ctx, topicID, startArg, endArg, limitArg)
	if err != nil {
		return nil, err
	}
	kind, err := r.db.EntityKind(ctx, req.Topic)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return nil, coded(CodeNotFound, req.Topic.String()+" does not exist")
	case err != nil:
		return nil, dbError(err)
	case kind != "TOPIC":
		return nil, badInput("Not a valid topic")
	}
	if n := st.active.Add(1); int(n) > r.opts.Stream.MaxPerConnection {
		st.active.Add(-1)
		return nil, coded(CodeTooManySubscriptions, "At most "+strconv.Itoa(r.opts.Stream.MaxPerConnection)+
			" subscriptions per connection")
	}
	sub, err := hub.Subscribe(req)
	if err != nil {
		st.active.Add(-1)
		if errors.Is(err, live.ErrTooMany) {
			return nil, coded(CodeTooManySubscriptions, "The server follows as many subscriptions as it can; retry later")
		}
		return nil, coded(live.CodeUnavailable, "The server is shutting down")
	}
	out := make(chan *view.TopicMessage)
	go func() {
		err := sub.Run(ctx, func(m *model.TopicMessage) error {
			select {
			case out <- &view.TopicMessage{M: m}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-sub.Stopped(): // Run ends with the reason
				return errStreamStopped
			}
		})
		var lerr *live.Error
		if errors.As(err, &lerr) {
			st.fail(ctx, coded(lerr.Code, lerr.Message))
		}
		close(out)
		// The transport completes the operation, then ends its context:
		// until then the stream counts as open, so that a shutdown waits
		// for every `complete` to be written.
		t := time.NewTimer(5 * time.Second)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		st.active.Add(-1)
		sub.Close(err)
	}()
	return out, nil
}

// liveRequest checks the arguments as the mirror node's TopicMessageFilter
// does, with the query fields' messages for malformed values.
func (r *Resolver) liveRequest(ctx context.Context, topicID view.EntityIDArg, startArg, endArg *view.TimestampArg, limitArg *view.LongArg) (live.Request, error) {
	var errs argErrors
	if !topicIDSyntax(topicID) {
		errs.add(invalidParameter("topic.id"))
	}
	now := model.Timestamp(r.opts.Now().UnixNano())
	req := live.Request{Start: now}
	if startArg != nil {
		ts, err := model.ParseTimestamp(string(*startArg))
		if err != nil {
			errs.add(invalidParameter("consensusStartTime"))
		}
		req.Start = ts
	}
	if endArg != nil {
		ts, err := model.ParseTimestamp(string(*endArg))
		if err != nil {
			errs.add(invalidParameter("consensusEndTime"))
		}
		req.End = ts
	}
	if limitArg != nil {
		n, err := strconv.ParseInt(string(*limitArg), 10, 64)
		switch {
		case err != nil:
			errs.add(invalidParameter("limit"))
		case n < 0:
			errs.add("limit must be greater than or equal to 0")
		}
		req.Limit = n
	}
	if len(errs) == 0 {
		if req.Start > now {
			errs.add("Start time must be before the current time")
		}
		if endArg != nil && req.End <= req.Start {
			errs.add("End time must be after start time")
		}
	}
	if err := errs.err(ctx); err != nil {
		return live.Request{}, err
	}
	topic, err := r.parseTopicID(topicID)
	if err != nil {
		return live.Request{}, err
	}
	req.Topic = topic
	return req, nil
}
