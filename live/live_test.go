package live_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/db"
	"mirrorql/live"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/stmtlog"
)

// The hub and its subscriptions driven directly (Subscribe, Run, Close,
// Shutdown) over each store the service can give it: app/memstore, the
// core's in-memory store, and a real PostgreSQL database (testdb, on the
// layout MIRRORQL_TEST_LAYOUT names) through *db.DB. Every test runs on
// both (onEachStore); memstore agrees with the database question by question
// (app/memstore's TestAgreesWithDB), so a test that fails on one store only
// points at the store, one that fails on both at the hub. Every wait is on a
// condition with a deadline.

const interval = 20 * time.Millisecond

// patience bounds a wait for what normally takes milliseconds (a message
// arriving, a stream ending). A passing test never waits it out, so it is
// long enough for a machine loaded many times over.
const patience = time.Minute

// store names what a fixture's hub reads.
type store string

const (
	memory   store = "memstore"
	postgres store = "postgres"
)

// onEachStore runs test once per store, as subtests run side by side when
// parallel (else one after the other).
func onEachStore(t *testing.T, parallel bool, test func(t *testing.T, st store)) {
	t.Helper()
	for _, st := range []store{memory, postgres} {
		t.Run(string(st), func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			test(t, st)
		})
	}
}

// fixture is one test's store, its read log, hub and subscriptions.
type fixture struct {
	t       *testing.T
	mem     *memstore.Store // over memstore
	b       *bun.DB         // over PostgreSQL
	reads   readLog
	hub     *live.Hub
	metrics *counters

	ctx  context.Context // the subscriptions' (ended at cleanup)
	wg   sync.WaitGroup
	stop context.CancelFunc
}

// newFixture starts a hub over a fresh store with o (PollInterval 20 ms
// unless set). polled, when not nil, runs on the poller's goroutine after
// every poll.
func newFixture(t *testing.T, st store, o live.Options, polled func()) *fixture {
	t.Helper()
	f := &fixture{t: t, metrics: &counters{ended: map[string]int{}, polled: polled}}
	var src app.LiveStore
	switch st {
	case memory:
		f.mem = memstore.New()
		rec := &recorder{store: f.mem}
		src, f.reads = rec, rec
	case postgres:
		_, f.b = testdb.NewRecent(t) // rows of the last minute
		d := db.Wrap(f.b)
		log := &stmtlog.Log{}
		d.Record(log)
		src, f.reads = d, statements{log}
	}
	if o.PollInterval == 0 {
		o.PollInterval = interval
	}
	o.Metrics = f.metrics
	o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	f.hub = live.New(src, o)
	hubCtx, stopHub := context.WithCancel(context.Background())
	hubDone := make(chan struct{})
	go func() { f.hub.Run(hubCtx); close(hubDone) }()
	f.ctx, f.stop = context.WithCancel(context.Background())
	t.Cleanup(func() { // before the database is dropped: cleanups run last in, first out
		f.stop()
		f.wg.Wait()
		stopHub()
		<-hubDone
	})
	return f
}

// read is one read the hub's store made: on PostgreSQL a statement db sent,
// over memstore a question asked. poll: the live poll, reading after after;
// gapFill: a page of a topic by sequence number.
type read struct {
	poll, gapFill bool
	after         model.Timestamp
	text          string
}

// readLog is the reads made since the last Take, oldest first.
type readLog interface {
	Take() []read
	Len() int
}

// statements are the reads on PostgreSQL: the statements db sent, which
// tells how many statements one question takes.
type statements struct{ log *stmtlog.Log }

func (s statements) Len() int { return s.log.Len() }

func (s statements) Take() []read {
	var out []read
	for _, st := range s.log.Take() {
		r := read{poll: strings.HasPrefix(st.SQL, "WITH tx AS MATERIALIZED"),
			gapFill: strings.Contains(st.SQL, "ORDER BY sequence_number ASC"), text: st.SQL}
		if r.poll {
			r.after = model.Timestamp(st.Args[0].(int64))
		}
		out = append(out, r)
	}
	return out
}

// recorder is memstore as the hub's store, with the questions it is asked
// logged.
type recorder struct {
	store *memstore.Store
	mu    sync.Mutex
	reads []read
}

func (r *recorder) log(rd read) {
	r.mu.Lock()
	r.reads = append(r.reads, rd)
	r.mu.Unlock()
}

func (r *recorder) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int) (app.Poll, error) {
	r.log(read{poll: true, after: after, text: fmt.Sprint("LivePoll ", after, topics, limit)})
	return r.store.LivePoll(ctx, after, topics, limit)
}

func (r *recorder) MessagesOfTopic(ctx context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	r.log(read{gapFill: f.SequenceNumber != nil, text: fmt.Sprintf("MessagesOfTopic %+v (sequence numbers %+v, timestamps %+v)", f, f.SequenceNumber, f.Timestamp)})
	return r.store.MessagesOfTopic(ctx, f)
}

