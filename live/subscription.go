package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"mirrorql/app"
	"mirrorql/model"
)

// Error ends a stream abnormally; Code is the GraphQL extensions.code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// The codes a stream can end with.
const (
	CodeInternal      = "INTERNAL"
	CodeClientTooSlow = "CLIENT_TOO_SLOW"
	CodeUnavailable   = "UNAVAILABLE"
)

var (
	errUnavailable = &Error{CodeUnavailable, "The database is unavailable; subscribe again later"}
	errTooSlow     = &Error{CodeClientTooSlow, "Client lags too much behind. Please retry later"}
	// errShutdown completes a stream: the service is stopping.
	errShutdown = errors.New("shutdown")
)

// Ending reasons, the label of the metric of ended subscriptions.
const (
	EndedLimit      = "limit"
	EndedEndTime    = "end_time"
	EndedShutdown   = "shutdown"
	EndedClientGone = "client_gone"
	EndedTooSlow    = "client_too_slow"
	EndedGap        = "gap"
	EndedDatabase   = "unavailable"
)

// Subscription is one subscriber's stream.
type Subscription struct {
	hub   *Hub
	req   app.Subscription
	cycle uint64 // the poll cycle that hands it off (Hub.handedOff)

	mu      sync.Mutex
	pending []*model.TopicMessage // live messages not yet taken
	live    bool                  // past its history: overflow is an error, not a re-read
	reread  bool                  // messages were dropped while reading history
	err     error                 // why the hub stopped it
	notify  chan struct{}         // something to look at: a message, the head, a stop
	stopped chan struct{}         // closed with err

	// lagFrom is the delivery (Hub.deliver) since which something has waited
	// untaken (messages in pending, or dropped for a re-read); 0: nothing.
	lagFrom uint64

	// The stream's position, owned by Run; expect is the sequence number its
	// first message will have, when its history was empty (0: unknown).
	expect  int64
	sent    int64
	lastSeq int64
	lastTs  model.Timestamp
}

// Subscribe registers a stream for req, which the face has checked
// (app.SubscriptionArgs.Check, app.Subscription.Check); the caller must Run
// it, then Close it.
func (h *Hub) Subscribe(req app.Subscription) (*Subscription, error) {
	s := &Subscription{hub: h, req: req, notify: make(chan struct{}, 1), stopped: make(chan struct{})}
	if err := h.register(s); err != nil {
		return nil, err
	}
	return s, nil
}

// errDone ends Run without an error: the limit or the end time was reached.
var errDone = errors.New("done")

// Run streams the topic's messages to emit, in order, until the request is
// satisfied (nil), ctx ends (its error), or the stream cannot go on (an
// *Error). emit must return an error only when the client is gone.
func (s *Subscription) Run(ctx context.Context, emit func(*model.TopicMessage) error) (err error) {
	send := func(m *model.TopicMessage) error {
		if s.req.End > 0 && m.ConsensusTimestamp >= s.req.End {
			return errDone
		}
		if err := emit(m); err != nil {
			if serr := s.stopErr(); serr != nil {
				// The hub stopped the stream while emit waited for its
				// client (Stopped): end it for that reason.
				return serr
			}
			return err
		}
		s.hub.o.Metrics.Delivered()
		s.sent++
		s.lastSeq, s.lastTs = m.SequenceNumber, m.ConsensusTimestamp
		if s.req.Limit > 0 && s.sent >= s.req.Limit {
			return errDone
		}
		return nil
	}
	err = s.run(ctx, send)
	switch {
	case errors.Is(err, errDone):
		return nil
	case errors.Is(err, errShutdown):
		return nil
	}
	return err
}

// Reason is the metric label for how Run ended with err.
func (s *Subscription) reason(err error) string {
	var e *Error
	switch {
	case err == nil && s.stopErr() == errShutdown:
		return EndedShutdown
	case err == nil && s.req.Limit > 0 && s.sent >= s.req.Limit:
		return EndedLimit
	case err == nil:
		return EndedEndTime
	case errors.As(err, &e) && e.Code == CodeClientTooSlow:
		return EndedTooSlow
	case errors.As(err, &e) && e.Code == CodeUnavailable:
		return EndedDatabase
	case errors.As(err, &e):
		return EndedGap
	}
	return EndedClientGone
}

// Ended is the reason (Ended*) Run's err ended the stream for: a face that
// must tell a shutdown from a completion (both return nil) asks it.
func (s *Subscription) Ended(err error) string { return s.reason(err) }

