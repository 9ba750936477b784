package consensus

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"mirrorql/app"
	"mirrorql/consensus/mirrorpb"
	"mirrorql/model"
)

// ledger knows topics 0.0.1 … 0.0.100 and one account, 0.0.200.
type ledger struct{}

func (ledger) FollowableTopic(_ context.Context, id model.EntityID) error {
	switch {
	case id.Num() == 200:
		return app.Invalid("Not a valid topic")
	case id.Num() < 1 || id.Num() > 100:
		return &app.NotFound{Message: id.String() + " does not exist"}
	}
	return nil
}

var now = time.Unix(1_700_000_000, 0)

func TestRequest(t *testing.T) {
	s := &subscriber{o: Options{Now: func() time.Time { return now }}.withDefaults()}
	nowTs := model.Timestamp(now.UnixNano())
	topic := &mirrorpb.TopicID{ShardNum: 1, RealmNum: 2, TopicNum: 3}
	ts := func(s int64, n int32) *mirrorpb.Timestamp { return &mirrorpb.Timestamp{Seconds: s, Nanos: n} }
	cases := []struct {
		name string
		q    *mirrorpb.ConsensusTopicQuery
		want app.Subscription
		err  string
	}{
		{"start absent: now", &mirrorpb.ConsensusTopicQuery{TopicID: topic},
			app.Subscription{Topic: model.NewEntityID(1, 2, 3), Start: nowTs}, ""},
		{"start epoch 0: from the first", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusStartTime: ts(0, 0)},
			app.Subscription{Topic: model.NewEntityID(1, 2, 3)}, ""},
		{"start, end, limit", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusStartTime: ts(5, 7), ConsensusEndTime: ts(6, 0), Limit: 9},
			app.Subscription{Topic: model.NewEntityID(1, 2, 3), Start: 5_000_000_007, End: 6_000_000_000, Limit: 9}, ""},
		{"end far ahead saturates", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusEndTime: ts(math.MaxInt64, 0)},
			app.Subscription{Topic: model.NewEntityID(1, 2, 3), Start: nowTs, End: math.MaxInt64}, ""},
		{"no topic", &mirrorpb.ConsensusTopicQuery{}, app.Subscription{}, "topicId: must not be null"},
		{"realm out of range", &mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{RealmNum: 1 << 16}},
			app.Subscription{}, `Invalid entity ID "0.65536.0"`},
		{"negative shard", &mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{ShardNum: -1, TopicNum: 1}},
			app.Subscription{}, `Invalid entity ID "-1.0.1"`},
		{"limit past 2^63", &mirrorpb.ConsensusTopicQuery{TopicID: topic, Limit: 1 << 63},
			app.Subscription{}, "limit must be greater than or equal to 0"},
		{"start ahead of now", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusStartTime: ts(now.Unix()+1, 0)},
			app.Subscription{}, "Start time must be before the current time"},
		{"end before start", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusStartTime: ts(5, 0), ConsensusEndTime: ts(4, 999_999_999)},
			app.Subscription{}, "End time must be after start time"},
		{"end far behind saturates", &mirrorpb.ConsensusTopicQuery{TopicID: topic, ConsensusEndTime: ts(math.MinInt64, 0)},
			app.Subscription{}, "End time must be after start time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.request(c.q)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if msg != c.err || got != c.want {
				t.Errorf("request = %+v, %q; want %+v, %q", got, msg, c.want, c.err)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	v2 := int16(2)
	num, total := int32(2), int32(3)
	payer := model.NewEntityID(0, 0, 1002)
	validStart := model.Timestamp(1_600_000_000_000_000_001)
	txID, _ := proto.Marshal(&mirrorpb.TransactionID{AccountID: &mirrorpb.AccountID{Account: &mirrorpb.AccountID_AccountNum{AccountNum: 7}}, Nonce: 4})
	cases := []struct {
		name string
		m    model.TopicMessage
		want *mirrorpb.ConsensusTopicResponse
	}{
		{"whole message, version null", model.TopicMessage{ConsensusTimestamp: 1_700_000_000_123_456_789, Message: []byte("hi"),
			RunningHash: []byte{1}, SequenceNumber: 4},
			&mirrorpb.ConsensusTopicResponse{ConsensusTimestamp: &mirrorpb.Timestamp{Seconds: 1_700_000_000, Nanos: 123_456_789},
				Message: []byte("hi"), RunningHash: []byte{1}, SequenceNumber: 4, RunningHashVersion: 3}},
		{"chunk with the importer's transaction id", model.TopicMessage{ConsensusTimestamp: 5, SequenceNumber: 1, RunningHashVersion: &v2,
			ChunkNum: &num, ChunkTotal: &total, InitialTransactionID: txID},
			&mirrorpb.ConsensusTopicResponse{ConsensusTimestamp: &mirrorpb.Timestamp{Nanos: 5}, SequenceNumber: 1, RunningHashVersion: 2,
				ChunkInfo: &mirrorpb.ConsensusMessageChunkInfo{Number: 2, Total: 3, InitialTransactionID: &mirrorpb.TransactionID{
					AccountID: &mirrorpb.AccountID{Account: &mirrorpb.AccountID_AccountNum{AccountNum: 7}}, Nonce: 4}}}},
		{"older chunk: payer and valid start", model.TopicMessage{ConsensusTimestamp: 5, SequenceNumber: 1, ChunkNum: &num,
			PayerAccountID: &payer, ValidStartTimestamp: &validStart, InitialTransactionID: []byte{0xff}},
			&mirrorpb.ConsensusTopicResponse{ConsensusTimestamp: &mirrorpb.Timestamp{Nanos: 5}, SequenceNumber: 1, RunningHashVersion: 3,
				ChunkInfo: &mirrorpb.ConsensusMessageChunkInfo{Number: 2, InitialTransactionID: &mirrorpb.TransactionID{
					AccountID:             &mirrorpb.AccountID{Account: &mirrorpb.AccountID_AccountNum{AccountNum: 1002}},
					TransactionValidStart: &mirrorpb.Timestamp{Seconds: 1_600_000_000, Nanos: 1}}}}},
		{"before the epoch", model.TopicMessage{ConsensusTimestamp: -1, SequenceNumber: 1},
			&mirrorpb.ConsensusTopicResponse{ConsensusTimestamp: &mirrorpb.Timestamp{Seconds: -1, Nanos: 999_999_999},
				SequenceNumber: 1, RunningHashVersion: 3}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, response(&c.m), protocmp.Transform()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// call POSTs body to the face's path as contentType and returns the
// response; the handler must answer before the request's second is up.
func call(t testing.TB, h http.Handler, path, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r.WithContext(ctx))
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Fatalf("%x took %v: the handler waited for something", body, took)
	}
	return w
}

func frame(b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// grpcStatus is the status of a gRPC or gRPC-Web answer: its trailers, its
// headers (trailers-only) or, for gRPC-Web, its trailer frame.
func grpcStatus(w *httptest.ResponseRecorder) string {
	res := w.Result()
	if s := res.Trailer.Get("Grpc-Status"); s != "" {
		return s
	}
	if s := res.Header.Get("Grpc-Status"); s != "" {
		return s
	}
	body := w.Body.Bytes()
	for len(body) >= 5 {
		n := int(binary.BigEndian.Uint32(body[1:5]))
		if len(body) < 5+n {
			break
		}
		if body[0]&0x80 != 0 {
			for _, line := range bytes.Split(body[5:5+n], []byte("\r\n")) {
				if k, v, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.ToLower(k)) == "grpc-status" {
					return string(bytes.TrimSpace(v))
				}
			}
		}
		body = body[5+n:]
	}
	return ""
}

func TestHandlerStatuses(t *testing.T) {
	h := New(ledger{}, Options{Now: func() time.Time { return now }})
	query := func(q *mirrorpb.ConsensusTopicQuery) []byte { b, _ := proto.Marshal(q); return frame(b) }
	path := "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic"
	cases := []struct {
		name, path string
		body       []byte
		want       string
	}{
		{"not found", path, query(&mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{TopicNum: 101}}), "5"},
		{"not a topic", path, query(&mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{TopicNum: 200}}), "3"},
		{"subscriptions off", path, query(&mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{TopicNum: 1}}), "12"},
		{"malformed", path, frame([]byte{0x0a, 0x05, 0x01}), "3"},
		{"oversized", path, frame(make([]byte, 65<<10)), "8"},
		{"unknown method", "/com.hedera.mirror.api.proto.ConsensusService/other", frame(nil), "12"},
		{"address book", "/com.hedera.mirror.api.proto.NetworkService/getNodes", frame(nil), "12"},
		{"health", "/grpc.health.v1.Health/Check", frame(nil), "0"},
	}
	for _, ct := range []string{"application/grpc", "application/grpc-web+proto"} {
		for _, c := range cases {
			w := call(t, h, c.path, ct, c.body)
			if got := grpcStatus(w); got != c.want || w.Code != http.StatusOK {
				t.Errorf("%s %s: HTTP %d, grpc-status %q, want %s", ct, c.name, w.Code, got, c.want)
			}
		}
	}
	if w := call(t, h, path, "text/plain", []byte("x")); w.Code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: HTTP %d", w.Code)
	}
}