func (r *recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reads)
}

func (r *recorder) Take() []read {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reads
	r.reads = nil
	return out
}

// counters is the hub's Metrics.
type counters struct {
	mu        sync.Mutex
	polls     int
	opened    int
	ended     map[string]int
	delivered int
	polled    func()
}

func (c *counters) SubscriptionOpened() { c.mu.Lock(); c.opened++; c.mu.Unlock() }
func (c *counters) SubscriptionEnded(r string) {
	c.mu.Lock()
	c.ended[r]++
	c.mu.Unlock()
}
func (c *counters) Delivered() { c.mu.Lock(); c.delivered++; c.mu.Unlock() }
func (c *counters) Polled(time.Duration) {
	c.mu.Lock()
	c.polls++
	fn := c.polled
	c.mu.Unlock()
	if fn != nil {
		fn()
	}
}
func (c *counters) Lag(time.Duration) {}

func (c *counters) endedBy(reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended[reason]
}

func (c *counters) pollCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.polls
}

// waitPolls waits for n polls from now on.
func (f *fixture) waitPolls(n int, what string) {
	f.t.Helper()
	p := f.metrics.pollCount()
	eventually(f.t, patience, what, func() bool { return f.metrics.pollCount() >= p+n })
}

// count counts the reads made since the last look (they are taken from the
// log) that match.
func (f *fixture) count(match func(read) bool) int {
	n := 0
	for _, r := range f.reads.Take() {
		if match(r) {
			n++
		}
	}
	return n
}

func isPoll(r read) bool    { return r.poll }
func isGapFill(r read) bool { return r.gapFill }
func notPoll(r read) bool   { return !r.poll }

// row is one message to write: its topic, sequence number and consensus
// time.
type row struct {
	topic model.EntityID
	seq   int64
	ts    model.Timestamp
}

