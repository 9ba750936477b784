package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashgraph/hedera-sdk-go/v2/proto/mirror"
	"github.com/uptrace/bun"
	"google.golang.org/protobuf/proto"

	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
)

// TestLayoutVariants: on each v2 layout a reader meets (testdb.Variants: the
// importer's, a DEFAULT partition, the lookup empty, months missing and one
// detached, a real Citus cluster; each in its run: testdb.RunVariants), the
// service answers every route of both faces and the
// live streams byte for byte as it does on v1 holding the same rows (less a
// detached month's, which are absent on both).
func TestLayoutVariants(t *testing.T) {
	t.Parallel()
	for _, v := range testdb.RunVariants() {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			refURL, ref := testdb.NewLayout(t, testdb.LayoutV1)
			url, b := testdb.NewLayout(t, v.Name)
			// The seed's rows (chunks of both forms, schedules in every
			// state) over fewer topics: each route is asked of each topic.
			o := seed.DefaultOptions()
			o.Topics, o.Schedules = 6, 60
			for _, u := range []string{refURL, url} {
				if _, err := seed.RunURL(context.Background(), u, o); err != nil {
					t.Fatal(err)
				}
			}
			v.Settle(t, b, ref)
			refAddr, addr := freeAddr(t), freeAddr(t)
			want := startServer(t, refURL, "MIRRORQL_GRPC_LISTEN="+refAddr, "MIRRORQL_LOG_LEVEL=warn")
			got := startServer(t, url, "MIRRORQL_GRPC_LISTEN="+addr, "MIRRORQL_LOG_LEVEL=warn")
			if !strings.Contains(get200(t, got.URL+"/metrics"), `layout="v2"`) {
				t.Fatalf("%s: the service did not read it as v2", v.Name)
			}

			n := 0
			for _, target := range variantTargets(t, ref) {
				n += sameREST(t, want.URL, got.URL, target)
			}
			for _, q := range variantQueries(t, ref) {
				sameGraphQL(t, want.URL, got.URL, q)
				n++
			}
			sameStreams(t, want.URL, got.URL, refAddr, addr, ref, b)
			t.Logf("%s: %d answers byte-identical to v1's", v.Name, n)
		})
	}
}

// get200 is the body of a GET that must answer 200.
func get200(t *testing.T, u string) string {
	t.Helper()
	status, _, body := get(t, u)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, status, body)
	}
	return string(body)
}

