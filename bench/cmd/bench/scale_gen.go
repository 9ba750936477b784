package main

// The mainnet-shaped data set of -scale (scale.go): N messages over
// thousands of topics, a few hot ones, from the mirror node's first
// partition month (2019-09) to now, with the transaction row the importer
// writes for each message, generated here and loaded through COPY on
// several connections at once, month by month.
//
// Every value is a function of (seed, topic, sequence number): the
// benchmark's requests are drawn from the same functions, without asking
// the database.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/tools/seed"
)

// scaleSpec is one scale data set: what its marker records.
type scaleSpec struct {
	Layout     string // "v1" or "v2"
	Messages   int64
	Topics     int
	Partitions int   // v2: monthly partitions, the last one the month after now's
	Seed       int64 // of the generated values
	// DataFrom and DataTo bound the messages' timestamps (ns): the first
	// partition's month to the day the data set was planned (truncated to
	// the day so that a marker written today matches tomorrow's plan only
	// through the marker, not through the clock).
	DataFrom, DataTo int64
	Version          int // of the generator: a change of the rows changes it
}

// scaleGenVersion changes whenever the generated rows change.
const scaleGenVersion = 3

// tsClasses is the number of timestamp classes: topic i's messages all
// have consensus_timestamp ≡ i (mod tsClasses), so no two topics ever share
// a timestamp (a power of two above every topic index).
func (s scaleSpec) tsClasses() int64 {
	k := int64(1)
	for k <= int64(s.Topics) {
		k <<= 1
	}
	return k
}

// newScaleSpec: data from the first of the month that makes parts monthly
// partitions end with the month after now's (88 for 2019-09 at the end of
// 2026, as mainnet's v2 database), to the start of today.
func newScaleSpec(layout string, messages int64, topics, parts int, now time.Time) scaleSpec {
	now = now.UTC()
	last := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	first := last.AddDate(0, -(parts - 1), 0)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return scaleSpec{Layout: layout, Messages: messages, Topics: topics, Partitions: parts, Seed: 7,
		DataFrom: first.UnixNano(), DataTo: today.UnixNano(), Version: scaleGenVersion}
}

func (s scaleSpec) firstMonth() time.Time { return time.Unix(0, s.DataFrom).UTC() }
func (s scaleSpec) lastMonth() time.Time {
	return s.firstMonth().AddDate(0, s.Partitions-1, 0)
}

// The marker of a loaded set is its database's comment: markerPrefix and
// the spec as JSON, a newline, and what the load took (scaleLoad) as JSON.
const markerPrefix = "mirrorql bench scale "

func (s scaleSpec) fingerprint() string {
	b, _ := json.Marshal(s)
	return markerPrefix + string(b)
}

// sameSet: a set loaded with spec o can stand for s: the same rows but for
// the day the data ends (a set loaded last month is kept).
func (s scaleSpec) sameSet(o scaleSpec) bool {
	s.DataFrom, s.DataTo, o.DataFrom, o.DataTo = 0, 0, 0, 0
	return s == o
}

// parseScaleMarker reads a marker.
func parseScaleMarker(comment string) (scaleSpec, scaleLoad, bool) {
	var (
		spec scaleSpec
		load scaleLoad
	)
	first, rest, ok := strings.Cut(comment, "\n")
	if !ok || !strings.HasPrefix(first, markerPrefix) {
		return spec, load, false
	}
	if json.Unmarshal([]byte(strings.TrimPrefix(first, markerPrefix)), &spec) != nil ||
		json.Unmarshal([]byte(rest), &load) != nil {
		return spec, load, false
	}
	return spec, load, true
}

// hotShares are the hot topics' shares of the messages (topics 0.0.2001,
// 2002, 2003): 10M, 6M and 5M of 50M.
var hotShares = []float64{0.20, 0.12, 0.10}

// scaleTopic is one topic's messages: n of them, message seq (1-based) at
// base + (seq-1)·period + a jitter of whole classes below period.
type scaleTopic struct {
	id           int64
	n            int64
	base, period int64
}

// scalePlan is the spec's topics and their message counts.
type scalePlan struct {
	spec   scaleSpec
	topics []scaleTopic
	cum    []int64 // cum[i]: messages of topics before i
	hash   func(tag, a, b uint64) uint64
	k      int64
	so     seed.Options // the seed's options for the other tables (entities, topics)
}

