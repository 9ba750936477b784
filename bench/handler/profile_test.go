package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"mirrorql/config"
	"mirrorql/db"
)

// The benchmarks profile the service's request path in process (Echo chain,
// handlers, query layer, driver) against a seeded benchmark database:
//
//	MIRRORQL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/mirrorql_bench?sslmode=disable \
//	go test ./bench/handler -run '^$' -bench BySequence -cpuprofile cpu.out -memprofile mem.out
//
// PostgreSQL's own time is in its processes, not in these profiles: what
// they show is what the service spends per request. `make bench` runs them.

const hotTopic = "0.0.2001"

// benchTopics is how many topics (from 0.0.2001) the random-topic routes
// draw from: 100 in make bench's data set; MIRRORQL_BENCH_TOPICS for
// another (10000 in bench-scale's).
var benchTopics = func() int {
	n, err := strconv.Atoi(envOr("MIRRORQL_BENCH_TOPICS", "100"))
	if err != nil || n < 1 {
		return 100
	}
	return n
}()

// hotMessages is how many messages the hot topic has: 500,000 in make
// bench's data set; MIRRORQL_BENCH_HOT_MESSAGES for another (400000 in
// bench-scale-pair's 2M).
var hotMessages = func() int {
	n, err := strconv.Atoi(envOr("MIRRORQL_BENCH_HOT_MESSAGES", "500000"))
	if err != nil || n < 101 {
		return 500_000
	}
	return n
}()

func open(b *testing.B) *db.DB {
	url := os.Getenv("MIRRORQL_BENCH_DATABASE_URL")
	if url == "" {
		b.Skip("MIRRORQL_BENCH_DATABASE_URL is not set (a database seeded by `make bench`)")
	}
	d, err := db.Open(db.Options{URL: url, Prepare: true, PoolSize: 16,
		Coalesce: config.Defaults().DBCoalesce})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	// as the service does at start: on the v2 layout, its partitions
	if _, err := d.LearnLayout(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		b.Fatal(err)
	}
	return d
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// discard is a ResponseWriter that keeps nothing, so the allocation profile
// shows the service's allocations rather than a recorder's.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

func run(b *testing.B, path func(r *rand.Rand) string) {
	runRequests(b, func(r *rand.Rand) *http.Request { return httptest.NewRequest(http.MethodGet, path(r), nil) })
}

func runRequests(b *testing.B, request func(r *rand.Rand) *http.Request) {
	runRequestsWith(b, nil, request)
}

// runRequestsWith is runRequests against a service with the default
// settings changed by edit (nil: none).
func runRequestsWith(b *testing.B, edit func(*config.Config), request func(r *rand.Rand) *http.Request) {
	e := NewWith(open(b), nil, edit)
	var seed atomic.Uint64
	var failed atomic.Int64
	b.ReportAllocs()
	// 32 × GOMAXPROCS (2 here) = 64 requests in flight, as in the 64-connection phases.
	b.SetParallelism(32)
	stop := samplePeaks(b)
	defer stop()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(seed.Add(1), 7))
		w := &discard{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			w.code = 200
			e.ServeHTTP(w, request(r))
			if w.code != 200 {
				failed.Add(1)
			}
		}
	})
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed", n)
	}
}

func BenchmarkBySequence(b *testing.B) {
	run(b, func(r *rand.Rand) string {
		return fmt.Sprintf("/api/v1/topics/%s/messages/%d", hotTopic, 1+r.IntN(hotMessages))
	})
}

func BenchmarkList25(b *testing.B) {
	run(b, func(r *rand.Rand) string {
		return fmt.Sprintf("/api/v1/topics/0.0.%d/messages?limit=25", 2001+r.IntN(benchTopics))
	})
}

func BenchmarkListGt100(b *testing.B) {
	run(b, func(r *rand.Rand) string {
		return fmt.Sprintf("/api/v1/topics/%s/messages?sequencenumber=gt:%d&limit=100", hotTopic, r.IntN(hotMessages-100))
	})
}