// write commits rows as the importer does: each message with its submit
// transaction (type 27, SUCCESS), all at once (in one database
// transaction). On PostgreSQL it bypasses the statement log (database/sql,
// not bun).
func (f *fixture) write(rows ...row) {
	f.t.Helper()
	if f.mem != nil {
		var msgs []model.TopicMessage
		for _, r := range rows {
			version, payer, validStart := int16(3), model.EntityID(1002), r.ts-1
			msgs = append(msgs, model.TopicMessage{ConsensusTimestamp: r.ts, Message: message(r), RunningHash: []byte{0xab, 0xcd},
				SequenceNumber: r.seq, RunningHashVersion: &version, PayerAccountID: &payer, ValidStartTimestamp: &validStart, TopicID: r.topic})
		}
		f.mem.AddMessages(msgs...)
		return
	}
	ctx := context.Background()
	tx, err := f.b.DB.BeginTx(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO topic_message (consensus_timestamp, message, running_hash,
			sequence_number, running_hash_version, payer_account_id, valid_start_timestamp, topic_id)
			VALUES ($1, $2, '\xabcd', $3, 3, 1002, $4, $5)`, int64(r.ts), message(r), r.seq, int64(r.ts)-1, int64(r.topic)); err != nil {
			f.t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id,
			valid_start_ns, entity_id) VALUES ($1, 27, 22, 1002, $2, $3)`, int64(r.ts), int64(r.ts)-1, int64(r.topic)); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

// message is the payload of r's message: its topic and sequence number, which
// consecutive checks.
func message(r row) []byte { return []byte(fmt.Sprintf("%d/%d", r.topic, r.seq)) }

// transfer commits a transaction that is no topic message (a crypto
// transfer): the ledger moves on.
func (f *fixture) transfer(ts model.Timestamp) {
	f.t.Helper()
	if f.mem != nil {
		f.mem.AddTransactions(memstore.Transaction{ConsensusTimestamp: ts, Type: 14, Result: memstore.ResultSuccess})
		return
	}
	if _, err := f.b.DB.ExecContext(context.Background(), `INSERT INTO transaction (consensus_timestamp, type, result,
		payer_account_id, valid_start_ns) VALUES ($1, 14, 22, 1002, $2)`, int64(ts), int64(ts)-1); err != nil {
		f.t.Fatal(err)
	}
}

// history writes messages from..to of topic, one a microsecond from at.
func (f *fixture) history(topic model.EntityID, from, to int64, at model.Timestamp) []row {
	f.t.Helper()
	var rows []row
	for s := from; s <= to; s++ {
		rows = append(rows, row{topic, s, at + model.Timestamp((s-from)*1000)})
	}
	f.write(rows...)
	return rows
}

// stream is one running subscription.
type stream struct {
	t      *testing.T
	sub    *live.Subscription
	msgs   chan model.TopicMessage
	done   chan error
	cancel context.CancelFunc

	ended bool
	err   error
}

// subscribe registers req and runs it until it ends (or the test does),
// then closes it; its client holds up to 1024 messages the test has not
// taken.
func (f *fixture) subscribe(req app.Subscription) *stream {
	f.t.Helper()
	return f.subscribeClient(req, 1024)
}

// subscribeClient is subscribe with a client that holds up to held messages
// not taken: past them it stalls, as a client that stops reading does, until
// the hub stops the stream (as the faces' clients do).
func (f *fixture) subscribeClient(req app.Subscription, held int) *stream {
	f.t.Helper()
	sub, err := f.hub.Subscribe(req)
	if err != nil {
		f.t.Fatalf("subscribe %+v: %v", req, err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	s := &stream{t: f.t, sub: sub, msgs: make(chan model.TopicMessage, held), done: make(chan error, 1), cancel: cancel}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		err := sub.Run(ctx, func(m *model.TopicMessage) error {
			select {
			case s.msgs <- *m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-sub.Stopped():
				return errors.New("stopped while the client stalled")
			}
		})
		sub.Close(err)
		s.done <- err
	}()
	return s
}

// take reads exactly n messages within the time given.
func (s *stream) take(n int, within time.Duration) []model.TopicMessage {
	s.t.Helper()
	var out []model.TopicMessage
	deadline := time.After(within)
	for len(out) < n {
		select {
		case m := <-s.msgs:
			out = append(out, m)
		case <-deadline:
			s.t.Fatalf("%d of %d messages within %s: %v", len(out), n, within, seqsOf(out))
		}
	}
	return out
}

// end waits for Run to return and gives its result and the messages not
// taken yet.
func (s *stream) end(within time.Duration) ([]model.TopicMessage, error) {
	s.t.Helper()
	if !s.ended {
		select {
		case s.err = <-s.done:
			s.ended = true
		case <-time.After(within):
			s.t.Fatalf("the stream did not end within %s", within)
		}
	}
	var rest []model.TopicMessage
	for {
		select {
		case m := <-s.msgs:
			rest = append(rest, m)
		default:
			return rest, s.err
		}
	}
}

// completes waits for the stream to end on its own (Run returns nil) with
// every message taken.
func (s *stream) completes(what string) {
	s.t.Helper()
	if rest, err := s.end(patience); err != nil || len(rest) != 0 {
		s.t.Fatalf("%s: %v, then %v", what, err, seqsOf(rest))
	}
}

// running fails if the stream has ended.
func (s *stream) running() {
	s.t.Helper()
	select {
	case err := <-s.done:
		s.t.Fatalf("the stream ended: %v", err)
	default:
	}
}

// quiet fails if a message arrives while f's poller polls three more times
// and for as long again as one of those polls took: the window is the
// poller's own pace on this machine at this moment, and a message left
// behind would come with one of its polls (the first counted may have begun
// before the call, the second began after it and is handed on by the time
// the third ends).
func (s *stream) quiet(f *fixture) {
	s.t.Helper()
	const polls = 3
	start := time.Now()
	f.waitPolls(polls, "the polls the stream stays quiet for")
	select {
	case m := <-s.msgs:
		s.t.Fatalf("unexpected message %d at %d", m.SequenceNumber, m.ConsensusTimestamp)
	case <-time.After(time.Since(start) / polls):
	}
}

// idle sleeps n of the poller's idle intervals of d as this machine's timers
// deliver them: one timer after another, as the poller's loop resets its
// own, so that a loaded machine stretches both alike (one sleep of n×d would
// hold fewer of the poller's cycles there, and prove less).
func idle(n int, d time.Duration) {
	for range n {
		time.Sleep(d)
	}
}

func seqsOf(ms []model.TopicMessage) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.SequenceNumber
	}
	return out
}

// consecutive fails unless ms are messages first, first+1, … of topic.
func consecutive(t *testing.T, what string, ms []model.TopicMessage, topic model.EntityID, first int64) {
	t.Helper()
	for i, m := range ms {
		if m.SequenceNumber != first+int64(i) || m.TopicID != topic || string(m.Message) != fmt.Sprintf("%d/%d", topic, m.SequenceNumber) {
			t.Fatalf("%s: message %d is %d of %s (%q), want %d of %s; got %v", what, i, m.SequenceNumber, m.TopicID, m.Message,
				first+int64(i), topic, seqsOf(ms))
		}
	}
}

// eventually waits for cond, failing after within.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func now() model.Timestamp { return model.Timestamp(time.Now().UnixNano()) }

// TestHistoryThenLive: a subscription from the start of time gets the
// topic's history, then its new messages (one at a time and several in one
// transaction), none of another topic's; one from now gets only the new
// ones; neither ends.
func TestHistoryThenLive(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testHistoryThenLive)
}