func smix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func newScalePlan(s scaleSpec) (*scalePlan, error) {
	if s.Topics < len(hotShares)+1 || s.Messages < int64(s.Topics)*2 {
		return nil, fmt.Errorf("scale: %d messages over %d topics", s.Messages, s.Topics)
	}
	p := &scalePlan{spec: s, k: s.tsClasses()}
	sd := smix(uint64(s.Seed) ^ 0x7363616c65)
	p.hash = func(tag, a, b uint64) uint64 { return smix(smix(smix(sd^tag)^a) ^ b) }
	so := seed.DefaultOptions()
	so.Topics, so.MessagesPerTopic, so.HotTopicMessages, so.Schedules = s.Topics, 0, 0, 100
	// topics created (one a minute) from the first partition's start, as on
	// mainnet (2019-09): v2's partitions are closed, the importer's, and
	// hold no row before it
	so.BaseTimestamp = s.DataFrom
	p.so = so

	counts := make([]int64, s.Topics)
	var hot int64
	for i, sh := range hotShares {
		counts[i] = int64(float64(s.Messages) * sh)
		hot += counts[i]
	}
	rest := s.Messages - hot
	others := s.Topics - len(hotShares)
	minN := min(int64(100), rest/int64(2*others))
	spread := rest - minN*int64(others)
	// The others: a Zipf-like tail over a floor of minN each.
	w := make([]float64, others)
	var sum float64
	for j := range w {
		w[j] = 1 / math.Pow(float64(j+20), 1.2)
		sum += w[j]
	}
	var given int64
	for j := range w {
		c := int64(float64(spread) * w[j] / sum)
		counts[len(hotShares)+j] = minN + c
		given += c
	}
	for j := 0; given < spread; j = (j + 1) % others {
		counts[len(hotShares)+j]++
		given++
	}
	span := s.DataTo - s.DataFrom
	p.topics = make([]scaleTopic, s.Topics)
	p.cum = make([]int64, s.Topics+1)
	for i := range p.topics {
		start, end := s.DataFrom, s.DataTo
		if i >= len(hotShares) {
			// topics start over the years; some go quiet
			u1 := float64(p.hash(1, uint64(i), 0)%1_000_000) / 1e6
			u2 := float64(p.hash(2, uint64(i), 0)%1_000_000) / 1e6
			start = s.DataFrom + int64(u1*0.85*float64(span))
			end = start + int64(float64(s.DataTo-start)*(0.3+0.7*u2))
		}
		base := (start+p.k-1)/p.k*p.k + int64(i)
		period := (end - base - p.k) / (counts[i] * p.k) * p.k
		if period < p.k {
			return nil, fmt.Errorf("scale: topic %d: %d messages do not fit its window", i, counts[i])
		}
		p.topics[i] = scaleTopic{id: so.TopicID(i), n: counts[i], base: base, period: period}
		p.cum[i+1] = p.cum[i] + counts[i]
	}
	return p, nil
}

// ts is the consensus timestamp of message seq of topic i.
func (p *scalePlan) ts(i int, seq int64) int64 {
	t := &p.topics[i]
	j := int64(p.hash(3, uint64(i), uint64(seq)) % uint64(t.period/p.k))
	return t.base + (seq-1)*t.period + j*p.k
}

// message k (0 ≤ k < Messages) in topic order: its topic and sequence number.
func (p *scalePlan) message(k int64) (int, int64) {
	i := sort.Search(len(p.topics), func(i int) bool { return p.cum[i+1] > k })
	return i, k - p.cum[i] + 1
}

// firstSeq is topic i's first sequence number at or after ts.
func (p *scalePlan) firstSeq(i int, ts int64) int64 {
	t := &p.topics[i]
	s := int64(1)
	if ts > t.base {
		s = (ts-t.base)/t.period + 1
	}
	for s <= t.n && p.ts(i, s) < ts {
		s++
	}
	return s
}

// ---------------------------------------------------------------------------
// Rows.

// payload bytes: messages, running hashes and transaction hashes are cut
// from these (no compression applies to values this short).
var scaleText, scaleBinary = func() ([]byte, []byte) {
	const letters = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}\":,."
	t, b := make([]byte, 1<<16), make([]byte, 1<<16)
	x := uint64(99)
	for i := range t {
		x = smix(x + 0x9e3779b97f4a7c15)
		t[i], b[i] = letters[x%uint64(len(letters))], byte(x>>32)
	}
	return t, b
}()

// monthStream is the messages with timestamps in [lo, hi), in timestamp
// order: a heap merge of the topics' streams.
type monthStream struct {
	p       *scalePlan
	hi      int64
	heap    []int32
	seq, at []int64 // per topic: next sequence number and its timestamp
	// the current message
	topic int
	s, ts int64
}