// BenchmarkTopic is REST topic details (rest-java's route) of a random topic
// of the 100, as `make bench` drives it.
func BenchmarkTopic(b *testing.B) {
	run(b, func(r *rand.Rand) string { return fmt.Sprintf("/api/v1/topics/0.0.%d", 2001+r.IntN(100)) })
}

// BenchmarkSchedule is REST schedule by id of a random one of the benchmark
// data set's 20,000 schedules (0.0.3001 on).
func BenchmarkSchedule(b *testing.B) {
	run(b, func(r *rand.Rand) string { return fmt.Sprintf("/api/v1/schedules/0.0.%d", 3001+r.IntN(20_000)) })
}

// graphQL is a POST /graphql of query with variables, as the load test sends.
func graphQL(query string, vars map[string]any) *http.Request {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

const (
	gqlMessageQuery = `query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { ` + gqlMessageFields + ` } }`
	gqlPageQuery    = `query($t: EntityId!) { topicMessages(topicId: $t, first: 100) { nodes { sequenceNumber topic { id memo } } } }`
	// gqlMessageFields are the fields of a message REST returns.
	gqlMessageFields = `consensusTimestamp topicId sequenceNumber message runningHash runningHashVersion payerAccountId ` +
		`chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }`
	// gqlListGt100Query is BenchmarkListGt100's page with the fields REST
	// returns, and pageInfo for REST's links.next.
	gqlListGt100Query = `query($t: EntityId!, $gt: Long!) { topicMessages(topicId: $t, first: 100, sequenceNumber: {gt: $gt}) { ` +
		`nodes { ` + gqlMessageFields + ` } pageInfo { hasNextPage endCursor } } }`
	// gqlTopicPageQuery is the same page nested under its topic, with the
	// topic's own fields.
	gqlTopicPageQuery = `query($t: EntityId!, $gt: Long!) { topic(id: $t) { ` + gqlTopicFields + ` ` +
		`messages(sequenceNumber: {gt: $gt}, first: 100) { nodes { ` + gqlMessageFields + ` } pageInfo { hasNextPage endCursor } } } }`
	gqlTopicFields = `id memo deleted createdTimestamp timestamp { from to } adminKey { type key } submitKey { type key } ` +
		`autoRenewAccountId autoRenewPeriod`
	// gqlTopicsQuery is the 100 topics with the fields REST's topic details
	// return.
	gqlTopicsQuery = `{ topics(first: 100) { nodes { id memo deleted createdTimestamp timestamp { from to } ` +
		`adminKey { type key } submitKey { type key } feeScheduleKey { type key } feeExemptKeyList { type key } ` +
		`autoRenewAccountId autoRenewPeriod customFees { createdTimestamp fixedFees { amount collectorAccountId denominatingTokenId } } } } }`
	// gqlSchedulesQuery is BenchmarkSchedulesGt100's page with the fields
	// REST returns.
	gqlSchedulesQuery = `query($gt: EntityId!) { schedules(first: 100, scheduleId: {gt: $gt}) { nodes { id adminKey { type key } ` +
		`consensusTimestamp creatorAccountId payerAccountId deleted executedTimestamp expirationTime memo ` +
		`transactionBody waitForExpiry signatures { consensusTimestamp publicKeyPrefix signature type } } } }`
	// gqlActivityQuery is the activity route's query; its window is the hot
	// topic's history (BenchmarkGraphQLActivity reads it from the database).
	gqlActivityQuery = `query($t: EntityId!, $from: Timestamp!, $to: Timestamp!, $b: Int!) { topic(id: $t) { ` +
		`activity(from: $from, to: $to, buckets: $b) { messages } } }`
)

func BenchmarkGraphQLMessage(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(gqlMessageQuery, map[string]any{"t": hotTopic, "s": 1 + r.IntN(500_000)})
	})
}

func BenchmarkGraphQLPage(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(gqlPageQuery, map[string]any{"t": fmt.Sprintf("0.0.%d", 2001+r.IntN(benchTopics))})
	})
}

