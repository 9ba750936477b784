package tests

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"mirrorql/model"
	"mirrorql/tests/testdb"
)

const (
	envLiveSeed = "MIRRORQL_TEST_LIVE_SEED" // overrides liveSeed
	liveSeed    = 20251123
)

// TestLiveRandom: concurrent writers commit messages to four topics in
// random transactions (1–5 messages, several topics at once), their
// commits racing so that a later sequence number, or a later consensus
// time of another topic, sometimes commits first; meanwhile 30 subscribers
// (half WebSocket, several on one connection, half SSE) with random start
// times (before all data, in the middle of the committed data, absent),
// end times (absent, in the past, ahead) and limits (absent, 0, small,
// large) follow them. Every subscriber has a limit it reaches or an end
// time the ledger passes, so every stream completes; each must then have
// received exactly what the database says: the topic's messages from the
// first at or after its start, before its end, the first `limit` of them,
// in order, no duplicate, no gap. A subscriber without a start time (the
// server's clock) must have received a consecutive run of the database's
// messages, from one at or after the time it subscribed, ending as its end
// time or limit says.
//
// The seed (MIRRORQL_TEST_LIVE_SEED) decides every choice — the driver, the
// poll interval, the writers, the subscribers — but not the interleaving of
// the commits, which is the point.
func TestLiveRandom(t *testing.T) {
	t.Parallel()
	began := time.Now()
	seed := uint64(envInt(t, envLiveSeed, liveSeed))
	rng := rand.New(rand.NewPCG(seed, 0))
	driver := "pgx"
	poll := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}[rng.IntN(3)]
	writers := 2 + rng.IntN(2)
	t.Logf("seed %d (%s=%d to repeat): driver %s, poll interval %s, %d writers", seed, envLiveSeed, seed, driver, poll, writers)

	dbURL, b := testdb.New(t)
	topics := []int64{601, 602, 603, 604}
	const other = 605 // nobody follows it: its message moves the ledger past every end time
	liveTopic(t, b, append(slices.Clone(topics), other)...)

	l := &randomLedger{topics: map[int64][]*randomMsg{}}
	// History: 80 messages a millisecond apart, ten minutes ago.
	histBase := time.Now().Add(-10 * time.Minute).UnixNano()
	var hist []randomRow
	for i := range 80 {
		hist = append(hist, l.allocate(topics[rng.IntN(len(topics))], histBase+int64(i)*1_000_000))
	}
	for i := 0; i < len(hist); i += 10 {
		if err := randomCommit(context.Background(), b, hist[i:i+10], 0); err != nil {
			t.Fatal(err)
		}
	}
	l.committed(hist)

	srv := startServer(t, dbURL, "MIRRORQL_DB_DRIVER="+driver, "MIRRORQL_LIVE_POLL_INTERVAL="+poll.String(),
		"MIRRORQL_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION=20")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The writers, from now until writeUntil.
	start := time.Now()
	writeUntil := start.Add(6 * time.Second)
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		writeErr error
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)+1))
			for {
				time.Sleep(time.Duration(20+r.IntN(100)) * time.Millisecond) // the scenario: random pauses between commits
				n := 1 + r.IntN(5)
				rows := l.allocateBefore(writeUntil, n, func() int64 { return topics[r.IntN(len(topics))] })
				if rows == nil {
					return
				}
				// Held open a while (sometimes long): another writer's
				// later rows may commit first.
				hold := time.Duration(r.IntN(15)) * time.Millisecond
				if r.IntN(8) == 0 {
					hold = time.Duration(40+r.IntN(120)) * time.Millisecond
				}
				if err := randomCommit(ctx, b, rows, hold); err != nil {
					errMu.Lock()
					writeErr = err
					errMu.Unlock()
					return
				}
				l.committed(rows)
			}
		}()
	}

	// The subscribers, launched at random times while the writers write.
	const subscribers = 30
	subs := make([]*randomSub, subscribers)
	for i := range subs {
		subs[i] = &randomSub{id: fmt.Sprint(i), at: time.Duration(rng.Int64N(int64(4500 * time.Millisecond)))}
		if i < 6 {
			subs[i].at = 0 // some before the writers begin
		}
		subs[i].sse = i%2 == 1
	}
	slices.SortFunc(subs, func(a, b *randomSub) int { return int(a.at - b.at) })
	var conn *wsClient
	onConn := 0
	for _, s := range subs {
		time.Sleep(time.Until(start.Add(s.at))) // the scenario: each subscription opens at its scheduled time
		s.choose(rng, l, topics, writeUntil)
		q := subscriptionQuery(s.args())
		s.sent = time.Now().UnixNano()
		if s.sse {
			s.events = sseSubscribe(ctx, t, srv.URL, q)
			continue
		}
		if conn == nil || onConn >= 1+rng.IntN(4) {
			conn, onConn = openWS(t, srv.URL), 0
		}
		onConn++
		s.events = conn.subscribe(s.id, q)
	}
	kinds := map[string]int{}
	for _, s := range subs {
		kinds["start "+strings.Fields(s.startHow)[0]]++
		kinds["end "+s.endHow]++
		switch {
		case s.limit > 0 && s.limit < 1000:
			kinds["small limit"]++
		case s.limit >= 1000:
			kinds["large limit"]++
		case s.limitArg != "":
			kinds["limit 0"]++
		}
		if s.sse {
			kinds["sse"]++
		}
	}
	t.Logf("subscribers: %v", kinds)
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("writer: %v", writeErr)
	}

	// Every end time has passed by the wall clock; the ledger has not:
	// no transaction is at or after any of them yet. The subscribers with a
	// limit and no end time get enough messages to reach it, and every
	// topic one more, after a pause in which nothing is committed: a
	// message the poller walked past before it was committed reaches its
	// subscribers through the gap before the next one. Then a message of a
	// topic nobody follows.
	var maxEnd int64
	for _, s := range subs {
		maxEnd = max(maxEnd, s.end)
	}
	time.Sleep(time.Until(time.Unix(0, maxEnd).Add(10 * time.Millisecond))) // the scenario: past every consensusEndTime on the wall clock
	for _, topic := range topics {
		need := 1
		for _, s := range subs {
			if s.topic != topic || s.end != 0 {
				continue
			}
			have := 0 // without a start time: maybe none of those written so far
			if s.hasStart {
				have = l.countFrom(topic, s.start)
			}
			need = max(need, int(s.limit)-have)
		}
		for need > 0 {
			n := min(need, 5)
			rows := l.allocateBefore(time.Now().Add(time.Hour), n, func() int64 { return topic })
			if err := randomCommit(ctx, b, rows, 0); err != nil {
				t.Fatal(err)
			}
			l.committed(rows)
			need -= n
		}
	}
	last := l.allocateBefore(time.Now().Add(time.Hour), 1, func() int64 { return other })
	if err := randomCommit(ctx, b, last, 0); err != nil {
		t.Fatal(err)
	}
	l.committed(last)
	lastWrite := time.Now()
	t.Logf("%d messages written (%d in the history), %d committed before an earlier message of their topic, "+
		"%d before an earlier message of another topic; writers stopped after %s",
		l.total(), len(hist), l.reorderedInTopic, l.reorderedAcross, time.Since(start).Round(time.Millisecond))

	// What the database holds, checked first for what the writers promise.
	msgs := map[int64][]randomRow{}
	rows, err := b.QueryContext(ctx, "SELECT topic_id, sequence_number, consensus_timestamp FROM topic_message ORDER BY topic_id, sequence_number")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r randomRow
		if err := rows.Scan(&r.topic, &r.seq, &r.ts); err != nil {
			t.Fatal(err)
		}
		msgs[r.topic] = append(msgs[r.topic], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for topic, ms := range msgs {
		for i, m := range ms {
			if m.seq != int64(i)+1 || (i > 0 && m.ts <= ms[i-1].ts) {
				t.Fatalf("the writers broke their promise: topic %d message %d: %+v", topic, i, m)
			}
		}
	}

	// Every stream has what ends it by now (a limit, an end time the ledger
	// has passed): the one deadline for all of them only catches a stream
	// that never ends.
	deadline := time.Now().Add(patience)
	var delivered int
	for _, s := range subs {
		got, lastEv, ended := collect(t, s.events, max(time.Until(deadline), time.Millisecond))
		delivered += len(got)
		what := s.describe()
		switch {
		case !ended:
			t.Errorf("%s: did not end; received %v", what, seqs(got))
			continue
		case len(lastEv.Errors) > 0:
			t.Errorf("%s: ended with %+v after %v", what, lastEv.Errors, seqs(got))
			continue
		case !lastEv.Complete:
			t.Errorf("%s: the stream closed without completing after %v", what, seqs(got))
			continue
		}
		received := make([]randomRow, len(got))
		for i, m := range got {
			ts, err := model.ParseTimestamp(m.ConsensusTimestamp)
			if err != nil {
				t.Fatalf("%s: timestamp %q: %v", what, m.ConsensusTimestamp, err)
			}
			received[i] = randomRow{s.topic, m.SequenceNumber, int64(ts)}
			if want := fmt.Sprintf("message %d of topic %d", m.SequenceNumber, s.topic); m.Message != want {
				t.Errorf("%s: message %d reads %q", what, m.SequenceNumber, m.Message)
			}
		}
		from := s.start
		if !s.hasStart {
			if len(received) == 0 {
				if s.end == 0 {
					t.Errorf("%s: completed with no message", what)
				}
				continue
			}
			if received[0].ts < s.sent {
				t.Errorf("%s: the first message (%d at %d) is before the subscription was sent (%d)", what, received[0].seq, received[0].ts, s.sent)
			}
			from = received[0].ts
		}
		var want []randomRow
		for _, m := range msgs[s.topic] {
			if m.ts >= from && (s.end == 0 || m.ts < s.end) && (s.limit == 0 || int64(len(want)) < s.limit) {
				want = append(want, m)
			}
		}
		if !slices.Equal(received, want) {
			t.Errorf("%s:\n received %v\n want     %v", what, rowSeqs(received), rowSeqs(want))
		}
	}
	t.Logf("%d subscribers received %d messages; every stream had ended %s after the last write, %s after the test began",
		len(subs), delivered, time.Since(lastWrite).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if t.Failed() {
		for _, s := range subs {
			t.Logf("%s", s.describe())
		}
	}
}

// randomRow is one message: its topic, sequence number and consensus time.
type randomRow struct{ topic, seq, ts int64 }

func rowSeqs(rs []randomRow) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.seq
	}
	return out
}

