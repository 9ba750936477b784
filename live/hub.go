// Package live follows topics as they grow: one shared poller per process
// finds the new messages of every subscribed topic with one statement an
// interval and fans them out, and each subscription turns what it is handed
// into the mirror node's subscribeTopic stream — historical messages first,
// then live ones, consecutive sequence numbers, no duplicate, no gap (gaps
// are filled from the database by sequence number, or end the stream with
// an error).
package live

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"mirrorql/app"
	"mirrorql/model"
)

// Source is what the hub and its subscriptions read: the core's LiveStore
// (*db.DB in the service).
type Source = app.LiveStore

// Metrics receives what the hub measures; nil measures nothing.
type Metrics interface {
	SubscriptionOpened()
	SubscriptionEnded(reason string)
	Delivered()
	Polled(took time.Duration)
	Lag(d time.Duration)
}

// Options are the hub's settings; zero values take the defaults noted.
type Options struct {
	// PollInterval is the time between two polls (250 ms).
	PollInterval time.Duration
	// PollLimit bounds the messages one poll reads (5000); a full poll is
	// followed by the next at once.
	PollLimit int
	// Page is the size of a historical read or gap fill (1000).
	Page int
	// Buffer bounds the live messages waiting for one subscriber (4096);
	// a live subscriber that lets more pile up ends CLIENT_TOO_SLOW. (One
	// that took all it was handed before, and gets more than Buffer from
	// one poll, reads them from the database instead.)
	Buffer int
	// MaxSubscriptions bounds the subscriptions of the process (10000).
	MaxSubscriptions int
	// Outage is how long the database may fail before subscriptions end
	// UNAVAILABLE (30 s); a shorter outage loses nothing.
	Outage time.Duration
	// EndGrace: a subscription with an end time completes at the latest
	// this long after it by the wall clock (30 s), when the ledger is quiet.
	EndGrace time.Duration
	// GapRetries and GapWait: how often, and how far apart, a missing
	// sequence number is looked for before the stream ends INTERNAL
	// (10 times, 100 ms apart, doubling up to 1 s).
	GapRetries int
	GapWait    time.Duration
	// SafetyCheck: this long after a subscription turns live it reads its
	// topic once more from its last message (1 s), for a message committed
	// around the switch (the mirror node lost one there once).
	SafetyCheck time.Duration
	// Now is the wall clock (time.Now).
	Now     func() time.Time
	Log     *slog.Logger
	Metrics Metrics
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.PollInterval, 250*time.Millisecond)
	defInt(&o.PollLimit, 5000)
	defInt(&o.Page, 1000)
	defInt(&o.Buffer, 4096)
	defInt(&o.MaxSubscriptions, 10000)
	def(&o.Outage, 30*time.Second)
	def(&o.EndGrace, 30*time.Second)
	defInt(&o.GapRetries, 10)
	def(&o.GapWait, 100*time.Millisecond)
	def(&o.SafetyCheck, time.Second)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	return o
}

// Hub is the process's live poller and its subscriptions.
type Hub struct {
	src Source
	o   Options

	mu      sync.Mutex
	byTopic map[model.EntityID]map[*Subscription]struct{}
	count   int
	closed  bool
	// started counts poll cycles begun; polled is the last cycle that
	// succeeded, announced by closing cycleDone (then replaced). A new
	// subscription reads its history only after a cycle that began after it
	// registered has succeeded: from then on the poller hands it every
	// message past that cycle's watermark.
	started, polled uint64
	cycleDone       chan struct{}
	// downSince is when the poller's statement first failed in a row (zero
	// while it answers).
	downSince time.Time
	watchers  []func(added, removed []model.EntityID)

	// deliveries numbers the poll results handed to subscriptions (deliver),
	// so that one can tell a burst from a backlog (Subscription.offer).
	deliveries uint64

	wake chan struct{}
	head atomic.Int64 // the newest ledger transaction seen
	wg   sync.WaitGroup

	// The poller's own state. prevHead is the head the previous poll read.
	watermark      model.Timestamp
	watermarkValid bool
	prevHead       model.Timestamp
}