// FuzzHandler feeds the handler random request bytes in each protocol:
// every answer is a status (never a 5xx, a panic or a hang).
func FuzzHandler(f *testing.F) {
	valid, _ := proto.Marshal(&mirrorpb.ConsensusTopicQuery{TopicID: &mirrorpb.TopicID{TopicNum: 1},
		ConsensusStartTime: &mirrorpb.Timestamp{}, ConsensusEndTime: &mirrorpb.Timestamp{Seconds: 9}, Limit: 3})
	f.Add(uint8(0), frame(valid))
	f.Add(uint8(1), frame(valid))
	f.Add(uint8(2), frame(valid))
	f.Add(uint8(0), frame([]byte{0x0a, 0x04, 0x08, 0x80, 0x08, 0x18}))
	f.Add(uint8(0), []byte{0, 0, 0, 0, 9})
	f.Add(uint8(1), []byte{1, 0, 0, 0, 2, 0x1f, 0x8b})
	h := New(ledger{}, Options{Now: func() time.Time { return now }})
	types := []string{"application/grpc", "application/grpc-web+proto", "application/connect+proto", "application/proto", "application/json"}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		ct := types[int(kind)%len(types)]
		w := call(t, h, "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic", ct, body)
		if w.Code >= 500 {
			t.Fatalf("%s %x: HTTP %d %s", ct, body, w.Code, w.Body)
		}
		if ct == types[0] || ct == types[1] {
			if s := grpcStatus(w); s == "" || s == "0" {
				t.Fatalf("%s %x: grpc-status %q (HTTP %d)", ct, body, s, w.Code)
			} else if _, err := strconv.Atoi(s); err != nil {
				t.Fatalf("grpc-status %q", s)
			}
		}
	})
}
