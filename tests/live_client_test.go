package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/uptrace/bun"
)

// The clients and the writer of the live tests: a real WebSocket client
// (gorilla, both GraphQL subprotocols), a real SSE client (net/http), and
// messages appended as the importer writes them.

// liveEvent is what a subscription received: one message's data, an error
// that ended it, or its completion.
type liveEvent struct {
	Data     json.RawMessage
	Errors   []liveError
	Complete bool
}

type liveError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (e liveError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// liveMessage is the selection the live tests ask for.
type liveMessage struct {
	SequenceNumber     int64  `json:"sequenceNumber"`
	ConsensusTimestamp string `json:"consensusTimestamp"`
	Message            string `json:"message"`
}

const liveSelection = `sequenceNumber consensusTimestamp message(encoding: UTF8)`

// subscriptionQuery is a topicMessages subscription with the given
// arguments (GraphQL argument syntax) and liveSelection.
func subscriptionQuery(args string) string {
	return "subscription { topicMessages(" + args + ") { " + liveSelection + " } }"
}

// wsClient is one WebSocket connection speaking graphql-transport-ws (or
// the legacy graphql-ws).
type wsClient struct {
	t      testing.TB
	conn   *websocket.Conn
	legacy bool

	mu     sync.Mutex
	subs   map[string]chan liveEvent
	closed chan struct{}
	// CloseCode is the close frame's status once the server closed.
	closeCode int
	other     []map[string]any // messages of no subscription (pings, acks)
}

func dialWS(t testing.TB, base string, subprotocol string, header http.Header) (*wsClient, error) {
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: patience}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", header)
	if err != nil {
		return nil, err
	}
	c := &wsClient{t: t, conn: conn, legacy: subprotocol == "graphql-ws", subs: map[string]chan liveEvent{}, closed: make(chan struct{})}
	conn.SetCloseHandler(func(code int, text string) error {
		c.mu.Lock()
		c.closeCode = code
		c.mu.Unlock()
		return nil
	})
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{}}); err != nil {
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	var ack map[string]any
	if err := conn.ReadJSON(&ack); err != nil {
		return nil, err
	}
	if ack["type"] != "connection_ack" {
		return nil, fmt.Errorf("connection_init answered %v", ack)
	}
	_ = conn.SetReadDeadline(time.Time{})
	go c.read()
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// openWS is dialWS that fails the test on an error.
func openWS(t testing.TB, base string) *wsClient {
	t.Helper()
	c, err := dialWS(t, base, "graphql-transport-ws", nil)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	return c
}

func (c *wsClient) read() {
	defer close(c.closed)
	for {
		var m struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := c.conn.ReadJSON(&m); err != nil {
			c.mu.Lock()
			for id, ch := range c.subs {
				close(ch)
				delete(c.subs, id)
			}
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		ch := c.subs[m.ID]
		switch {
		case m.Type == "ping":
			c.other = append(c.other, map[string]any{"type": m.Type})
			_ = c.conn.WriteJSON(map[string]any{"type": "pong"})
		case ch == nil:
			c.other = append(c.other, map[string]any{"type": m.Type, "id": m.ID})
		case m.Type == "next" || m.Type == "data":
			var resp struct {
				Data   json.RawMessage `json:"data"`
				Errors []liveError     `json:"errors"`
			}
			_ = json.Unmarshal(m.Payload, &resp)
			ch <- liveEvent{Data: resp.Data, Errors: resp.Errors}
		case m.Type == "error":
			var errs []liveError
			if json.Unmarshal(m.Payload, &errs) != nil {
				var one liveError
				_ = json.Unmarshal(m.Payload, &one)
				errs = []liveError{one}
			}
			ch <- liveEvent{Errors: errs}
			close(ch)
			delete(c.subs, m.ID)
		case m.Type == "complete":
			ch <- liveEvent{Complete: true}
			close(ch)
			delete(c.subs, m.ID)
		}
		c.mu.Unlock()
	}
}

// subscribe starts an operation; its events arrive on the channel, which is
// closed after the error or completion that ends it.
func (c *wsClient) subscribe(id, query string) <-chan liveEvent {
	ch := make(chan liveEvent, 100000)
	c.mu.Lock()
	c.subs[id] = ch
	c.mu.Unlock()
	typ := "subscribe"
	if c.legacy {
		typ = "start"
	}
	if err := c.send(map[string]any{"type": typ, "id": id, "payload": map[string]any{"query": query}}); err != nil {
		c.t.Errorf("subscribe %s: %v", id, err)
	}
	return ch
}

// stop ends an operation from the client's side.
func (c *wsClient) stop(id string) {
	typ := "complete"
	if c.legacy {
		typ = "stop"
	}
	_ = c.send(map[string]any{"type": typ, "id": id})
}

func (c *wsClient) send(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.WriteJSON(v)
}

func (c *wsClient) Close() { _ = c.conn.Close() }

func (c *wsClient) CloseCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCode
}

// sseClient opens a connection of its own for each stream, as a stream holds
// it for its life anyway: a POST is not retried on a pooled connection the
// server closed meanwhile, and on a crowded Citus run four of twenty streams
// failed with EOF, none of them reaching the server's log.
var sseClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// sseSubscribe POSTs query with Accept: text/event-stream and streams its
// events until the server completes or ctx ends; the channel is closed then.
func sseSubscribe(ctx context.Context, t testing.TB, base, query string) <-chan liveEvent {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	ch := make(chan liveEvent, 100000)
	go func() {
		defer close(ch)
		resp, err := sseClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("sse: %v", err)
			}
			return
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Errorf("sse: %d %s", resp.StatusCode, ct)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data:") && event == "next":
				var r struct {
					Data   json.RawMessage `json:"data"`
					Errors []liveError     `json:"errors"`
				}
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r)
				ch <- liveEvent{Data: r.Data, Errors: r.Errors}
			case line == "" && event == "complete":
				ch <- liveEvent{Complete: true}
				return
			}
		}
	}()
	return ch
}

