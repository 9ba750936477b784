package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
)

// BenchmarkTopicMessageLoopback measures requests per second of GraphQL's
// topicMessage against REST's by-sequence route, in one run, on the built
// service over loopback HTTP with 32 concurrent clients asking for random
// messages of one topic of the seed data set (the GraphQL query selects every
// field REST returns):
//
//	go test ./tests -run '^$' -bench TopicMessageLoopback -benchtime 20000x
func BenchmarkTopicMessageLoopback(b *testing.B) {
	dbURL, _ := testdb.New(b)
	o := seed.DefaultOptions()
	if _, err := seed.RunURL(context.Background(), dbURL, o); err != nil {
		b.Fatal(err)
	}
	srv := startServer(b, dbURL)
	topic := model.EntityID(o.TopicID(0)).String()
	maxSeq := o.TopicMessages(0)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}, Timeout: 30 * time.Second}

	restRequest := func(rng *rand.Rand) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/topics/%s/messages/%d", srv.URL, topic, 1+rng.Int64N(maxSeq)), nil)
		return req
	}
	graphqlRequest := func(rng *rand.Rand) *http.Request {
		body := fmt.Sprintf(`{"query":"query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { topicId sequenceNumber consensusTimestamp message payerAccountId runningHash runningHashVersion chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } } } }","variables":{"t":%q,"s":%d}}`,
			topic, 1+rng.Int64N(maxSeq))
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	// warm up both (connections, the pool, the database's caches) before
	// measuring either
	for _, r := range []func(*rand.Rand) *http.Request{restRequest, graphqlRequest} {
		rng := rand.New(rand.NewPCG(1, 1))
		for i := 0; i < 2000; i++ {
			if resp, err := client.Do(r(rng)); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	b.Run("REST", func(b *testing.B) { gqlLoad(b, client, 32, restRequest) })
	b.Run("GraphQL", func(b *testing.B) { gqlLoad(b, client, 32, graphqlRequest) })
	b.Run("REST-again", func(b *testing.B) { gqlLoad(b, client, 32, restRequest) })
	b.Run("GraphQL-again", func(b *testing.B) { gqlLoad(b, client, 32, graphqlRequest) })
}

// gqlLoad sends b.N requests from workers goroutines and reports req/s.
func gqlLoad(b *testing.B, client *http.Client, workers int, request func(*rand.Rand) *http.Request) {
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Do(request(rng))
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