// New is a hub over src; Run starts its poller.
func New(src Source, o Options) *Hub {
	return &Hub{
		src: src, o: o.withDefaults(),
		byTopic:   map[model.EntityID]map[*Subscription]struct{}{},
		cycleDone: make(chan struct{}),
		wake:      make(chan struct{}, 1),
	}
}

// Wake asks for a poll now (the importer's Redis publication says a topic
// has news). Wakes that arrive while a poll is pending are one.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Watch calls fn, from the poller's side, whenever topics gain their first
// subscriber or lose their last (the Redis waker subscribes to their
// channels); it is called once at once with the topics already followed.
func (h *Hub) Watch(fn func(added, removed []model.EntityID)) {
	h.mu.Lock()
	h.watchers = append(h.watchers, fn)
	topics := h.topicsLocked()
	h.mu.Unlock()
	if len(topics) > 0 {
		fn(topics, nil)
	}
}

// Run polls until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	timer := time.NewTimer(h.o.PollInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-h.wake:
		}
		for h.poll(ctx) {
			if ctx.Err() != nil {
				return
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(h.o.PollInterval)
	}
}

// poll is one cycle; true when its poll was full and the next should follow
// at once.
func (h *Hub) poll(ctx context.Context) (again bool) {
	h.mu.Lock()
	topics := h.topicsLocked()
	h.started++
	cycle := h.started
	h.mu.Unlock()
	if len(topics) == 0 {
		// Nobody follows anything: no statement, and the watermark is read
		// afresh when someone does, so the first poll after a quiet hour
		// does not walk that hour.
		h.watermarkValid = false
		h.succeeded(cycle)
		return false
	}
	after := h.watermark
	if !h.watermarkValid {
		after = math.MaxInt64 // the head alone
	}
	start := h.o.Now()
	p, err := h.src.LivePoll(ctx, after, topics, h.o.PollLimit)
	h.o.Metrics.Polled(h.o.Now().Sub(start))
	if err != nil {
		if ctx.Err() == nil {
			h.failed(err)
		}
		return false
	}
	if !h.watermarkValid {
		h.watermark, h.watermarkValid = p.Head, true
	} else {
		next := p.Scanned
		if !p.Full {
			// The walk reached the head: no submit of the followed topics
			// is left before it. Moving up to the previous poll's head
			// (not this one's, so that a commit a poll interval late is
			// still found) keeps the watermark from lagging while the
			// followed topics are quiet: a topic followed next would
			// otherwise have its whole backlog since then walked and
			// handed to its new subscribers (which, past Buffer, ended
			// them CLIENT_TOO_SLOW).
			next = max(next, min(h.prevHead, p.Head))
		}
		if next > h.watermark {
			h.watermark = next
		}
	}
	h.prevHead = p.Head
	if model.Timestamp(h.head.Load()) < p.Head {
		h.head.Store(int64(p.Head))
	}
	if p.Head > 0 {
		h.o.Metrics.Lag(h.o.Now().Sub(time.Unix(0, int64(p.Head))))
	}
	h.deliver(p.Messages)
	h.succeeded(cycle)
	return p.Full
}

// deliver hands each message to the subscribers of its topic, and tells
// those waiting for the ledger to pass their end time that it moved.
func (h *Hub) deliver(msgs []model.TopicMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deliveries++
	for i := range msgs {
		m := &msgs[i]
		for s := range h.byTopic[m.TopicID] {
			s.offer(m, h.deliveries)
		}
	}
	head := model.Timestamp(h.head.Load())
	for _, subs := range h.byTopic {
		for s := range subs {
			if s.req.End > 0 && head >= s.req.End {
				s.signal()
			}
		}
	}
}

