package db_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
	"mirrorql/tools/stmtlog"
)

// citusFanOuts are the statements that go to every shard on Citus, each
// with why; every other statement on a distributed table must be routed to
// one shard (one task), and those on the catalog alone run on the
// coordinator.
var citusFanOuts = []struct {
	sql *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^SELECT entity_id FROM "public"\."transaction_p\d{4}_\d{2}" WHERE consensus_timestamp = \$1`),
		"a message by timestamp: transaction is distributed by payer, so its submit is looked for on every shard (as the mirror node's REST API does)"},
	{regexp.MustCompile(`^WITH tx AS MATERIALIZED \(SELECT entity_id AS topic_id, consensus_timestamp FROM transaction`),
		"the live poll: the submits past the watermark of any payer, then the messages of the subscribed topics"},
	{regexp.MustCompile(`FROM "?schedule"? AS "?s"?`),
		"the schedules list, ordered by schedule id across the shards"},
	{regexp.MustCompile(`FROM "?transaction_signature"?`),
		"the signatures of a page of schedules: several entity ids"},
	{regexp.MustCompile(`FROM "?entity"? AS "?e"?.* (ORDER BY|= ANY)`),
		"the topics list, or a batch of topics by id"},
	{regexp.MustCompile(`^SELECT EXISTS \(SELECT 1 FROM topic_message_lookup\)`),
		"the layout's refresh (every 30 s): whether the lookup has rows"},
}

// oneTopic matches a statement that reads topic_message or its lookup for
// one topic.
var oneTopic = regexp.MustCompile(`FROM (topic_message|topic_message_lookup|"public"\."topic_message_p\d{4}_\d{2}")( AS \w+)? WHERE (\w+\.)?topic_id = \$1`)

// citusPlan classifies a statement's plan: "router" (one task on one
// worker), "fan-out" (several tasks, or subplans), "coordinator" (no
// distributed table).
func citusPlan(plan string) string {
	switch {
	case !strings.Contains(plan, "Citus Adaptive"):
		return "coordinator"
	case strings.Contains(plan, "Distributed Subplan"):
		return "fan-out"
	}
	tasks := regexp.MustCompile(`Task Count: (\d+)`).FindAllStringSubmatch(plan, -1)
	for _, m := range tasks {
		if m[1] != "1" {
			return "fan-out"
		}
	}
	return "router"
}

// TestCitusPlans runs every read of the service on the v2 layout of a real
// Citus cluster (testdb's v2-citus) as the service's pool runs them, and
// holds each statement it sent to Citus's plan: none refused, every read
// of one topic's messages or lookup routed to one shard, and every fan-out
// one of citusFanOuts.
func TestCitusPlans(t *testing.T) {
	t.Parallel()
	url, b := testdb.NewLayout(t, "v2-citus")
	ctx := context.Background()
	o := seed.DefaultOptions()
	o.Topics, o.Schedules = 4, 30
	if _, err := seed.RunURL(ctx, url, o); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(db.Options{URL: url, Prepare: true, Coalesce: db.DefaultCoalesce, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	log := &stmtlog.Log{}
	d.Record(log)
	l, err := d.LearnLayout(ctx, nil)
	if err != nil || !l.Citus || !l.UseLookup {
		t.Fatalf("layout %v, %v: want v2 on Citus reading the lookup", l, err)
	}

	var topics []model.EntityID
	if err := b.NewRaw("select distinct topic_id from topic_message order by 1").Scan(ctx, &topics); err != nil {
		t.Fatal(err)
	}
	var stamps []model.Timestamp
	if err := b.NewRaw("select consensus_timestamp from topic_message order by 1 limit 3").Scan(ctx, &stamps); err != nil {
		t.Fatal(err)
	}
	var schedules []model.EntityID
	if err := b.NewRaw("select schedule_id from schedule order by 1 limit 3").Scan(ctx, &schedules); err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil && err != app.ErrNotFound {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, topic := range topics {
		for _, f := range []app.MessageFilter{
			{TopicID: topic, Limit: 25},
			{TopicID: topic, Limit: 100, Order: model.Desc},
			{TopicID: topic, Limit: 7, SequenceNumber: &model.Range{Lo: 4, Hi: math.MaxInt64}},
			{TopicID: topic, Limit: 5, Timestamp: &model.Range{Lo: int64(stamps[0]), Hi: math.MaxInt64},
				SequenceNumber: &model.Range{Lo: math.MinInt64, Hi: 49}},
		} {
			page, err := d.MessagesOfTopic(ctx, f)
			must("page", err)
			ptrs := make([]*model.TopicMessage, len(page))
			for i := range page {
				ptrs[i] = &page[i]
			}
			_, err = d.ChunksOf(ctx, ptrs)
			must("chunks", err)
		}
		_, err := d.MessageBySequence(ctx, topic, 2)
		must("by sequence", err)
		_, err = d.Activity(ctx, topic, []model.Timestamp{stamps[0], stamps[0] + model.Timestamp(24*time.Hour), model.Timestamp(time.Now().UnixNano())})
		must("activity", err)
		_, err = d.Topic(ctx, topic)
		must("topic", err)
		_, err = d.TopicExists(ctx, topic)
		must("topic exists", err)
		_, err = d.EntityKind(ctx, topic)
		must("entity kind", err)
	}
	_, err = d.MessagesOfTopics(ctx, topics, app.MessageFilter{Limit: 5})
	must("pages of topics", err)
	_, err = d.MessagesBySequence(ctx, []app.TopicSequence{{TopicID: topics[0], SequenceNumber: 1}, {TopicID: topics[0], SequenceNumber: 2}, {TopicID: topics[1], SequenceNumber: 1}})
	must("by sequence batch", err)
	_, err = d.MessageByTimestamp(ctx, stamps[0])
	must("by timestamp", err)
	_, err = d.MessagesByTimestamp(ctx, stamps)
	must("by timestamp batch", err)
	_, err = d.LatestMessages(ctx, topics)
	must("latest", err)
	_, err = d.LivePoll(ctx, stamps[0], topics, 100)
	must("live poll", err)
	_, err = d.Topics(ctx, app.TopicFilter{Limit: 10})
	must("topics", err)
	_, err = d.TopicsByID(ctx, topics)
	must("topics by id", err)
	_, err = d.Schedules(ctx, app.ScheduleFilter{Limit: 10})
	must("schedules", err)
	_, err = d.Schedule(ctx, schedules[0])
	must("schedule", err)
	_, err = d.SchedulesByID(ctx, schedules)
	must("schedules by id", err)
	_, err = d.SignaturesOf(ctx, schedules)
	must("signatures", err)
	_, err = d.SchedulesVersion(ctx)
	must("schedules version", err)
	if t.Failed() {
		t.FailNow() // a read Citus refused: the plans below would not say more
	}

	conn, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seen := map[string]bool{}
	count := map[string]int{}
	var report []string
	for _, st := range log.Take() {
		if seen[st.SQL] || strings.HasPrefix(st.SQL, "SELECT set_config") {
			continue
		}
		seen[st.SQL] = true
		plan, err := stmtlog.Plan(ctx, conn, st, "COSTS OFF")
		if err != nil {
			t.Errorf("EXPLAIN: %v", err)
			continue
		}
		kind := citusPlan(plan)
		count[kind]++
		why := ""
		for _, f := range citusFanOuts {
			if f.sql.MatchString(st.SQL) {
				why = f.why
			}
		}
		switch {
		case kind == "fan-out" && why == "":
			t.Errorf("a statement goes to every shard, and citusFanOuts says not why:\n%s\n%s", st.SQL, plan)
		case kind == "router" && why != "":
			why = "" // routed after all (one shard holds every row asked for)
		case oneTopic.MatchString(st.SQL) && kind != "router":
			t.Errorf("a read of one topic's messages or lookup is not routed to one shard (%s):\n%s\n%s", kind, st.SQL, plan)
		}
		report = append(report, fmt.Sprintf("%-11s %s%s", kind, trimSQL(st.SQL), map[bool]string{true: "\n            why: " + why, false: ""}[why != ""]))
	}
	sort.Strings(report)
	t.Logf("%d statements: %d routed to one shard, %d to every shard, %d on the coordinator alone:\n%s",
		len(seen), count["router"], count["fan-out"], count["coordinator"], strings.Join(report, "\n"))
	if count["router"] == 0 {
		t.Error("no statement was routed to one shard")
	}
}

// trimSQL is the head of a statement, for the report.
func trimSQL(s string) string {
	if len(s) > 140 {
		return s[:140] + "…"
	}
	return s
}
