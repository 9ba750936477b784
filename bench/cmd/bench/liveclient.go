package main

// The clients and the writer of the live benchmark (`make bench-live`,
// live.go), adapted from tests/live_client_test.go (test files cannot be
// imported): a graphql-transport-ws client built for thousands of
// subscriptions in one process — no channel per subscription, the
// connection's reader records what arrives — and a writer that appends
// messages as the importer does.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// liveSubscription asks for the fields of the mirror node's subscribeTopic
// response; $t is the topic.
const liveSubscription = `subscription($t: EntityId!) { topicMessages(topicId: $t) { ` +
	`consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion } }`

// epoch starts the benchmark's clock: commit and receive times are
// monotonic durations since it, read in this one process.
var epoch = time.Now()

func clock() time.Duration { return time.Since(epoch) }

// liveSub is one subscription's record: the sequence numbers it received,
// in the order received, and when.
type liveSub struct {
	mu    sync.Mutex
	seqs  []int64
	at    []time.Duration
	ended string // set when the server ended it: "complete" or the error
}

func (s *liveSub) record(seq int64, at time.Duration) {
	s.mu.Lock()
	s.seqs = append(s.seqs, seq)
	s.at = append(s.at, at)
	s.mu.Unlock()
}

func (s *liveSub) end(why string) {
	s.mu.Lock()
	if s.ended == "" {
		s.ended = why
	}
	s.mu.Unlock()
}

func (s *liveSub) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seqs)
}

// take returns what was recorded and starts afresh.
func (s *liveSub) take() (seqs []int64, at []time.Duration, ended string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seqs, at, ended = s.seqs, s.at, s.ended
	s.seqs, s.at = nil, nil
	return seqs, at, ended
}

func (s *liveSub) endedWith() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// liveConn is one WebSocket speaking graphql-transport-ws.
type liveConn struct {
	conn *websocket.Conn
	wmu  sync.Mutex // writes

	mu   sync.Mutex
	subs map[string]*liveSub
	done chan struct{} // closed when the reader stops
	err  error         // why it stopped (read after done)

	pings, bad atomic.Int64
}

// dialLive opens a WebSocket on host's /graphql and completes
// connection_init. local, when set, is the source address.
func dialLive(ctx context.Context, host string, local net.IP) (*liveConn, error) {
	d := websocket.Dialer{
		Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second,
		// Small buffers: this process holds thousands of connections.
		ReadBufferSize: 2048, WriteBufferSize: 1024,
	}
	if local != nil {
		nd := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}, Timeout: 10 * time.Second}
		d.NetDialContext = nd.DialContext
	}
	conn, _, err := d.DialContext(ctx, "ws://"+host+"/graphql", nil)
	if err != nil {
		return nil, err
	}
	c := &liveConn{conn: conn, subs: map[string]*liveSub{}, done: make(chan struct{})}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{}}); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ack struct {
		Type string `json:"type"`
	}
	if err := conn.ReadJSON(&ack); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connection_init: %w", err)
	}
	if ack.Type != "connection_ack" {
		conn.Close()
		return nil, fmt.Errorf("connection_init answered %q", ack.Type)
	}
	_ = conn.SetReadDeadline(time.Time{})
	go c.read()
	return c, nil
}

// liveFrame is what parseFrame reads of a server message.
type liveFrame struct {
	typ, id string
	seq     int64  // of a "next" with data
	errMsg  string // of an "error", or a "next" with errors
}