// Close unregisters the stream, counting it as ended by err (what Run
// returned).
func (s *Subscription) Close(err error) { s.hub.unregister(s, s.reason(err)) }

func (s *Subscription) run(ctx context.Context, send func(*model.TopicMessage) error) error {
	if err := s.hub.handedOff(ctx, s); err != nil {
		return err
	}
	// History: everything the database holds from the start time on.
	if err := s.history(ctx, send); err != nil {
		return err
	}
	s.mu.Lock()
	s.live = true
	s.mu.Unlock()

	safety := time.NewTimer(s.hub.o.SafetyCheck)
	defer safety.Stop()
	var grace <-chan time.Time
	if s.req.End > 0 {
		wait := time.Unix(0, int64(s.req.End)).Add(s.hub.o.EndGrace).Sub(s.hub.o.Now())
		t := time.NewTimer(max(wait, 0))
		defer t.Stop()
		grace = t.C
	}
	for {
		if err := s.stopErr(); err != nil {
			return err
		}
		msgs, reread := s.take()
		if reread {
			if err := s.history(ctx, send); err != nil {
				return err
			}
			continue
		}
		for _, m := range msgs {
			if err := s.deliver(ctx, m, true, send); err != nil {
				return err
			}
		}
		if s.req.End > 0 && s.hub.Head() >= s.req.End {
			// The ledger has moved past the end time: what is still missing
			// before it has been committed by now.
			return s.finish(ctx, send)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.notify:
		case <-safety.C:
			if err := s.history(ctx, send); err != nil {
				return err
			}
		case <-grace:
			return s.finish(ctx, send)
		}
	}
}

// history sends the topic's messages from the start time, or after the last
// one sent, until the database has no more; a hole in the sequence numbers is
// filled by gapFill.
func (s *Subscription) history(ctx context.Context, send func(*model.TopicMessage) error) error {
	for {
		if err := s.stopErr(); err != nil {
			return err
		}
		q := app.MessageQuery{TopicID: s.req.Topic, Order: model.Asc, Limit: s.hub.o.Page}
		if s.sent == 0 {
			q.Timestamp = append(q.Timestamp, model.Condition[model.Timestamp]{Op: model.OpGte, Value: s.req.Start})
		} else {
			q.Timestamp = append(q.Timestamp, model.Condition[model.Timestamp]{Op: model.OpGt, Value: s.lastTs})
		}
		if s.req.End > 0 {
			q.Timestamp = append(q.Timestamp, model.Condition[model.Timestamp]{Op: model.OpLt, Value: s.req.End})
		}
		s.mu.Lock()
		s.reread = false // what is dropped from now on is read again
		s.mu.Unlock()
		page, err := s.read(ctx, &q)
		if err != nil {
			return err
		}
		if s.sent == 0 && len(page) == 0 && s.expect == 0 {
			if err := s.expectFirst(ctx); err != nil {
				return err
			}
		}
		for i := range page {
			if err := s.deliver(ctx, &page[i], false, send); err != nil {
				return err
			}
		}
		if len(page) < q.Limit {
			return nil
		}
	}
}

// expectFirst learns the sequence number the first message of a stream whose
// history is empty will have: the one after the topic's last message before
// the start time (1 when there is none). A first live message that has it
// is sent as it is; any other has the history read again, in case an
// earlier one was committed after it. Without it every subscriber from
// "now" would read its topic again at its first live message, all at once.
func (s *Subscription) expectFirst(ctx context.Context) error {
	before, err := s.read(ctx, &app.MessageQuery{TopicID: s.req.Topic, Order: model.Desc, Limit: 1,
		Timestamp: []model.Condition[model.Timestamp]{{Op: model.OpLt, Value: s.req.Start}}})
	if err != nil {
		return err
	}
	s.expect = 1
	if len(before) > 0 {
		s.expect = before[0].SequenceNumber + 1
	}
	return nil
}

// deliver sends m (from the poller when polled, else from a read of the
// database) if it is the next message, after filling the gap before it; a
// message already sent, or before the start time, is skipped.
func (s *Subscription) deliver(ctx context.Context, m *model.TopicMessage, polled bool, send func(*model.TopicMessage) error) error {
	if m.ConsensusTimestamp < s.req.Start || (s.sent > 0 && m.SequenceNumber <= s.lastSeq) {
		return nil
	}
	if s.sent == 0 && polled && m.SequenceNumber != s.expect {
		// The first message from the poller, not the one expected: a message
		// before it may have been committed since the history was read.
		// Reading the history again sends it, and this one after it.
		return s.history(ctx, send)
	}
	if s.sent > 0 && m.SequenceNumber > s.lastSeq+1 {
		if err := s.gapFill(ctx, m.SequenceNumber, send); err != nil {
			return err
		}
	}
	return send(m)
}