// collect reads events until the stream ends (completed or failed) or
// within passes; it returns the messages and the final event.
func collect(t testing.TB, ch <-chan liveEvent, within time.Duration) (msgs []liveMessage, last liveEvent, ended bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return msgs, last, true
			}
			if ev.Complete || len(ev.Errors) > 0 {
				last = ev
				if len(ev.Errors) > 0 && ev.Data != nil && string(ev.Data) != "null" {
					t.Errorf("an event with errors and data: %s", ev.Data)
				}
				return msgs, last, true
			}
			msgs = append(msgs, decodeLive(t, ev.Data))
		case <-deadline:
			return msgs, last, false
		}
	}
}

// takeN reads exactly n messages within the time given, failing otherwise.
func takeN(t testing.TB, ch <-chan liveEvent, n int, within time.Duration) []liveMessage {
	t.Helper()
	var out []liveMessage
	for _, data := range takeEvents(t, ch, n, within) {
		out = append(out, decodeLive(t, data))
	}
	return out
}

// takeEvents reads exactly n messages' data, as received, within the time
// given, failing otherwise.
func takeEvents(t testing.TB, ch <-chan liveEvent, n int, within time.Duration) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	deadline := time.After(within)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			if !ok || ev.Complete || len(ev.Errors) > 0 {
				t.Fatalf("stream ended after %d of %d messages: %+v", len(out), n, ev)
			}
			out = append(out, ev.Data)
		case <-deadline:
			t.Fatalf("%d of %d messages within %s", len(out), n, within)
		}
	}
	return out
}