func testHistoryThenLive(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{}, nil)
	past := now() - model.Timestamp(time.Minute)
	f.history(7, 1, 5, past)
	f.history(8, 1, 3, past+500)

	all := f.subscribe(app.Subscription{Topic: 7})
	fromNow := f.subscribe(app.Subscription{Topic: 7, Start: now()})
	consecutive(t, "history", all.take(5, patience), 7, 1)

	f.write(row{7, 6, now()})
	t0 := now()
	f.write(row{7, 7, t0}, row{8, 4, t0 + 1}, row{7, 8, t0 + 2})
	f.write(row{8, 5, now()})
	f.write(row{7, 9, now()})
	consecutive(t, "live", all.take(4, patience), 7, 6)
	consecutive(t, "from now", fromNow.take(4, patience), 7, 6)
	all.quiet(f)
	all.running()
	fromNow.running()
}

// TestGapFilledLate: message 4 is committed before message 3, whose
// consensus time is earlier, and the poller has moved past 3's time when it
// is committed: the subscription waits for 3 (reading it by sequence
// number) and sends 3, then 4.
func TestGapFilledLate(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testGapFilledLate)
}

func testGapFilledLate(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{GapRetries: 100, GapWait: 10 * time.Millisecond}, nil)
	f.history(7, 1, 2, now()-model.Timestamp(time.Minute))
	s := f.subscribe(app.Subscription{Topic: 7})
	consecutive(t, "history", s.take(2, patience), 7, 1)

	t0 := now()
	f.write(row{7, 4, t0 + 2000})
	// The poller hands 4 over and the subscription looks for 3.
	eventually(t, patience, "a gap fill", func() bool { return f.count(isGapFill) > 0 })
	if f.hub.Head() < t0+2000 {
		t.Fatalf("head %d before message 4 at %d", f.hub.Head(), t0+2000)
	}
	f.write(row{7, 3, t0 + 1000})
	consecutive(t, "late gap", s.take(2, patience), 7, 3)
	s.running()
}

// TestGapNeverFilled: message 3 never comes: after GapRetries looks the
// stream ends INTERNAL, naming the missing message.
func TestGapNeverFilled(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testGapNeverFilled)
}

func testGapNeverFilled(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{GapRetries: 3, GapWait: 5 * time.Millisecond}, nil)
	f.history(7, 1, 2, now()-model.Timestamp(time.Minute))
	s := f.subscribe(app.Subscription{Topic: 7})
	consecutive(t, "history", s.take(2, patience), 7, 1)
	f.write(row{7, 4, now()})
	rest, err := s.end(patience)
	var lerr *live.Error
	if !errors.As(err, &lerr) || lerr.Code != live.CodeInternal || !strings.Contains(lerr.Message, "Message 3 of topic 0.0.7 is missing") {
		t.Fatalf("a gap never filled ended with %v (%T)", err, err)
	}
	if len(rest) != 0 {
		t.Errorf("sent past the gap: %v", seqsOf(rest))
	}
	if gapFills := f.count(isGapFill); gapFills != 4 { // the first look and 3 retries
		t.Errorf("%d gap fills, want 4", gapFills)
	}
	eventually(t, patience, "the gap counted", func() bool { return f.metrics.endedBy(live.EndedGap) == 1 })
}

// TestSlowConsumer: a live subscriber whose client stops reading while
// messages keep coming, one poll after another, has them queue up to
// Buffer, then ends CLIENT_TOO_SLOW at the next; a subscriber beside it on
// the same topic that keeps up gets every message and goes on.
func TestSlowConsumer(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testSlowConsumer)
}

// buffer is the Buffer of the hubs of the tests of slow consumers.
const buffer = 4

// bufferFixture is a fixture whose hub queues up to buffer live messages
// for a subscriber, with message 1 of topic 7 written.
func bufferFixture(t *testing.T, st store) *fixture {
	t.Helper()
	f := newFixture(t, st, live.Options{Buffer: buffer, SafetyCheck: time.Hour}, nil)
	f.history(7, 1, 1, now()-model.Timestamp(time.Minute))
	return f
}

func testSlowConsumer(t *testing.T, st store) {
	f := bufferFixture(t, st)
	slow := f.subscribeClient(app.Subscription{Topic: 7}, 0)
	fast := f.subscribe(app.Subscription{Topic: 7})
	consecutive(t, "slow, history", slow.take(1, patience), 7, 1)
	consecutive(t, "fast, history", fast.take(1, patience), 7, 1)
	// From now on nobody reads slow's messages. Message 2 stalls its
	// client; 3 to 2+buffer fill its queue; the next overflows it. Each is
	// written once fast has the one before, so each comes from a poll of
	// its own: a backlog, not a burst.
	for seq := int64(2); seq <= 2+buffer+1; seq++ {
		slow.running()
		f.write(row{7, seq, now()})
		consecutive(t, "fast, live", fast.take(1, patience), 7, seq)
	}
	_, err := slow.end(patience)
	var lerr *live.Error
	if !errors.As(err, &lerr) || lerr.Code != live.CodeClientTooSlow {
		t.Fatalf("a client that stopped reading ended with %v (%T), want %s", err, err, live.CodeClientTooSlow)
	}
	eventually(t, patience, "the slow consumer counted", func() bool { return f.metrics.endedBy(live.EndedTooSlow) == 1 })
	f.write(row{7, 2 + buffer + 2, now()})
	consecutive(t, "fast, after", fast.take(1, patience), 7, 2+buffer+2)
	fast.running()
}