type randomMsg struct {
	randomRow
	committed bool
}

// randomLedger allocates messages under a mutex — sequence numbers
// consecutive per topic, consensus times growing across all topics — and
// knows which are committed.
type randomLedger struct {
	mu     sync.Mutex
	last   int64
	topics map[int64][]*randomMsg
	// Commits that came before that of an earlier message of the same
	// topic, of another topic.
	reorderedInTopic, reorderedAcross int
	open                              []int64 // consensus times allocated and not committed
}

func (l *randomLedger) allocate(topic, ts int64) randomRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.allocateLocked(topic, ts)
}

func (l *randomLedger) allocateLocked(topic, ts int64) randomRow {
	ts = max(ts, l.last+1)
	l.last = ts
	r := randomRow{topic, int64(len(l.topics[topic])) + 1, ts}
	l.topics[topic] = append(l.topics[topic], &randomMsg{randomRow: r})
	l.open = append(l.open, ts)
	return r
}

// allocateBefore allocates n messages of the topics pick chooses, at the
// wall clock, unless it is past until (nil then).
func (l *randomLedger) allocateBefore(until time.Time, n int, pick func() int64) []randomRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !now.Before(until) {
		return nil
	}
	rows := make([]randomRow, n)
	for i := range rows {
		rows[i] = l.allocateLocked(pick(), now.UnixNano())
	}
	return rows
}