func decodeLive(t testing.TB, data json.RawMessage) liveMessage {
	var d struct {
		TopicMessages liveMessage `json:"topicMessages"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("message %s: %v", data, err)
	}
	return d.TopicMessages
}

// consecutive fails unless msgs have consecutive sequence numbers from first.
func consecutive(t testing.TB, what string, msgs []liveMessage, first int64) {
	t.Helper()
	for i, m := range msgs {
		if m.SequenceNumber != first+int64(i) {
			t.Fatalf("%s: message %d has sequence number %d, want %d (%v)", what, i, m.SequenceNumber, first+int64(i), seqs(msgs))
		}
	}
}

func seqs(msgs []liveMessage) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.SequenceNumber
	}
	return out
}

// liveRow is one message to append: Seq 0 takes the topic's next sequence
// number, Ts 0 the wall clock.
type liveRow struct {
	Topic int64
	Seq   int64
	Ts    int64
	Text  string
	// Chunk makes the row one chunk of a larger message. Its columns go in
	// with the row's INSERT, as the importer writes them: a follower polling
	// between an INSERT and a later UPDATE would see a chunk as a whole
	// message (the SDK then hands it on alone).
	Chunk *liveChunk
}

// liveChunk is a chunk's columns: its number of Total, the protobuf initial
// transaction id shared by all chunks, and running_hash_version NULL (read
// as 3).
type liveChunk struct {
	Num, Total int
	InitialTx  []byte
}

// appendMessages writes rows as the importer does: each message with its
// transaction row (ConsensusSubmitMessage, SUCCESS), all in one database
// transaction. It returns the rows as written.
func appendMessages(t testing.TB, b bun.IDB, rows ...liveRow) []liveRow {
	t.Helper()
	ctx := context.Background()
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for i := range rows {
		r := &rows[i]
		if r.Seq == 0 {
			if err := tx.NewRaw("SELECT coalesce(max(sequence_number), 0) + 1 FROM topic_message WHERE topic_id = ?", r.Topic).Scan(ctx, &r.Seq); err != nil {
				t.Fatal(err)
			}
		}
		if r.Ts == 0 {
			r.Ts = time.Now().UnixNano()
		}
		if r.Text == "" {
			r.Text = fmt.Sprintf("message %d of topic %d", r.Seq, r.Topic)
		}
		if err := writeMessage(ctx, tx, *r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// writeMessage writes r (Seq, Ts and Text given) within tx as the importer
// does: the message and its transaction row (ConsensusSubmitMessage,
// SUCCESS).
func writeMessage(ctx context.Context, tx bun.Tx, r liveRow) error {
	var num, total, version any = nil, nil, 3
	var initial []byte
	if c := r.Chunk; c != nil {
		num, total, version, initial = c.Num, c.Total, nil, c.InitialTx
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO topic_message (consensus_timestamp, message, running_hash,
		sequence_number, running_hash_version, payer_account_id, valid_start_timestamp, topic_id,
		chunk_num, chunk_total, initial_transaction_id)
		VALUES (?, ?, ?, ?, ?, 1002, ?, ?, ?, ?, ?)`, r.Ts, []byte(r.Text), bytes.Repeat([]byte{0xab}, 48), r.Seq,
		version, r.Ts-1000, r.Topic, num, total, initial); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO transaction (consensus_timestamp, type, result, payer_account_id,
		valid_start_ns, entity_id) VALUES (?, 27, 22, 1002, ?, ?)`, r.Ts, r.Ts-1000, r.Topic)
	return err
}

// liveTopic creates topic entities (type TOPIC) with no messages.
func liveTopic(t testing.TB, b bun.IDB, nums ...int64) {
	t.Helper()
	for _, n := range nums {
		if _, err := b.ExecContext(context.Background(), `INSERT INTO entity (id, num, realm, shard, type, memo, timestamp_range)
			VALUES (?, ?, 0, 0, 'TOPIC', 'live', int8range(1, null))`, n, n); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ExecContext(context.Background(), `INSERT INTO topic (id, created_timestamp, timestamp_range)
			VALUES (?, 1, int8range(1, null))`, n); err != nil {
			t.Fatal(err)
		}
	}
}