// BenchmarkGraphQLListGt100 is BenchmarkListGt100's page through GraphQL,
// with the fields REST returns.
func BenchmarkGraphQLListGt100(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(gqlListGt100Query, map[string]any{"t": hotTopic, "gt": r.IntN(hotMessages - 100)})
	})
}

// BenchmarkGraphQLTopicPage is BenchmarkGraphQLListGt100's page nested
// under its topic (topic(id) { … messages(…) }), REST's list-gt-100 page
// answered the other way round.
func BenchmarkGraphQLTopicPage(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(gqlTopicPageQuery, map[string]any{"t": hotTopic, "gt": r.IntN(hotMessages - 100)})
	})
}

// BenchmarkGraphQLTopics is the first 100 topics with REST's topic fields.
func BenchmarkGraphQLTopics(b *testing.B) {
	runRequests(b, func(*rand.Rand) *http.Request { return graphQL(gqlTopicsQuery, nil) })
}

// BenchmarkGraphQLSchedules is 100 schedules after a random one of the
// 20,000 with their REST fields.
func BenchmarkGraphQLSchedules(b *testing.B) {
	runRequests(b, func(r *rand.Rand) *http.Request {
		return graphQL(gqlSchedulesQuery, map[string]any{"gt": fmt.Sprintf("0.0.%d", 3001+r.IntN(19_900))})
	})
}

// BenchmarkSchedulesGt100 is BenchmarkGraphQLSchedules's page through
// REST, without the response cache (every request reads the database, as
// GraphQL's do).
func BenchmarkSchedulesGt100(b *testing.B) {
	runRequestsWith(b, func(c *config.Config) { c.CacheEnabled = false }, func(r *rand.Rand) *http.Request {
		return httptest.NewRequest(http.MethodGet,
			fmt.Sprintf("/api/v1/schedules?schedule.id=gt:0.0.%d&limit=100", 3001+r.IntN(19_900)), nil)
	})
}

// BenchmarkGraphQLActivity is the activity query of `make bench`: the hot
// topic's whole history (first message to last + 1 ns) in 96 buckets, the
// same request every time.
func BenchmarkGraphQLActivity(b *testing.B) {
	d := open(b)
	var from, to int64
	if err := d.Bun().QueryRowContext(b.Context(), `SELECT min(consensus_timestamp), max(consensus_timestamp) + 1
		FROM topic_message WHERE topic_id = 2001`).Scan(&from, &to); err != nil {
		b.Fatal(err)
	}
	ts := func(ns int64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
	vars := map[string]any{"t": hotTopic, "from": ts(from), "to": ts(to), "b": 96}
	runRequests(b, func(*rand.Rand) *http.Request { return graphQL(gqlActivityQuery, vars) })
}

// samplePeaks samples the live heap and the goroutine stacks every 2 ms and,
// when stopped, reports their peaks: what the service would hold with 64
// requests in flight. It also reports the goroutines started per request
// (goroutines/op, from the runtime's count of goroutines created): a list
// that spawns a goroutine per element shows about one per element, which a
// 2 ms sample of the live count can miss.
func samplePeaks(b *testing.B) (stop func()) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/sched/goroutines:goroutines"},
	}
	var peak [3]uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(samples)
			for i, s := range samples {
				peak[i] = max(peak[i], s.Value.Uint64())
			}
		}
	}()
	created0, createdOK := goroutinesCreated()
	return func() {
		close(done)
		<-finished
		b.ReportMetric(float64(peak[0])/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(peak[1])/(1<<20), "peak-stacks-MiB")
		b.ReportMetric(float64(peak[2]), "peak-goroutines")
		if created1, ok := goroutinesCreated(); ok && createdOK && b.N > 0 {
			b.ReportMetric(float64(created1-created0)/float64(b.N), "goroutines/op")
		}
	}
}

// goroutinesCreated is the runtime's count of goroutines created since the
// process started (false if the runtime has no such metric).
func goroutinesCreated() (uint64, bool) {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}
