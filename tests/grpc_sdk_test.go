package tests

import (
	"strings"
	"sync"
	"testing"
	"time"

	hedera "github.com/hashgraph/hedera-sdk-go/v2"
	"google.golang.org/grpc/status"
)

// The official Go SDK's TopicMessageQuery against the service, unchanged:
// pointed at the gRPC listener as at a mirror node's port 5600.

// sdkFollower is a TopicMessageQuery's subscription and what it received.
type sdkFollower struct {
	mu      sync.Mutex
	msgs    []hedera.TopicMessage
	retries int
	failed  *status.Status
	done    bool
	arrived chan struct{}
}

// sdkSubscribe follows topic num with the SDK on the mirror node at addr;
// start nil: the SDK's default (from the first message).
func sdkSubscribe(t *testing.T, addr string, num uint64, start *time.Time) *sdkFollower {
	t.Helper()
	client := hedera.ClientForNetwork(map[string]hedera.AccountID{})
	client.SetMirrorNetwork([]string{addr})
	t.Cleanup(func() { _ = client.Close() })
	f := &sdkFollower{arrived: make(chan struct{}, 1024)}
	q := hedera.NewTopicMessageQuery().SetTopicID(hedera.TopicID{Topic: num}).
		SetErrorHandler(func(s status.Status) {
			f.mu.Lock()
			f.failed = &s
			f.mu.Unlock()
		}).
		SetCompletionHandler(func() {
			f.mu.Lock()
			f.done = true
			f.mu.Unlock()
		}).
		SetRetryHandler(func(err error) bool {
			f.mu.Lock()
			f.retries++
			f.mu.Unlock()
			return true
		})
	if start != nil {
		q.SetStartTime(*start)
	}
	h, err := q.Subscribe(client, func(m hedera.TopicMessage) {
		f.mu.Lock()
		f.msgs = append(f.msgs, m)
		f.mu.Unlock()
		f.arrived <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Unsubscribe)
	return f
}

// wait waits until the follower holds n messages.
func (f *sdkFollower) wait(t *testing.T, n int, within time.Duration) []hedera.TopicMessage {
	t.Helper()
	deadline := time.After(within)
	for {
		f.mu.Lock()
		got, failed := append([]hedera.TopicMessage(nil), f.msgs...), f.failed
		f.mu.Unlock()
		if failed != nil {
			t.Fatalf("the SDK gave up: %v %q", failed.Code(), failed.Message())
		}
		if len(got) >= n {
			return got
		}
		select {
		case <-f.arrived:
		case <-deadline:
			t.Fatalf("the SDK received %d of %d messages within %s", len(got), n, within)
		}
	}
}

func sdkSeqs(msgs []hedera.TopicMessage) []uint64 {
	var out []uint64
	for _, m := range msgs {
		out = append(out, m.SequenceNumber)
	}
	return out
}

// TestGRPCSDK: history into live, chunked messages reassembled, a topic
// created after the subscription started found by the SDK's retry, and a
// connection idle for 60 s under the SDK's 10 s pings that still delivers.
func TestGRPCSDK(t *testing.T) {
	t.Parallel()
	srv, addr, b := grpcServer(t)

	t.Run("history into live, chunks", func(t *testing.T) {
		t.Parallel()
		f := sdkSubscribe(t, addr, 501, nil) // the SDK's default: from epoch 0
		history := f.wait(t, 5, patience)
		appendMessages(t, b, liveRow{Topic: 501})
		insertChunks(t, b, 501, 3, time.Now().Add(-time.Minute).UnixNano())
		appendMessages(t, b, liveRow{Topic: 501})
		all := f.wait(t, 8, patience)
		if got := sdkSeqs(all); len(got) != 8 || got[0] != 1 || got[5] != 6 || got[6] != 9 || got[7] != 10 {
			t.Fatalf("sequence numbers %v (history %v)", got, sdkSeqs(history))
		}
		whole := all[6]
		if string(whole.Contents) != "part 1 of 3;part 2 of 3;part 3 of 3;" || len(whole.Chunks) != 3 {
			t.Errorf("the chunked message as the SDK put it together: %q in %d chunks", whole.Contents, len(whole.Chunks))
		}
	})

	t.Run("topic created after subscribing", func(t *testing.T) {
		t.Parallel()
		start := time.Now().Add(-time.Second)
		f := sdkSubscribe(t, addr, 777, &start)
		// NOT_FOUND, retried: the topic is created once the SDK has
		// retried, however long its first attempt took to reach the server.
		for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Millisecond) {
			f.mu.Lock()
			retries := f.retries
			f.mu.Unlock()
			if retries > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the SDK did not retry within %s of subscribing to a topic that is not there", patience)
			}
		}
		liveTopic(t, b, 777)
		appendMessages(t, b, liveRow{Topic: 777})
		m := f.wait(t, 1, patience)
		if m[0].SequenceNumber != 1 {
			t.Errorf("first message %d", m[0].SequenceNumber)
		}
		f.mu.Lock()
		retries := f.retries
		f.mu.Unlock()
		if retries == 0 {
			t.Errorf("the SDK found the topic without a retry: was it there before?")
		}
	})

	t.Run("idle 60 s", func(t *testing.T) {
		t.Parallel()
		f := sdkSubscribe(t, addr, 503, nil)
		time.Sleep(60 * time.Second)
		appendMessages(t, b, liveRow{Topic: 503})
		f.wait(t, 1, patience)
		f.mu.Lock()
		retries := f.retries
		f.mu.Unlock()
		if retries != 0 {
			t.Errorf("the SDK resubscribed %d times in 60 s of quiet", retries)
		}
		if strings.Contains(srv.logs.String(), "too_many_pings") {
			t.Errorf("the server complained about the SDK's pings")
		}
	})
}