// committed marks rows committed, counting the commits that overtook an
// earlier message.
func (l *randomLedger) committed(rows []randomRow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	inTopic, across := false, false
	for _, r := range rows {
		m := l.topics[r.topic][r.seq-1]
		m.committed = true
		l.open = slices.DeleteFunc(l.open, func(ts int64) bool { return ts == r.ts })
		if r.seq > 1 && !l.topics[r.topic][r.seq-2].committed {
			inTopic = true
		}
	}
	for _, ts := range l.open {
		if ts < rows[0].ts {
			across = true
		}
	}
	if inTopic {
		l.reorderedInTopic++
	} else if across {
		l.reorderedAcross++
	}
}

// committedMessage picks a committed message of topic at random (nil when
// it has none) and its predecessor's consensus time (0 for the first).
func (l *randomLedger) committedMessage(r *rand.Rand, topic int64) (*randomRow, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var done []int
	for i, m := range l.topics[topic] {
		if m.committed {
			done = append(done, i)
		}
	}
	if len(done) == 0 {
		return nil, 0
	}
	i := done[r.IntN(len(done))]
	m := l.topics[topic][i].randomRow
	var prev int64
	if i > 0 {
		prev = l.topics[topic][i-1].ts
	}
	return &m, prev
}

// frontier is the lowest consensus time allocated and not committed (or
// the next to allocate): every message before it is committed.
func (l *randomLedger) frontier() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.last + 1
	for _, ts := range l.open {
		f = min(f, ts)
	}
	return f
}

// countFrom is how many messages of topic are at or after ts.
func (l *randomLedger) countFrom(topic, ts int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.topics[topic] {
		if m.ts >= ts {
			n++
		}
	}
	return n
}

func (l *randomLedger) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ms := range l.topics {
		n += len(ms)
	}
	return n
}