// TestBurstLargerThanBuffer: a subscriber that keeps up and gets more than
// Buffer messages from one poll is not too slow: it reads them from the
// store instead, in order, and goes on.
func TestBurstLargerThanBuffer(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testBurstLargerThanBuffer)
}

func testBurstLargerThanBuffer(t *testing.T, st store) {
	f := bufferFixture(t, st)
	s := f.subscribe(app.Subscription{Topic: 7})
	consecutive(t, "history", s.take(1, patience), 7, 1)
	f.history(7, 2, 6*buffer+1, now())
	consecutive(t, "the burst", s.take(6*buffer, patience), 7, 2)
	f.write(row{7, 6*buffer + 2, now()})
	consecutive(t, "after the burst", s.take(1, patience), 7, 6*buffer+2)
	s.running()
	if n := f.metrics.endedBy(live.EndedTooSlow); n != 0 {
		t.Errorf("%d ended as too slow", n)
	}
}

// TestStoreOutage: while the store fails, subscriptions wait for it; an
// outage shorter than Options.Outage loses nothing, a longer one ends every
// subscription UNAVAILABLE. Over memstore, which fails on demand
// (tests/live_faults_test.go stops a real server under the service).
func TestStoreOutage(t *testing.T) {
	t.Parallel()
	// down is a live subscription to topic 7, past its two messages of
	// history, over a store that has just gone down.
	down := func(t *testing.T, outage time.Duration) (*fixture, *stream) {
		f := newFixture(t, memory, live.Options{Outage: outage, SafetyCheck: time.Hour}, nil)
		f.history(7, 1, 2, now()-model.Timestamp(time.Minute))
		s := f.subscribe(app.Subscription{Topic: 7})
		consecutive(t, "history", s.take(2, patience), 7, 1)
		f.mem.Fail(errors.New("the database is down"))
		return f, s
	}
	t.Run("short", func(t *testing.T) {
		t.Parallel()
		f, s := down(t, time.Hour)
		f.history(7, 3, 5, now())
		f.waitPolls(3, "failed polls")
		s.running()
		f.mem.Fail(nil)
		consecutive(t, "after the outage", s.take(3, patience), 7, 3)
		s.running()
	})
	t.Run("long", func(t *testing.T) {
		t.Parallel()
		// Any outage is longer than this one's limit: the end does not
		// hang on how fast the machine is.
		f, s := down(t, time.Millisecond)
		_, err := s.end(patience)
		var lerr *live.Error
		if !errors.As(err, &lerr) || lerr.Code != live.CodeUnavailable {
			t.Fatalf("a long outage ended the stream with %v (%T), want %s", err, err, live.CodeUnavailable)
		}
		eventually(t, patience, "the outage counted", func() bool { return f.metrics.endedBy(live.EndedDatabase) == 1 })
	})
}

// TestLimit: a limit within the history ends there; one beyond it ends
// among the live messages, at the limit exactly.
func TestLimit(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testLimit)
}

func testLimit(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{}, nil)
	f.history(7, 1, 5, now()-model.Timestamp(time.Minute))
	three := f.subscribe(app.Subscription{Topic: 7, Limit: 3})
	seven := f.subscribe(app.Subscription{Topic: 7, Limit: 7})
	got := three.take(3, patience)
	three.completes("limit 3")
	consecutive(t, "limit 3", got, 7, 1)

	consecutive(t, "limit 7, history", seven.take(5, patience), 7, 1)
	seven.running()
	t0 := now()
	f.write(row{7, 6, t0}, row{7, 7, t0 + 1}, row{7, 8, t0 + 2})
	got = seven.take(2, patience)
	seven.completes("limit 7")
	consecutive(t, "limit 7, live", got, 7, 6)
	eventually(t, patience, "both counted as ended by their limit", func() bool { return f.metrics.endedBy(live.EndedLimit) == 2 })
}

// TestEndTime: a stream with an end time completes once the ledger has a
// transaction at or after it — a message of another topic, or no message
// at all — having sent every message before it and none after; an end time
// the ledger has passed already ends the stream after its history. The
// wall-clock grace is an hour here: the ledger alone ends them.
func TestEndTime(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testEndTime)
}