// parseFrame reads a graphql-transport-ws message from the server.
func parseFrame(b []byte) (liveFrame, error) {
	var m struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return liveFrame{}, err
	}
	f := liveFrame{typ: m.Type, id: m.ID}
	switch m.Type {
	case "next":
		var p struct {
			Data *struct {
				TopicMessages *struct {
					SequenceNumber int64 `json:"sequenceNumber"`
				} `json:"topicMessages"`
			} `json:"data"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return f, err
		}
		switch {
		case len(p.Errors) > 0:
			f.errMsg = p.Errors[0].Message
		case p.Data == nil || p.Data.TopicMessages == nil:
			return f, errors.New("a next message without topicMessages")
		default:
			f.seq = p.Data.TopicMessages.SequenceNumber
		}
	case "error":
		f.errMsg = string(m.Payload)
		if f.errMsg == "" {
			f.errMsg = "error"
		}
	}
	return f, nil
}

func (c *liveConn) read() {
	defer close(c.done)
	var buf bytes.Buffer
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			c.err = err
			return
		}
		at := clock() // the frame's header has arrived
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			c.err = err
			return
		}
		f, err := parseFrame(buf.Bytes())
		if err != nil {
			c.bad.Add(1)
			continue
		}
		switch f.typ {
		case "ping":
			c.pings.Add(1)
			_ = c.send(map[string]any{"type": "pong"})
			continue
		case "pong", "ka":
			continue
		}
		c.mu.Lock()
		s := c.subs[f.id]
		c.mu.Unlock()
		if s == nil {
			c.bad.Add(1)
			continue
		}
		switch {
		case f.errMsg != "":
			s.end(f.errMsg)
		case f.typ == "next":
			s.record(f.seq, at)
		case f.typ == "complete":
			s.end("complete")
		default:
			c.bad.Add(1)
		}
	}
}

// subscribe starts the benchmark's subscription to topic under id.
func (c *liveConn) subscribe(id, topic string) (*liveSub, error) {
	s := &liveSub{}
	c.mu.Lock()
	c.subs[id] = s
	c.mu.Unlock()
	err := c.send(map[string]any{"type": "subscribe", "id": id,
		"payload": map[string]any{"query": liveSubscription, "variables": map[string]any{"t": topic}}})
	return s, err
}

func (c *liveConn) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

// close drops the connection (the server sees the client gone) and waits
// for the reader.
func (c *liveConn) close() {
	_ = c.conn.Close()
	<-c.done
}

// openLive opens conns connections with perConn subscriptions to topic
// each, dialing parallel at a time; sources spreads the connections' source
// addresses over 127.0.0.1 … 127.0.0.<sources>.
func openLive(ctx context.Context, host, topic string, conns, perConn, parallel, sources int) ([]*liveConn, []*liveSub, error) {
	cs := make([]*liveConn, conns)
	subs := make([]*liveSub, conns*perConn)
	errs := make(chan error, conns)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var local net.IP
			if sources > 1 {
				local = net.IPv4(127, 0, 0, byte(1+i%sources))
			}
			c, err := dialLive(ctx, host, local)
			if err != nil {
				errs <- fmt.Errorf("connection %d: %w", i, err)
				return
			}
			cs[i] = c
			for j := range perConn {
				s, err := c.subscribe(strconv.Itoa(j+1), topic)
				if err != nil {
					errs <- fmt.Errorf("connection %d, subscription %d: %w", i, j+1, err)
					return
				}
				subs[i*perConn+j] = s
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		closeLive(cs)
		return nil, nil, err
	}
	return cs, subs, nil
}

// closeLive closes connections, parallel.
func closeLive(cs []*liveConn) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, c := range cs {
		if c == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.close()
		}()
	}
	wg.Wait()
}

// ---------------------------------------------------------------------------
// The writer.

// written is one message the writer committed.
type written struct {
	seq     int64
	publish time.Duration // clock() right after PUBLISH returned (0: none)
	commit  time.Duration // clock() right after COMMIT returned
}

// liveWriter appends messages to one topic as the importer does: the
// message and its transaction row (ConsensusSubmitMessage, SUCCESS) in one
// database transaction, with the next sequence number and a consensus
// timestamp from the wall clock; with redis set, it PUBLISHes on the
// topic's channel just before COMMIT, as the importer does.
type liveWriter struct {
	conn    *pgx.Conn
	topic   int64 // encoded id
	seq     int64 // last sequence number written
	lastTs  int64
	commits int64 // transactions committed
	redis   *redis.Client
	channel string
	pubErrs int64
	pubErr  string
	rng     *rand.Rand
}

func newLiveWriter(ctx context.Context, url string, topic int64) (*liveWriter, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = "mirrorql-bench-live-writer"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	w := &liveWriter{conn: c, topic: topic, channel: "topic." + strconv.FormatInt(topic, 10), rng: rand.New(rand.NewPCG(7, 11))}
	if err := c.QueryRow(ctx, `select coalesce(max(sequence_number), 0) from topic_message where topic_id = $1`, topic).Scan(&w.seq); err != nil {
		c.Close(ctx)
		return nil, err
	}
	if err := c.QueryRow(ctx, `select coalesce(max(consensus_timestamp), 0) from transaction`).Scan(&w.lastTs); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return w, nil
}

func (w *liveWriter) close() { _ = w.conn.Close(context.Background()) }

var runningHash = bytes.Repeat([]byte{0xab}, 48)

// append commits the topic's next message.
func (w *liveWriter) append(ctx context.Context) (written, error) {
	seq := w.seq + 1
	ts := max(time.Now().UnixNano(), w.lastTs+1)
	tx, err := w.conn.Begin(ctx)
	if err != nil {
		return written{}, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	msg := fmt.Appendf(nil, "bench-live message %d of topic 0.0.%d: %s", seq, w.topic, bytes.Repeat([]byte{'x'}, 64))
	b := &pgx.Batch{}
	b.Queue(`insert into topic_message (consensus_timestamp, message, running_hash, sequence_number,
		running_hash_version, payer_account_id, valid_start_timestamp, topic_id)
		values ($1::bigint, $2::bytea, $3::bytea, $4::bigint, 3, 1002, $5::bigint, $6::bigint)`,
		ts, msg, runningHash, seq, ts-1000, w.topic)
	b.Queue(`insert into transaction (consensus_timestamp, type, result, payer_account_id, valid_start_ns, entity_id)
		values ($1::bigint, 27, 22, 1002, $2::bigint, $3::bigint)`, ts, ts-1000, w.topic)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return written{}, err
	}
	var pub time.Duration
	if w.redis != nil {
		// The importer publishes the message before its transaction
		// commits; the payload is not read by mirrorql.
		if err := w.redis.Publish(ctx, w.channel, fmt.Sprintf(`{"sequenceNumber":%d}`, seq)).Err(); err != nil {
			w.pubErrs++
			w.pubErr = err.Error()
		}
		pub = clock()
	}
	if err := tx.Commit(ctx); err != nil {
		return written{}, err
	}
	at := clock()
	w.seq, w.lastTs = seq, ts
	w.commits++
	return written{seq: seq, publish: pub, commit: at}, nil
}

// report has PostgreSQL count the writer's commits: a backend reports its
// counts when it goes idle at least a second after its last report, else
// up to 10 s later (PGSTAT_IDLE_INTERVAL), so a statement more than a
// second after the last commit makes it report them now. The statement is
// a commit too, and counted as the writer's.
func (w *liveWriter) report(ctx context.Context) error {
	if err := sleepCtx(ctx, 1100*time.Millisecond); err != nil {
		return err
	}
	if _, err := w.conn.Exec(ctx, "select 1"); err != nil {
		return err
	}
	w.commits++
	return sleepCtx(ctx, 300*time.Millisecond)
}

// run appends n messages at rate a second on average: the gaps are drawn
// uniformly from 0.5 to 1.5 periods, so that commits fall at every phase of
// the poller's interval.
func (w *liveWriter) run(ctx context.Context, n int, rate float64) ([]written, error) {
	out := make([]written, 0, n)
	period := float64(time.Second) / rate
	next := time.Now()
	for range n {
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
				return out, ctx.Err()
			case <-time.After(d):
			}
		}
		wr, err := w.append(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, wr)
		next = next.Add(time.Duration(period * (0.5 + w.rng.Float64())))
	}
	return out, nil
}
