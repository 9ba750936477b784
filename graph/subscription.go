package graph

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"mirrorql/app"
	"mirrorql/graph/view"
	"mirrorql/live"
	"mirrorql/model"
)

// Codes of the errors only a subscription answers (live.Error's codes come
// on top: INTERNAL, CLIENT_TOO_SLOW, UNAVAILABLE).
const (
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
	CodeSubscriptionsOff     = "SUBSCRIPTIONS_DISABLED"
	CodeStreamRequired       = "STREAM_TRANSPORT_REQUIRED"
)

// errStreamStopped: the hub stopped a stream while it waited for its client.
var errStreamStopped = errors.New("stream stopped")

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
	req, err := r.liveRequest(topicID, startArg, endArg, limitArg)
	if err != nil {
		return nil, fieldError(ctx, err)
	}
	if err := r.app.FollowableTopic(ctx, req.Topic); err != nil {
		var nf *app.NotFound
		if errors.As(err, &nf) {
			return nil, coded(CodeNotFound, nf.Message)
		}
		return nil, fieldError(ctx, err)
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
	// An event is written outside the field's context (gqlgen marshals it
	// in the transport's): it carries its selection.
	sel := graphql.GetFieldContext(ctx).Field.Selections
	go func() {
		err := sub.Run(ctx, func(m *model.TopicMessage) error {
			select {
			case out <- &view.TopicMessage{Row: m, Selection: sel}:
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

// liveRequest checks the arguments (app.SubscriptionArgs.Check).
func (r *Resolver) liveRequest(topicID view.EntityIDArg, startArg, endArg *view.TimestampArg, limitArg *view.LongArg) (app.Subscription, error) {
	args := app.SubscriptionArgs{Topic: string(topicID),
		Start: (*string)(startArg), End: (*string)(endArg), Limit: (*string)(limitArg)}
	return args.Check(r.rules, r.now())
}