// gapFill sends the messages between the last one sent and the sequence
// number next, read by sequence number; a number still missing after
// GapRetries attempts ends the stream.
func (s *Subscription) gapFill(ctx context.Context, next int64, send func(*model.TopicMessage) error) error {
	wait := s.hub.o.GapWait
	for attempt := 0; ; {
		q := app.MessageQuery{TopicID: s.req.Topic, Order: model.Asc, Limit: s.hub.o.Page,
			SequenceNumber: []model.Condition[int64]{{Op: model.OpGt, Value: s.lastSeq}, {Op: model.OpLt, Value: next}}}
		page, err := s.read(ctx, &q)
		if err != nil {
			return err
		}
		progressed := false
		for i := range page {
			m := &page[i]
			if m.SequenceNumber != s.lastSeq+1 {
				break
			}
			if err := send(m); err != nil {
				return err
			}
			progressed = true
		}
		if s.lastSeq+1 >= next {
			return nil
		}
		if progressed {
			continue
		}
		if attempt++; attempt > s.hub.o.GapRetries {
			return &Error{CodeInternal, fmt.Sprintf("Message %d of topic %s is missing after message %d; subscribe again from %s",
				s.lastSeq+1, s.req.Topic, s.lastSeq, s.lastTs+1)}
		}
		if err := s.sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, time.Second)
	}
}

// finish sends what is left before the end time, then completes.
func (s *Subscription) finish(ctx context.Context, send func(*model.TopicMessage) error) error {
	if err := s.history(ctx, send); err != nil {
		return err
	}
	return errDone
}

// read runs one page of q, retrying through a database outage shorter than
// Options.Outage; a page whose conditions admit no message is empty without
// a read (app.MessageQuery.Filter).
func (s *Subscription) read(ctx context.Context, q *app.MessageQuery) ([]model.TopicMessage, error) {
	f, ok := q.Filter()
	if !ok {
		return nil, nil
	}
	var since time.Time
	wait := 50 * time.Millisecond
	for {
		page, err := s.hub.src.MessagesOfTopic(ctx, f)
		if err == nil {
			return page, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if since.IsZero() {
			since = s.hub.o.Now()
		}
		if s.hub.o.Now().Sub(since) >= s.hub.o.Outage {
			return nil, errUnavailable
		}
		if err := s.sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, time.Second)
	}
}

// sleep waits d unless the stream is stopped or ctx ends first.
func (s *Subscription) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopped:
		return s.stopErr()
	case <-t.C:
		return nil
	}
}

// offer queues a live message of the hub's delivery number delivery (the
// hub holds its lock): past Buffer, a live stream that has left messages of
// an earlier delivery untaken is stopped as too slow; one still reading
// history, or one that took everything before this delivery (a burst larger
// than its buffer, not a client lagging behind), drops it and reads again
// from the database.
func (s *Subscription) offer(m *model.TopicMessage, delivery uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if s.lagFrom == 0 {
		s.lagFrom = delivery
	}
	if len(s.pending) >= s.hub.o.Buffer {
		if s.live && s.lagFrom < delivery {
			s.stopLocked(errTooSlow)
			return
		}
		s.reread = true
		s.pending = s.pending[:0]
		return
	}
	s.pending = append(s.pending, m)
	s.signal()
}

// take hands over the queued messages; reread says some were dropped.
func (s *Subscription) take() ([]*model.TopicMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs, reread := s.pending, s.reread
	s.pending, s.reread, s.lagFrom = nil, false, 0
	return msgs, reread
}

func (s *Subscription) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// stop ends the stream with err at its next step.
func (s *Subscription) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(err)
}

func (s *Subscription) stopLocked(err error) {
	if s.err != nil {
		return
	}
	s.err = err
	s.pending = nil
	close(s.stopped)
	s.signal()
}

// Stopped is closed when the hub stops the stream (too slow, the database
// unavailable, shutdown): an emit waiting for its client must give up then,
// or a client that stopped reading would hold the stream until its
// connection's write deadline and end it as gone.
func (s *Subscription) Stopped() <-chan struct{} { return s.stopped }

func (s *Subscription) stopErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