// variantTargets are REST requests over the seeded rows: every topic's
// pages in both orders and under filters, messages by sequence number and
// by timestamp (the first, middle and last of each topic, and times no
// message has), every schedule route; and one topic that does not exist.
func variantTargets(t *testing.T, ref *bun.DB) []string {
	t.Helper()
	ctx := context.Background()
	var rows []struct {
		Topic                  int64
		First, Mid, Last       int64
		TsFirst, TsMid, TsLast int64
	}
	if err := ref.NewRaw(`select topic_id as topic, min(sequence_number) as first, (min(sequence_number) + max(sequence_number)) / 2 as mid,
			max(sequence_number) as last, min(consensus_timestamp) as ts_first,
			percentile_disc(0.5) within group (order by consensus_timestamp) as ts_mid, max(consensus_timestamp) as ts_last
		from topic_message group by topic_id order by topic_id`).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	ts := func(ns int64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
	targets := []string{"/api/v1/topics/0.0.99999/messages", "/api/v1/topics/0.0.99999",
		"/api/v1/schedules", "/api/v1/schedules?order=desc&limit=100", "/api/v1/schedules?account.id=gte:0.0.1050&limit=9"}
	for i, r := range rows {
		id := fmt.Sprintf("0.0.%d", r.Topic)
		targets = append(targets,
			"/api/v1/topics/"+id,
			"/api/v1/topics/"+id+"/messages",
			"/api/v1/topics/"+id+"/messages?limit=100&order=desc",
			fmt.Sprintf("/api/v1/topics/%s/messages?sequencenumber=gt:%d&limit=7", id, r.Mid),
			fmt.Sprintf("/api/v1/topics/%s/messages?timestamp=gte:%s&timestamp=lt:%s&limit=50", id, ts(r.TsFirst), ts(r.TsMid)),
			fmt.Sprintf("/api/v1/topics/%s/messages?timestamp=gt:%s&order=desc&encoding=utf-8", id, ts(r.TsMid)),
		)
		for _, seq := range []int64{r.First, r.Mid, r.Last, r.Last + 1} {
			targets = append(targets, fmt.Sprintf("/api/v1/topics/%s/messages/%d", id, seq))
		}
		for _, at := range []int64{r.TsFirst, r.TsMid, r.TsLast, r.TsMid + 1} {
			targets = append(targets, "/api/v1/topics/messages/"+ts(at))
			if i%4 == 0 {
				targets = append(targets, "/api/v1/topics/"+id+"/messages/"+ts(at))
			}
		}
	}
	var schedules []int64
	if err := ref.NewRaw("select schedule_id from schedule order by schedule_id limit 40").Scan(ctx, &schedules); err != nil {
		t.Fatal(err)
	}
	for _, s := range schedules {
		targets = append(targets, fmt.Sprintf("/api/v1/schedules/0.0.%d", s))
	}
	return targets
}

// sameREST asks both servers target, and then each page its links.next
// leads to, and fails unless status, type and body are alike; it returns
// how many answers it compared.
func sameREST(t *testing.T, want, got, target string) int {
	t.Helper()
	n := 0
	for target != "" && n < 30 {
		ws, wh, wb := get(t, want+target)
		gs, gh, gb := get(t, got+target)
		if ws != gs || wh.Get("Content-Type") != gh.Get("Content-Type") || !bytes.Equal(wb, gb) {
			t.Fatalf("GET %s:\nv1: %d %s\nv2: %d %s", target, ws, trim(string(wb), 2000), gs, trim(string(gb), 2000))
		}
		n++
		var page struct {
			Links struct {
				Next *string `json:"next"`
			} `json:"links"`
		}
		target = ""
		if ws == http.StatusOK && json.Unmarshal(wb, &page) == nil && page.Links.Next != nil {
			target = *page.Links.Next
		}
	}
	return n
}

// variantQueries are GraphQL documents over the seeded rows: each topic
// with its latest message, activity and a page of messages with their
// chunks, messages by sequence number and by timestamp, schedules with
// their signatures.
func variantQueries(t *testing.T, ref *bun.DB) []string {
	t.Helper()
	ctx := context.Background()
	var rows []struct {
		Topic, Mid, TsMid, TsFirst, TsLast int64
	}
	if err := ref.NewRaw(`select topic_id as topic, (min(sequence_number) + max(sequence_number)) / 2 as mid,
			percentile_disc(0.5) within group (order by consensus_timestamp) as ts_mid,
			min(consensus_timestamp) as ts_first, max(consensus_timestamp) as ts_last
		from topic_message group by topic_id order by topic_id`).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	const msg = `sequenceNumber consensusTimestamp message payerAccountId runningHash runningHashVersion
		chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }`
	ts := func(ns int64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }
	var qs []string
	for _, r := range rows {
		id := fmt.Sprintf("0.0.%d", r.Topic)
		qs = append(qs,
			fmt.Sprintf(`{ topic(id: "%s") { id memo messageCount latestMessage { %s }
				activity(from: "%s", to: "%s", buckets: 24) { from to messages }
				messages(first: 40) { nodes { %s chunks { sequenceNumber } fullMessage } pageInfo { hasNextPage endCursor } }
				message(sequenceNumber: %d) { %s } } }`, id, msg, ts(r.TsFirst), ts(r.TsLast+1), msg, r.Mid, msg),
			fmt.Sprintf(`{ topicMessages(topicId: "%s", order: DESC, first: 100) { nodes { %s } pageInfo { hasNextPage endCursor } } }`, id, msg),
			fmt.Sprintf(`{ topicMessages(topicId: "%s", consensusTimestamp: {gte: "%s"}, sequenceNumber: {lt: %d}) { edges { cursor node { %s } } } }`,
				id, ts(r.TsFirst), r.Mid, msg),
			fmt.Sprintf(`{ a: topicMessageByTimestamp(consensusTimestamp: "%s") { topicId %s }
				b: topicMessageByTimestamp(consensusTimestamp: "%s") { topicId %s }
				c: topicMessageByTimestamp(consensusTimestamp: "%s") { topicId %s }
				d: topicMessage(topicId: "%s", sequenceNumber: %d) { %s } }`,
				ts(r.TsMid), msg, ts(r.TsFirst), msg, ts(r.TsMid+1), msg, id, r.Mid, msg),
		)
	}
	qs = append(qs, `{ schedules(first: 100) { nodes { id creatorAccountId payerAccountId consensusTimestamp executedTimestamp
		expirationTime memo deleted status transactionBody waitForExpiry signatures { consensusTimestamp publicKeyPrefix signature type } }
		pageInfo { hasNextPage endCursor } } }`,
		`{ topics(first: 100) { nodes { id memo createdTimestamp messageCount } } }`)
	return qs
}

// sameGraphQL posts query to both servers and fails unless the answers are
// alike and free of errors.
func sameGraphQL(t *testing.T, want, got, query string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	w := request(t, http.MethodPost, want+"/graphql", string(body), "Content-Type", "application/json")
	g := request(t, http.MethodPost, got+"/graphql", string(body), "Content-Type", "application/json")
	if w.status != http.StatusOK || strings.Contains(w.body, `"errors"`) {
		t.Fatalf("v1: %d %s\nfor %s", w.status, trim(w.body, 2000), query)
	}
	if g.status != w.status || w.body != g.body {
		t.Fatalf("%s\nv1: %d %s\nv2: %d %s", query, w.status, trim(w.body, 2000), g.status, trim(g.body, 2000))
	}
}

// sameStreams follows the busiest topic on both servers, over gRPC and over
// a GraphQL subscription (SSE): its history from epoch, then messages
// appended alike to both databases while the streams are live; the
// responses must be equal.
func sameStreams(t *testing.T, wantURL, gotURL, wantAddr, gotAddr string, ref, b *bun.DB) {
	t.Helper()
	var topic, count int64
	if err := ref.NewRaw("select topic_id, count(*) from topic_message group by topic_id order by 2 desc, 1 limit 1").
		Scan(context.Background(), &topic, &count); err != nil {
		t.Fatal(err)
	}
	const live = 5
	q := func() *mirror.ConsensusTopicQuery { return fromEpoch(topicQuery(topic)) }
	streams := []<-chan topicEvent{grpcGo(grpcConn(t, wantAddr))(t, q()), grpcGo(grpcConn(t, gotAddr))(t, q())}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := fmt.Sprintf(`subscription { topicMessages(topicId: "0.0.%d", consensusStartTime: "0") { sequenceNumber
		consensusTimestamp message payerAccountId runningHash runningHashVersion chunkInfo { number total
		initialTransactionId { accountId nonce scheduled transactionValidStart } } } }`, topic)
	subs := []<-chan liveEvent{sseSubscribe(ctx, t, wantURL, sub), sseSubscribe(ctx, t, gotURL, sub)}
	var history [2][]*mirror.ConsensusTopicResponse
	var events [2][]json.RawMessage
	for i := range streams {
		history[i] = takeTopic(t, streams[i], int(count), patience)
		events[i] = takeEvents(t, subs[i], int(count), patience)
	}
	base := time.Now().UnixNano()
	for _, w := range []*bun.DB{ref, b} {
		for i := int64(0); i < live; i++ {
			appendMessages(t, w, liveRow{Topic: topic, Ts: base + i*1000, Text: fmt.Sprintf("live %d", i)})
		}
	}
	for i := range streams {
		history[i] = append(history[i], takeTopic(t, streams[i], live, patience)...)
		events[i] = append(events[i], takeEvents(t, subs[i], live, patience)...)
	}
	for k := range history[0] {
		if !proto.Equal(history[0][k], history[1][k]) {
			t.Fatalf("gRPC stream of topic %d, response %d:\nv1: %v\nv2: %v", topic, k, history[0][k], history[1][k])
		}
		if !bytes.Equal(events[0][k], events[1][k]) {
			t.Fatalf("subscription to topic %d, event %d:\nv1: %s\nv2: %s", topic, k, events[0][k], events[1][k])
		}
	}
}