func newMonthStream(p *scalePlan, lo, hi int64) *monthStream {
	m := &monthStream{p: p, hi: hi, seq: make([]int64, len(p.topics)), at: make([]int64, len(p.topics))}
	for i, t := range p.topics {
		if t.base >= hi || t.base+t.n*t.period <= lo {
			continue
		}
		s := p.firstSeq(i, lo)
		if s > t.n {
			continue
		}
		if ts := p.ts(i, s); ts < hi {
			m.seq[i], m.at[i] = s, ts
			m.heap = append(m.heap, int32(i))
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

func (m *monthStream) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.at[h[r]] < m.at[h[l]] {
			c = r
		}
		if m.at[h[c]] >= m.at[h[i]] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (m *monthStream) next() bool {
	if len(m.heap) == 0 {
		return false
	}
	i := int(m.heap[0])
	m.topic, m.s, m.ts = i, m.seq[i], m.at[i]
	m.seq[i]++
	if m.seq[i] <= m.p.topics[i].n {
		m.at[i] = m.p.ts(i, m.seq[i])
	}
	if m.seq[i] > m.p.topics[i].n || m.at[i] >= m.hi {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	m.down(0)
	return true
}

var scaleMessageColumns = []string{"consensus_timestamp", "message", "running_hash", "sequence_number",
	"running_hash_version", "payer_account_id", "topic_id"}

var scaleTransactionColumns = []string{"consensus_timestamp", "type", "result", "payer_account_id",
	"valid_start_ns", "valid_duration_seconds", "node_account_id", "entity_id", "max_fee", "charged_tx_fee",
	"transaction_hash", "scheduled", "nonce", "index"}

// scaleRows is a CopyFromSource of topic_message or transaction rows.
type scaleRows struct {
	m      *monthStream
	tx     bool
	n      int64
	values []any

	ts, seq, payer, topic, validStart, dur, node, maxFee, charged pgtype.Int8
	version, typ, result                                          pgtype.Int2
	nonce, index                                                  pgtype.Int4
	scheduled                                                     pgtype.Bool
	msg, hash                                                     bytesArg
}

// bytesArg passes a slice of the payload buffers to COPY.
type bytesArg struct{ b []byte }

func (v *bytesArg) BytesValue() ([]byte, error) { return v.b, nil }

func newScaleRows(m *monthStream, tx bool) *scaleRows {
	r := &scaleRows{m: m, tx: tx}
	if tx {
		r.values = []any{&r.ts, &r.typ, &r.result, &r.payer, &r.validStart, &r.dur, &r.node, &r.topic, &r.maxFee,
			&r.charged, &r.hash, &r.scheduled, &r.nonce, &r.index}
		r.typ, r.result = pgtype.Int2{Int16: seed.TypeConsensusSubmitMessage, Valid: true}, pgtype.Int2{Int16: seed.ResultSuccess, Valid: true}
		r.dur, r.maxFee = pgtype.Int8{Int64: 120, Valid: true}, pgtype.Int8{Int64: 100_000_000, Valid: true}
		r.scheduled, r.nonce = pgtype.Bool{Valid: true}, pgtype.Int4{Valid: true}
	} else {
		r.values = []any{&r.ts, &r.msg, &r.hash, &r.seq, &r.version, &r.payer, &r.topic}
		r.version = pgtype.Int2{Int16: 3, Valid: true}
	}
	return r
}

func (r *scaleRows) Next() bool {
	if !r.m.next() {
		return false
	}
	m, p := r.m, r.m.p
	h := p.hash(4, uint64(m.topic), uint64(m.s))
	r.n++
	r.ts = pgtype.Int8{Int64: m.ts, Valid: true}
	r.topic = pgtype.Int8{Int64: p.topics[m.topic].id, Valid: true}
	r.payer = pgtype.Int8{Int64: p.so.AccountID(int(h>>8) % seed.Accounts), Valid: true}
	off := int(h >> 20 % (1<<16 - 1100))
	if r.tx {
		r.validStart = pgtype.Int8{Int64: m.ts - 2_000_000_000 - int64(h>>24%8_000_000_000), Valid: true}
		r.node = pgtype.Int8{Int64: p.so.EntityID(3 + int64(h>>40%7)), Valid: true}
		r.charged = pgtype.Int8{Int64: 60_000 + int64(h>>44%40_000), Valid: true}
		r.index = pgtype.Int4{Int32: int32(h >> 58), Valid: true}
		r.hash.b = scaleBinary[off : off+48]
		return true
	}
	r.seq = pgtype.Int8{Int64: m.s, Valid: true}
	// sizes: 55% short text, 35% JSON-sized text, 8% binary, 2% a full
	// 1,024-byte chunk: 121 bytes on average
	var n int
	switch c := h % 100; {
	case c < 55:
		n = 20 + int(h>>50%80)
		r.msg.b = scaleText[off : off+n]
	case c < 90:
		n = 100 + int(h>>50%150)
		r.msg.b = scaleText[off : off+n]
	case c < 98:
		n = 30 + int(h>>50%100)
		r.msg.b = scaleBinary[off : off+n]
	default:
		r.msg.b = scaleText[off : off+1024]
	}
	o2 := int(h >> 8 % (1<<16 - 64))
	r.hash.b = scaleBinary[o2 : o2+48]
	return true
}

func (r *scaleRows) Values() ([]any, error) { return r.values, nil }
func (r *scaleRows) Err() error             { return nil }

// loadMessages copies the plan's messages and their transactions into the
// database at url, month by month, on conns connections at once: each job
// is one month of one table, in its own transaction. progress is called
// after each job with the rows copied so far.
func loadMessages(ctx context.Context, url string, p *scalePlan, conns int, progress func(rows int64)) error {
	type job struct {
		lo, hi int64
		tx     bool
	}
	var jobs []job
	for m := p.spec.firstMonth(); m.UnixNano() < p.spec.DataTo; m = m.AddDate(0, 1, 0) {
		lo, hi := max(m.UnixNano(), p.spec.DataFrom), min(m.AddDate(0, 1, 0).UnixNano(), p.spec.DataTo)
		jobs = append(jobs, job{lo, hi, false}, job{lo, hi, true})
	}
	ch := make(chan job)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		total int64
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				fail(err)
				return
			}
			defer c.Close(context.WithoutCancel(ctx))
			if _, err := c.Exec(ctx, "set synchronous_commit = off"); err != nil {
				fail(err)
				return
			}
			for j := range ch {
				table := "topic_message"
				cols := scaleMessageColumns
				if j.tx {
					table, cols = "transaction", scaleTransactionColumns
				}
				rows := newScaleRows(newMonthStream(p, j.lo, j.hi), j.tx)
				n, err := c.CopyFrom(ctx, pgx.Identifier{table}, cols, rows)
				if err != nil {
					fail(fmt.Errorf("copy %s %s: %w", table, time.Unix(0, j.lo).UTC().Format("2006-01"), err))
					return
				}
				if n != rows.n {
					fail(fmt.Errorf("copy %s: %d rows of %d", table, n, rows.n))
					return
				}
				mu.Lock()
				total += n
				t := total
				mu.Unlock()
				if progress != nil {
					progress(t)
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if first != nil {
		return first
	}
	if total != 2*p.spec.Messages {
		return fmt.Errorf("copied %d rows, planned %d", total, 2*p.spec.Messages)
	}
	return ctx.Err()
}

// ---------------------------------------------------------------------------
// Indexes after the load.

// tableIndexes are the unique/primary-key constraints and the other
// indexes of a table, as DDL that re-creates them.
type droppedIndex struct {
	drop, create string
	table        string
}

// dropIndexes drops the constraints and indexes of tables and returns what
// re-creates them.
func dropIndexes(ctx context.Context, c *pgx.Conn, tables ...string) ([]droppedIndex, error) {
	var out []droppedIndex
	for _, t := range tables {
		rows, err := c.Query(ctx, `select 'alter table '||conrelid::regclass||' drop constraint '||quote_ident(conname),
				'alter table '||conrelid::regclass||' add constraint '||quote_ident(conname)||' '||pg_get_constraintdef(oid)
			from pg_constraint where conrelid = $1::regclass and contype in ('p', 'u')
			union all
			select 'drop index '||i.indexrelid::regclass, pg_get_indexdef(i.indexrelid)
			from pg_index as i where i.indrelid = $1::regclass
			and not exists (select 1 from pg_constraint as k where k.conindid = i.indexrelid)`, t)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			d := droppedIndex{table: t}
			if err := rows.Scan(&d.drop, &d.create); err != nil {
				rows.Close()
				return nil, err
			}
			// a partitioned table's index, re-created on every partition
			d.create = strings.Replace(d.create, " ON ONLY ", " ON ", 1)
			out = append(out, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	for _, d := range out {
		if _, err := c.Exec(ctx, d.drop); err != nil {
			return nil, fmt.Errorf("%s: %w", d.drop, err)
		}
	}
	return out, nil
}

// createIndexes runs the DDL on conns connections at once.
func createIndexes(ctx context.Context, url string, ddl []droppedIndex, conns int) error {
	ch := make(chan droppedIndex, len(ddl))
	for _, d := range ddl {
		ch <- d
	}
	close(ch)
	errs := make(chan error, conns)
	for range conns {
		go func() {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.WithoutCancel(ctx))
			if _, err := c.Exec(ctx, "set maintenance_work_mem = '1GB'"); err != nil {
				errs <- err
				return
			}
			for d := range ch {
				t := time.Now()
				if _, err := c.Exec(ctx, d.create); err != nil {
					errs <- fmt.Errorf("%s: %w", d.create, err)
					return
				}
				log.Printf("  %s (%v)", d.create, time.Since(t).Round(time.Second))
			}
			errs <- nil
		}()
	}
	var err error
	for range conns {
		err = errors.Join(err, <-errs)
	}
	return err
}
