package graph_test

import (
	"context"
	"testing"
	"time"

	"mirrorql/graph"
	"mirrorql/model"
	"mirrorql/seed"
	"mirrorql/tests/testdb"
)

// TestStatementCounts: nested fields load through the request's dataloaders,
// so a page costs the same number of SQL statements whatever its size
// (counted by a bun query hook). The counts are the v1 layout's, where every
// loader's batch is one statement; on v2 the query layer asks topic by topic
// (docs/layouts.md) and db's own tests count its statements.
//
// The loaders wait 20 ms here, not the 2 ms they wait in service: the first
// node of a page loads its siblings' keys in a loop, and under the whole
// suite on 2 cores that loop was once preempted for longer than 2 ms, so the
// batch was sent in two (3 statements, not 2). What this test checks is
// which keys share a batch, not how fast a loop runs; in service a split
// batch costs one statement more and answers the same.
func TestStatementCounts(t *testing.T) {
	t.Parallel()
	e := newEnvLayout(t, testdb.LayoutV1, "", graph.Options{LoaderWait: 20 * time.Millisecond})
	o := seed.DefaultOptions() // 20 topics of 200 messages, 200 schedules
	if _, err := seed.RunURL(context.Background(), e.url, o); err != nil {
		t.Fatal(err)
	}
	topic := model.EntityID(o.TopicID(0)).String()
	tests := []struct {
		name  string
		query string
		sizes []int
		want  int64 // statements, for every page size
		nodes func(data map[string]any) int
	}{
		{
			name: "messages with their topics",
			query: `query($n: Int) { topicMessages(topicId: "` + topic + `", first: $n) {
				nodes { sequenceNumber topic { id memo adminKey { key } } } } }`,
			sizes: []int{1, 10, 50, 100},
			want:  2, // the page, the topics
			nodes: nodesAt("topicMessages"),
		},
		{
			name:  "schedules with their signatures",
			query: `query($n: Int) { schedules(first: $n) { nodes { id status signatures { signature type } } } }`,
			sizes: []int{1, 10, 50, 100},
			want:  2, // the page, the signatures of the page
			nodes: nodesAt("schedules"),
		},
		{
			name: "messages with their chunks and full messages",
			query: `query($n: Int) { topicMessages(topicId: "` + topic + `", sequenceNumber: {gte: 4}, first: $n) {
				edges { node { chunks { sequenceNumber } fullMessage } } } }`,
			sizes: []int{1, 10, 50, 66},
			want:  2, // the page, the chunk windows of the page
			nodes: func(d map[string]any) int { return len(d["topicMessages"].(map[string]any)["edges"].([]any)) },
		},
		{
			name: "topics with their messages, and those messages' topics",
			query: `query($n: Int) { topics(first: $n) { nodes { id message(sequenceNumber: 3) { sequenceNumber }
				messages(first: 3) { nodes { sequenceNumber topic { id } } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  4, // the topics, their message 3, their messages, the messages' topics
			nodes: nodesAt("topics"),
		},
		{
			name: "topics with their message counts and latest messages, and those messages' topics",
			query: `query($n: Int) { topics(first: $n) { nodes { id messageCount
				latestMessage { sequenceNumber topic { id } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  3, // the topics, their latest messages (counts too), those messages' topics
			nodes: nodesAt("topics"),
		},
		{
			name: "topics with their messages' chunks, and those chunks' topics",
			query: `query($n: Int) { topics(first: $n) { nodes { id messages(first: 3, sequenceNumber: {gte: 4}) {
				nodes { sequenceNumber chunks { sequenceNumber topic { id } } } } } } }`,
			sizes: []int{1, 5, 10, 20},
			want:  4, // the topics, their messages, the messages' chunks, the chunks' topics
			nodes: nodesAt("topics"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range tc.sizes {
				before := int64(e.stmts.Len())
				r := e.do(t, tc.query, map[string]any{"n": n})
				got := int64(e.stmts.Len()) - before
				if len(r.Errors) > 0 {
					t.Fatalf("first %d: errors %+v", n, r.Errors)
				}
				if nodes := tc.nodes(r.Data.(map[string]any)); nodes != n {
					t.Errorf("first %d: %d nodes", n, nodes)
				}
				t.Logf("first %3d: %d statements", n, got)
				if got != tc.want {
					t.Errorf("first %d: %d statements, want %d", n, got, tc.want)
				}
			}
		})
	}
}

func nodesAt(field string) func(map[string]any) int {
	return func(d map[string]any) int { return len(d[field].(map[string]any)["nodes"].([]any)) }
}