func testEndTime(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{EndGrace: time.Hour}, nil)
	rows := f.history(7, 1, 3, now()-model.Timestamp(time.Minute))

	past := f.subscribe(app.Subscription{Topic: 7, End: rows[2].ts})
	got, err := past.end(patience)
	if err != nil {
		t.Fatal(err)
	}
	consecutive(t, "end time passed", got, 7, 1)
	if len(got) != 2 {
		t.Fatalf("end time at message 3: %v", seqsOf(got))
	}

	end := now() + model.Timestamp(time.Hour)
	later := end + model.Timestamp(time.Minute)
	byMessage := f.subscribe(app.Subscription{Topic: 7, End: end})
	byTransfer := f.subscribe(app.Subscription{Topic: 7, Start: rows[1].ts, End: later})
	consecutive(t, "history", byMessage.take(3, patience), 7, 1)
	consecutive(t, "history from 2", byTransfer.take(2, patience), 7, 2)
	f.write(row{7, 4, now()})
	f.write(row{7, 5, end - 1})
	consecutive(t, "live", byMessage.take(2, patience), 7, 4)
	consecutive(t, "live", byTransfer.take(2, patience), 7, 4)
	byMessage.running()

	// Message 6 is at the end time: never sent. A message of topic 8 after
	// the end time moves the ledger past it.
	f.write(row{7, 6, end})
	f.write(row{8, 1, end + 1})
	byMessage.completes("ended by a message of another topic")
	consecutive(t, "up to the later end", byTransfer.take(1, patience), 7, 6)
	byTransfer.running()
	f.transfer(later + 5)
	byTransfer.completes("ended by a transfer")
	eventually(t, patience, "three ended by their end time", func() bool { return f.metrics.endedBy(live.EndedEndTime) == 3 })
}

// TestEndGrace: when the ledger stays quiet, a stream with an end time
// completes by the wall clock EndGrace after it.
func TestEndGrace(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testEndGrace)
}

func testEndGrace(t *testing.T, st store) {
	const grace = 200 * time.Millisecond
	f := newFixture(t, st, live.Options{EndGrace: grace}, nil)
	f.history(7, 1, 2, now()-model.Timestamp(time.Minute))
	endAt := time.Now().Add(100 * time.Millisecond)
	s := f.subscribe(app.Subscription{Topic: 7, End: model.Timestamp(endAt.UnixNano())})
	consecutive(t, "history", s.take(2, patience), 7, 1)
	s.completes("grace")
	if early := time.Until(endAt.Add(grace)); early > 0 {
		t.Errorf("completed %s before the end time and its grace", early)
	}
}

// TestShutdown: Shutdown completes every running stream (Run returns nil),
// waits for them to close, and refuses new subscriptions.
func TestShutdown(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testShutdown)
}

func testShutdown(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{}, nil)
	f.history(7, 1, 3, now()-model.Timestamp(time.Minute))
	streams := []*stream{
		f.subscribe(app.Subscription{Topic: 7}),
		f.subscribe(app.Subscription{Topic: 7, Start: now()}),
		f.subscribe(app.Subscription{Topic: 8, End: now() + model.Timestamp(time.Hour)}),
	}
	streams[0].take(3, patience)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := f.hub.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if n := f.hub.Subscriptions(); n != 0 {
		t.Errorf("%d subscriptions after the shutdown", n)
	}
	for i, s := range streams {
		if _, err := s.end(patience); err != nil {
			t.Errorf("stream %d ended with %v, want nil", i, err)
		}
	}
	if _, err := f.hub.Subscribe(app.Subscription{Topic: 7}); !errors.Is(err, live.ErrClosed) {
		t.Errorf("subscribe after the shutdown: %v, want ErrClosed", err)
	}
	if n := f.metrics.endedBy(live.EndedShutdown); n != 3 {
		t.Errorf("%d ended by the shutdown, want 3", n)
	}
}

// TestMaxSubscriptions: beyond MaxSubscriptions a subscription is refused
// with ErrTooMany; one that ends frees its place.
func TestMaxSubscriptions(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testMaxSubscriptions)
}

func testMaxSubscriptions(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{MaxSubscriptions: 2}, nil)
	a := f.subscribe(app.Subscription{Topic: 7, Start: now()})
	f.subscribe(app.Subscription{Topic: 8, Start: now()})
	if _, err := f.hub.Subscribe(app.Subscription{Topic: 9}); !errors.Is(err, live.ErrTooMany) {
		t.Fatalf("third subscription: %v, want ErrTooMany", err)
	}
	a.cancel()
	if _, err := a.end(patience); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled stream ended with %v", err)
	}
	if n := f.hub.Subscriptions(); n != 1 {
		t.Fatalf("%d subscriptions after one ended, want 1", n)
	}
	c := f.subscribe(app.Subscription{Topic: 9, Start: now()})
	c.running()
	if _, err := f.hub.Subscribe(app.Subscription{Topic: 9}); !errors.Is(err, live.ErrTooMany) {
		t.Fatalf("third subscription again: %v, want ErrTooMany", err)
	}
	if n := f.metrics.endedBy(live.EndedClientGone); n != 1 {
		t.Errorf("%d ended by the client leaving, want 1", n)
	}
}