// randomCommit writes rows as the importer does (each message with its
// submit transaction) in one database transaction, held open hold before
// its commit.
//
// It inserts them by topic, then consensus time: on the v2 layout every
// message upserts its (topic, partition) row of topic_message_lookup (the
// importer's listener, a trigger here), and writers that lock those rows in
// different orders deadlock. The importer is one writer and never does; the
// order within a transaction is invisible to readers, who see the commit.
func randomCommit(ctx context.Context, b *bun.DB, rows []randomRow, hold time.Duration) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(x, y randomRow) int {
		return cmp.Or(cmp.Compare(x.topic, y.topic), cmp.Compare(x.ts, y.ts))
	})
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, r := range rows {
		text := fmt.Sprintf("message %d of topic %d", r.seq, r.topic)
		if err := writeMessage(ctx, tx, liveRow{Topic: r.topic, Seq: r.seq, Ts: r.ts, Text: text}); err != nil {
			return err
		}
	}
	if hold > 0 {
		time.Sleep(hold) // the scenario: a transaction held open before its commit
	}
	return tx.Commit()
}

// randomSub is one subscriber: what it asked for and what it got.
type randomSub struct {
	id  string
	at  time.Duration // launched this long after the writers started
	sse bool

	topic    int64
	hasStart bool
	start    int64 // consensusStartTime, when hasStart
	startHow string
	end      int64 // consensusEndTime, 0 for none
	endHow   string
	limit    int64 // 0 for none
	limitArg string

	sent   int64 // the wall clock when the subscription was sent
	events <-chan liveEvent
}

// choose draws the subscription's arguments. A start time is either before
// all data or at a committed message (after its predecessor): the first
// message at or after it is then in the database already, whatever the
// writers' commits do next. A subscriber without an end time has a limit
// (the test writes enough messages for it at the end); an end time ahead
// is after every message the writers write.
func (s *randomSub) choose(r *rand.Rand, l *randomLedger, topics []int64, writeUntil time.Time) {
	s.topic = topics[r.IntN(len(topics))]
	switch k := r.IntN(10); {
	case k < 3:
		s.hasStart, s.start, s.startHow = true, 1+r.Int64N(1000), "before all data"
	case k < 8:
		m, prev := l.committedMessage(r, s.topic)
		if m == nil {
			s.hasStart, s.start, s.startHow = true, 1, "before all data (no message yet)"
			break
		}
		s.hasStart, s.start = true, m.ts
		if r.IntN(2) == 0 {
			s.start = prev + 1 + r.Int64N(m.ts-prev)
		}
		s.startHow = fmt.Sprintf("at message %d (%d)", m.seq, m.ts)
	default:
		s.startHow = "absent"
	}
	switch k := r.IntN(10); {
	case k < 4:
		s.endHow = "absent"
	case k < 6 && s.hasStart:
		// In the past: after the start, at or before a committed message,
		// and before every message not committed yet (the service takes a
		// transaction at or after the end time to mean that every message
		// before it is committed, as the importer commits in consensus
		// order).
		m, _ := l.committedMessage(r, s.topic)
		if m != nil {
			end := min(m.ts-r.Int64N(2_000_000), l.frontier())
			if end > s.start {
				s.end, s.endHow = end, "in the past"
				break
			}
		}
		fallthrough
	default:
		s.end = writeUntil.Add(time.Duration(50+r.IntN(1500)) * time.Millisecond).UnixNano()
		s.endHow = "ahead"
	}
	switch k := r.IntN(10); {
	case s.end == 0 || k < 4:
		s.limit = 1 + r.Int64N(25)
	case k < 6:
		s.limit = 1000
	case k < 7:
		s.limitArg = "limit: 0"
	}
	if s.limit > 0 {
		s.limitArg = fmt.Sprintf("limit: %d", s.limit)
	}
}

func (s *randomSub) args() string {
	args := []string{fmt.Sprintf(`topicId: "0.0.%d"`, s.topic)}
	if s.hasStart {
		args = append(args, `consensusStartTime: "`+randomTimestamp(s.start)+`"`)
	}
	if s.end != 0 {
		args = append(args, `consensusEndTime: "`+randomTimestamp(s.end)+`"`)
	}
	if s.limitArg != "" {
		args = append(args, s.limitArg)
	}
	return strings.Join(args, ", ")
}

func (s *randomSub) describe() string {
	face := "websocket"
	if s.sse {
		face = "sse"
	}
	return fmt.Sprintf("subscriber %s (%s, at +%s, topic %d, start %s, end %s %d, %q)", s.id, face,
		s.at.Round(time.Millisecond), s.topic, s.startHow, s.endHow, s.end, s.limitArg)
}

func randomTimestamp(ns int64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