func (h *Hub) succeeded(cycle uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.downSince.IsZero() {
		h.o.Log.Info("live: the poller reads the database again", "after", h.o.Now().Sub(h.downSince).Round(time.Millisecond))
	}
	h.downSince = time.Time{}
	h.polled = cycle
	close(h.cycleDone)
	h.cycleDone = make(chan struct{})
}

// failed records a failed poll; past the outage limit every subscription
// ends UNAVAILABLE.
func (h *Hub) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.o.Now()
	if h.downSince.IsZero() {
		h.downSince = now
		h.o.Log.Warn("live: the poll failed; subscriptions wait for the database", "err", err)
	}
	if now.Sub(h.downSince) < h.o.Outage {
		return
	}
	for _, subs := range h.byTopic {
		for s := range subs {
			s.stop(errUnavailable)
		}
	}
}

// outage is how long the poller has failed in a row.
func (h *Hub) outage() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.downSince.IsZero() {
		return 0
	}
	return h.o.Now().Sub(h.downSince)
}

// Head is the newest ledger transaction the poller has seen.
func (h *Hub) Head() model.Timestamp { return model.Timestamp(h.head.Load()) }

func (h *Hub) topicsLocked() []model.EntityID {
	out := make([]model.EntityID, 0, len(h.byTopic))
	for t := range h.byTopic {
		out = append(out, t)
	}
	return out
}

// ErrTooMany: the process follows MaxSubscriptions already.
var ErrTooMany = errors.New("too many subscriptions")

// ErrClosed: the hub is shutting down.
var ErrClosed = errors.New("shutting down")

func (h *Hub) register(s *Subscription) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	if h.count >= h.o.MaxSubscriptions {
		h.mu.Unlock()
		return ErrTooMany
	}
	h.count++
	h.wg.Add(1)
	subs := h.byTopic[s.req.Topic]
	first := subs == nil
	if first {
		subs = map[*Subscription]struct{}{}
		h.byTopic[s.req.Topic] = subs
	}
	subs[s] = struct{}{}
	s.cycle = h.started + 1
	watchers := h.watchers
	h.mu.Unlock()
	if first {
		for _, w := range watchers {
			w([]model.EntityID{s.req.Topic}, nil)
		}
	}
	h.o.Metrics.SubscriptionOpened()
	return nil
}

func (h *Hub) unregister(s *Subscription, reason string) {
	h.mu.Lock()
	subs := h.byTopic[s.req.Topic]
	delete(subs, s)
	last := len(subs) == 0
	if last {
		delete(h.byTopic, s.req.Topic)
	}
	h.count--
	watchers := h.watchers
	h.mu.Unlock()
	if last {
		for _, w := range watchers {
			w(nil, []model.EntityID{s.req.Topic})
		}
	}
	h.o.Metrics.SubscriptionEnded(reason)
	h.wg.Done()
}

// handedOff waits until a poll cycle that began after s registered has
// succeeded, so that every message past that cycle's watermark reaches s.
func (h *Hub) handedOff(ctx context.Context, s *Subscription) error {
	for {
		h.mu.Lock()
		done, ch := h.polled >= s.cycle, h.cycleDone
		h.mu.Unlock()
		if done {
			return nil
		}
		h.Wake()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stopped:
			return s.stopErr()
		case <-ch:
		}
	}
}

// Subscriptions is how many subscriptions are open.
func (h *Hub) Subscriptions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// Shutdown completes every subscription (a stream ends as if its end time
// had come) and refuses new ones; it returns when all have ended, or when
// ctx does.
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	for _, subs := range h.byTopic {
		for s := range subs {
			s.stop(errShutdown)
		}
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type noMetrics struct{}

func (noMetrics) SubscriptionOpened()      {}
func (noMetrics) SubscriptionEnded(string) {}
func (noMetrics) Delivered()               {}
func (noMetrics) Polled(time.Duration)     {}
func (noMetrics) Lag(time.Duration)        {}