// TestOnePollForAll: one read a poll (one statement, on PostgreSQL),
// whether one subscription or 200 follow the topic, while messages are
// delivered to all of them; the subscriptions themselves read nothing once
// past their history. Counted
// on the poller's own goroutine after each poll (Metrics.Polled), so the
// count is exact: every read logged up to then belongs to a finished
// poll.
func TestOnePollForAll(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testOnePollForAll)
}

func testOnePollForAll(t *testing.T, st store) {
	var (
		mu       sync.Mutex
		counting bool
		perPoll  []int // live poll reads in each poll of the window
		others   int   // other reads in the window
		history  int   // history reads before the window
	)
	var f *fixture
	polled := func() {
		reads := f.reads.Take()
		mu.Lock()
		defer mu.Unlock()
		polls, rest := 0, 0
		for _, r := range reads {
			if r.poll {
				polls++
			} else {
				rest++
			}
		}
		if counting {
			perPoll = append(perPoll, polls)
			others += rest
		} else {
			history += rest
		}
	}
	f = newFixture(t, st, live.Options{SafetyCheck: time.Hour}, polled)
	f.history(7, 1, 3, now()-model.Timestamp(time.Minute))
	const polls = 10
	seq := int64(3)
	for _, n := range []int{1, 200} {
		mu.Lock()
		history, counting, perPoll, others = 0, false, nil, 0
		mu.Unlock()
		var streams []*stream
		for range n {
			s := f.subscribe(app.Subscription{Topic: 7})
			streams = append(streams, s)
		}
		for _, s := range streams {
			consecutive(t, "history", s.take(int(seq), patience), 7, 1)
		}
		// Every history read was logged before its messages were sent;
		// a poll after the last one has taken them all.
		f.waitPolls(1, "a poll after the history reads")
		mu.Lock()
		if history < n {
			t.Errorf("%d subscriptions: %d history reads", n, history)
		}
		counting = true
		mu.Unlock()

		// Within the window, two new messages reach everyone.
		f.write(row{7, seq + 1, now()})
		f.write(row{7, seq + 2, now()})
		for _, s := range streams {
			consecutive(t, "live", s.take(2, patience), 7, seq+1)
		}
		seq += 2
		eventually(t, patience, fmt.Sprintf("%d polls", polls), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(perPoll) >= polls
		})
		mu.Lock()
		counting = false
		window, otherStmts := append([]int(nil), perPoll[:polls]...), others
		mu.Unlock()
		t.Logf("%d subscriptions: live poll reads in %d polls: %v; other reads: %d", n, polls, window, otherStmts)
		for i, c := range window {
			if c != 1 {
				t.Errorf("%d subscriptions: poll %d sent %d live poll reads, want 1", n, i, c)
			}
		}
		if otherStmts != 0 {
			t.Errorf("%d subscriptions: %d other reads while live, want 0", n, otherStmts)
		}
		for _, s := range streams {
			s.cancel()
			if _, err := s.end(patience); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: %v", err)
			}
		}
	}
}

// TestRateIndependentOfSubscribers: two hubs side by side, one following a
// topic for 1 subscription and one for 200, make over the same wall-clock
// window one read a poll (±1 for a poll under way at the window's edges),
// all of them polls, and no more polls than the window as measured holds
// intervals: subscribers neither add reads nor make the poller poll more
// often. (TestOnePollForAll counts exactly, poll by poll.) The bound is the
// window the test measured, not the one it slept: on a loaded machine a
// sleep overruns, and a hub starved of the CPU polls less, never more. Not
// parallel: the package's other hubs would crowd its windows.
func TestRateIndependentOfSubscribers(t *testing.T) {
	onEachStore(t, false, testRateIndependentOfSubscribers)
}

func testRateIndependentOfSubscribers(t *testing.T, st store) {
	const window = 20 * interval
	settle := func(n int) *fixture {
		f := newFixture(t, st, live.Options{SafetyCheck: time.Hour}, nil)
		subs := make([]*stream, n)
		for i := range subs {
			subs[i] = f.subscribe(app.Subscription{Topic: 7, Start: now()})
		}
		// Every subscription has read its (empty) history and the message
		// before its start. Counting their reads cannot tell: on the v2
		// layout a read can take more than one statement (an empty page
		// checks the partition catalog), so the count is reached while a
		// subscription starved by a busy machine has yet to read.
		eventually(t, patience, "every subscription past its history", func() bool {
			for _, s := range subs {
				if !s.sub.Live() {
					return false
				}
			}
			return true
		})
		// Then two polls in a row with nothing else sent: the reads made
		// before are all in the log, and taken.
		for quiet := 0; quiet < 2; {
			f.waitPolls(1, "a poll after them")
			if f.count(notPoll) == 0 {
				quiet++
			} else {
				quiet = 0
			}
		}
		return f
	}
	one, many := settle(1), settle(200)
	polls := func(f *fixture) int { return f.metrics.pollCount() }
	one.reads.Take()
	many.reads.Take()
	start, onePolls, manyPolls := time.Now(), polls(one), polls(many)
	time.Sleep(window)
	oneReads, manyReads := one.reads.Take(), many.reads.Take()
	onePolls, manyPolls = polls(one)-onePolls, polls(many)-manyPolls
	measured := time.Since(start)
	most := int(measured/interval) + 1
	for _, h := range []struct {
		n     int
		reads []read
		polls int
	}{{1, oneReads, onePolls}, {200, manyReads, manyPolls}} {
		t.Logf("%d subscriptions: %d reads, %d polls in %s", h.n, len(h.reads), h.polls, measured.Round(time.Millisecond))
		for _, r := range h.reads {
			if !r.poll {
				t.Errorf("%d subscriptions: a read other than the poll: %s", h.n, r.text)
			}
		}
		if d := len(h.reads) - h.polls; d < -1 || d > 1 {
			t.Errorf("%d subscriptions: %d reads in %d polls, want one a poll", h.n, len(h.reads), h.polls)
		}
		if h.polls > most {
			t.Errorf("%d subscriptions: %d polls in %s, more than one an interval (%d)", h.n, h.polls, measured, most)
		}
	}
}

