package tests

import (
	"bytes"
	binenc "encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashgraph/hedera-sdk-go/v2/proto/mirror"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"
)

// rawStream is one subscribeTopic call over a plain HTTP/2 connection that
// the test drives frame by frame: it takes every frame off the wire (so
// TCP never pushes back) but grants the server only the stream window it
// opened with until open is called — a client whose application stopped
// reading, as the server sees it.
type rawStream struct {
	conn net.Conn
	fr   *http2.Framer
	wmu  sync.Mutex // the framer's writes

	mu       sync.Mutex
	data     []byte // the stream's DATA, as received
	trailers map[string]string
	reset    http2.ErrCode
	ended    chan struct{}
}

// dialRaw opens subscribeTopic with q on addr, the stream's window window
// bytes.
func dialRaw(t *testing.T, addr string, window uint32, q *mirror.ConsensusTopicQuery) *rawStream {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s := &rawStream{conn: conn, fr: http2.NewFramer(conn, conn), ended: make(chan struct{})}
	s.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	body, err := proto.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", subscribeTopic},
		{":authority", addr}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	s.write(t, func() error {
		if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
			return err
		}
		if err := s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
			return err
		}
		if err := s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
		return s.fr.WriteData(1, true, grpcFrame(body))
	})
	go s.read(t)
	return s
}

func (s *rawStream) write(t *testing.T, f func() error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := f(); err != nil {
		t.Errorf("raw HTTP/2 client: %v", err)
	}
}

// read takes the frames off the wire until the stream ends; it answers
// the server's SETTINGS and PINGs, as any client does.
func (s *rawStream) read(t *testing.T) {
	defer close(s.ended)
	for {
		f, err := s.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				s.write(t, s.fr.WriteSettingsAck)
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				s.write(t, func() error { return s.fr.WritePing(true, f.Data) })
			}
		case *http2.DataFrame:
			if f.StreamID == 1 {
				s.mu.Lock()
				s.data = append(s.data, f.Data()...)
				s.mu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 1 && f.StreamEnded() {
				s.mu.Lock()
				s.trailers = map[string]string{}
				for _, h := range f.Fields {
					s.trailers[h.Name] = h.Value
				}
				s.mu.Unlock()
				return
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				s.mu.Lock()
				s.reset = f.ErrCode
				s.mu.Unlock()
				return
			}
		}
	}
}

// open grants the server a large window: the client reads again.
func (s *rawStream) open(t *testing.T) {
	s.write(t, func() error {
		if err := s.fr.WriteWindowUpdate(0, 1<<30); err != nil {
			return err
		}
		return s.fr.WriteWindowUpdate(1, 1<<30)
	})
}

// messages are the responses received so far.
func (s *rawStream) messages(t *testing.T) []*mirror.ConsensusTopicResponse {
	s.mu.Lock()
	data := bytes.Clone(s.data)
	s.mu.Unlock()
	var out []*mirror.ConsensusTopicResponse
	for len(data) >= 5 {
		n := int(binenc.BigEndian.Uint32(data[1:5]))
		if len(data) < 5+n {
			break
		}
		m := &mirror.ConsensusTopicResponse{}
		if err := proto.Unmarshal(data[5:5+n], m); err != nil {
			t.Fatalf("a response that does not parse: %v", err)
		}
		out = append(out, m)
		data = data[5+n:]
	}
	return out
}

// TestGRPCSlowConsumer: a gRPC client that stops reading while its topic
// gets many messages is ended as the mirror node ends it —
// DEADLINE_EXCEEDED "Client lags too much behind. Please retry later" —
// after the messages it was sent, which it finds once it reads again;
// another subscriber of the topic gets every message and stays.
func TestGRPCSlowConsumer(t *testing.T) {
	t.Parallel()
	const topic = 503
	// A 16-message buffer; the write timeout is beyond the test, so what
	// ends the stream is the lag, not the stalled write, however slowly a
	// loaded machine delivers the batches (as in TestLiveFaultsSlowConsumer).
	srv, addr, b := grpcServer(t, "MIRRORQL_LIVE_BUFFER=16", "MIRRORQL_LIVE_WRITE_TIMEOUT=1h")
	other := grpcGo(grpcConn(t, addr))(t, topicQuery(topic))
	// Room for a message or two: the server's writes block at once.
	slow := dialRaw(t, addr, 256, topicQuery(topic))
	waitSubscribed(t, srv, 2)

	// First one message, which both streams take: the slow stream has then
	// read its history and is live (or is a page away from it). Subscribed is not yet live: under load
	// (the v2 suite, every package at once) the slow stream could still be
	// reading its history when the commits came, and a stream reading
	// history drops what it cannot queue and reads it again from the
	// database instead of being ended.
	appendMessages(t, b, liveRow{Topic: topic})
	consecutiveTopic(t, "the other subscriber", takeTopic(t, other, 1, patience), 1)
	deadline := time.Now().Add(patience)
	for len(slow.messages(t)) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the slow stream did not get the first message")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A stream that sent it from its history reads one more page, finds
	// nothing, and is live: one statement, begun by now. Three of the
	// poller's polls, each a statement on the same database after an
	// interval, cover it at this machine's pace.
	polled(t, srv, 3)

	// Six commits of ten, each delivered (the other subscriber has it)
	// before the next: deliveries of their own, which the slow stream
	// leaves untaken while its buffer is full. (Commits one poll took
	// together would be a burst, which a stream reads again from the
	// database instead of being ended.)
	const batches, per = 6, 10
	for i := 0; i < batches; i++ {
		rows := make([]liveRow, per)
		for j := range rows {
			rows[j] = liveRow{Topic: topic}
		}
		appendMessages(t, b, rows...)
		consecutiveTopic(t, "the other subscriber", takeTopic(t, other, per, patience), uint64(i*per+2))
	}

	// The client reads again: what it was sent, then the status.
	slow.open(t)
	select {
	case <-slow.ended:
	case <-time.After(patience):
		t.Fatal("the slow stream did not end")
	}
	slow.mu.Lock()
	trailers, reset := slow.trailers, slow.reset
	slow.mu.Unlock()
	if trailers == nil {
		t.Fatalf("the slow stream was reset (%v), not ended with a status", reset)
	}
	if trailers["grpc-status"] != "4" || trailers["grpc-message"] != "Client lags too much behind. Please retry later" {
		t.Errorf("the slow stream ended %v, want DEADLINE_EXCEEDED (4) \"Client lags too much behind. Please retry later\"", trailers)
	}
	got := slow.messages(t)
	if len(got) == 0 || len(got) >= 1+batches*per {
		t.Errorf("the slow stream got %d of %d messages before its end", len(got), 1+batches*per)
	}
	consecutiveTopic(t, "the slow stream", got, 1)
	t.Logf("the slow stream got %d of %d messages, then %v", len(got), 1+batches*per, trailers)
	waitMetric(t, srv.URL, "mirrorql_live_subscriptions_ended_total", map[string]string{"reason": "client_too_slow"}, 1, patience)

	// The other one is still subscribed and gets the next message.
	waitSubscribed(t, srv, 1)
	appendMessages(t, b, liveRow{Topic: topic})
	consecutiveTopic(t, "the other, after", takeTopic(t, other, 1, patience), 1+batches*per+1)
}