// TestIdlePollerIsSilent: the poller sends no read while nobody
// subscribes — before the first subscription and after the last one ends —
// and answers the next subscription at once.
func TestIdlePollerIsSilent(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testIdlePollerIsSilent)
}

func testIdlePollerIsSilent(t *testing.T, st store) {
	const poll = 10 * time.Millisecond
	f := newFixture(t, st, live.Options{PollInterval: poll, SafetyCheck: time.Hour}, nil)
	f.history(7, 1, 1, now()-model.Timestamp(time.Minute))
	idle(30, poll)
	if n := f.reads.Len(); n != 0 {
		t.Fatalf("%d reads before any subscription: %v", n, f.reads.Take())
	}
	for round := range 2 {
		s := f.subscribe(app.Subscription{Topic: 7})
		consecutive(t, "history", s.take(1, patience), 7, 1)
		eventually(t, patience, "the poller polls", func() bool { return f.count(isPoll) > 0 })
		s.cancel()
		_, _ = s.end(patience)
		if n := f.hub.Subscriptions(); n != 0 {
			t.Fatalf("%d subscriptions", n)
		}
		// A poll that began before the subscription ended may still log
		// its read: wait for 5 intervals in a row without one.
		quietFor := 0
		eventually(t, patience, "the poller falls silent", func() bool {
			idle(1, poll)
			if f.reads.Len() > 0 {
				f.reads.Take()
				quietFor = 0
				return false
			}
			quietFor++
			return quietFor >= 5
		})
		idle(30, poll)
		if n := f.reads.Len(); n != 0 {
			t.Fatalf("round %d: %d reads after the last subscription ended: %v", round, n, f.reads.Take())
		}
	}
}

// TestNewTopicAfterQuietPeriod: while the only followed topic is quiet,
// another topic grows; a subscription to it from now must get its new
// messages at once, not have the poller walk (and hand it) that topic's
// whole backlog first — with a small buffer, that ended it CLIENT_TOO_SLOW.
func TestNewTopicAfterQuietPeriod(t *testing.T) {
	t.Parallel()
	onEachStore(t, true, testNewTopicAfterQuietPeriod)
}

func testNewTopicAfterQuietPeriod(t *testing.T, st store) {
	f := newFixture(t, st, live.Options{Buffer: 16, PollLimit: 20, SafetyCheck: time.Hour}, nil)
	f.history(8, 1, 1, now()-model.Timestamp(time.Minute))
	quiet := f.subscribe(app.Subscription{Topic: 8})
	quiet.take(1, patience)
	f.waitPolls(3, "polls of the quiet topic")

	// Topic 7 grows by 200 messages nobody follows.
	var backlog []row
	base := now()
	for s := int64(1); s <= 200; s++ {
		backlog = append(backlog, row{7, s, base + model.Timestamp(s)})
	}
	f.write(backlog...)
	f.waitPolls(4, "polls after the backlog")
	f.reads.Take()

	fresh := f.subscribe(app.Subscription{Topic: 7, Start: now()})
	f.waitPolls(4, "polls after the subscription")
	// The watermark moved past the backlog while nobody followed topic 7:
	// no poll walks it.
	for _, r := range f.reads.Take() {
		if r.poll && r.after < backlog[len(backlog)-1].ts {
			t.Errorf("a poll from %d, before the backlog's last message at %d", r.after, backlog[len(backlog)-1].ts)
		}
	}
	f.write(row{7, 201, now()})
	select {
	case err := <-fresh.done:
		t.Fatalf("the new subscription ended: %v", err)
	case m := <-fresh.msgs:
		consecutive(t, "after the backlog", []model.TopicMessage{m}, 7, 201)
	case <-time.After(patience):
		t.Fatalf("no message within %s", patience)
	}
	fresh.running()
	quiet.running()
}
