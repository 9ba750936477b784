package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/graph"
	"mirrorql/model"
	"mirrorql/rest"
	"mirrorql/service/policy"
	"mirrorql/tests/testdb"
	"mirrorql/tools/seed"
)

// TestGraphQLAgreesWithREST loads every conformance data set and checks, with
// both faces in process over the same database and settings (the folder's
// profile):
//
//   - every message: topicMessage equals REST's by-sequence route field by
//     field, topicMessageByTimestamp its by-timestamp route (null where REST
//     says 404), message(encoding: UTF8) REST's encoding=utf-8;
//   - every schedule: schedule equals REST's schedule route;
//   - paging: following endCursor yields exactly the items REST's links.next
//     chain yields, for every list request of the recorded cases that GraphQL
//     can express, and for each topic and the schedules in both orders at
//     several page sizes.
func TestGraphQLAgreesWithREST(t *testing.T) {
	t.Parallel()
	folders := gqlConformanceFolders(t)
	_, b := testdb.New(t)
	d := db.Wrap(b)
	truncate := gqlTruncateAll(t, folders)
	for _, dir := range folders {
		var meta struct {
			Profile string `json:"profile"`
		}
		readJSON(t, filepath.Join(dir, "meta.json"), &meta)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := b.DB.ExecContext(ctx, truncate); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "data.sql"))
			if err != nil {
				t.Fatal(err)
			}
			if err := testdb.LoadDump(ctx, b, string(data)); err != nil {
				t.Fatalf("data.sql: %v", err)
			}
			def, max := 25, 100
			if meta.Profile == "limit" {
				def, max = 2, 4
			}
			addNullChunkTotals(t, b)
			f := newFaces(d, def, max)
			f.checkNullChunkTotals(t)
			f.checkMessages(t, b, "true")
			f.checkSchedules(t, b)
			f.checkRecordedLists(t, dir)
			f.checkChains(t, b, []int{1, 2, 3, max})
			t.Logf("compared %d message answers, %d schedules, %d recorded list requests, %d chains (%d items)",
				f.messages, f.schedules, f.recorded, f.chains, f.items)
			if f.chains == 0 {
				t.Error("no chain compared")
			}
		})
	}
}

// TestGraphQLAgreesWithRESTOnSeededData runs the same checks on the seed
// package's data set (20 topics of 200 messages with chunks of both forms,
// 200 schedules in every state; every chunk and a fifth of the other
// messages), plus every topic against REST's topic route.
func TestGraphQLAgreesWithRESTOnSeededData(t *testing.T) {
	t.Parallel()
	url, b := testdb.New(t)
	if _, err := seed.RunURL(context.Background(), url, seed.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	addNullChunkTotals(t, b)
	f := newFaces(db.Wrap(b), 25, 100)
	f.checkNullChunkTotals(t)
	// every chunk, a fifth of the other messages
	f.checkMessages(t, b, "chunk_num IS NOT NULL OR sequence_number % 5 = 1")
	f.checkSchedules(t, b)
	f.checkTopics(t, b)
	f.checkChains(t, b, []int{7, 100})
	for _, u := range []string{
		"/api/v1/schedules?account.id=gte:0.0.1050&schedule.id=lt:0.0.3150&order=desc&limit=9",
		"/api/v1/schedules?schedule.id=ne:0.0.3005&account.id=lte:1020&limit=11",
		"/api/v1/topics/0.0.2003/messages?sequencenumber=gt:20&sequencenumber=lte:150&limit=13",
		"/api/v1/topics/0.0.2004/messages?timestamp=gte:1700001000.5&order=desc&limit=17&encoding=utf-8",
		"/api/v1/topics/0.0.2005/messages?sequencenumber=ne:4&timestamp=lt:1702000000&limit=33",
	} {
		l, _ := gqlListFromURL(u)
		f.compareChains(t, u, l)
	}
	t.Logf("compared %d message answers, %d schedules, %d topics, %d chains (%d items)",
		f.messages, f.schedules, f.topics, f.chains, f.items)
	if f.topics == 0 || f.messages == 0 || f.schedules == 0 {
		t.Error("nothing compared")
	}
}

// nullChunkTopic holds chunks whose rows have no chunk_total (both forms of
// chunk info), which REST renders as "total": null.
const nullChunkTopic = model.EntityID(987654)

// addNullChunkTotals adds nullChunkTopic's messages: a legacy chunk (payer
// and valid start), a chunk with an initial transaction id, and a chunk
// with neither (a payer, as v2 requires, but no valid start), all with
// chunk_num set and chunk_total NULL.
func addNullChunkTotals(t *testing.T, b *bun.DB) {
	t.Helper()
	_, err := b.DB.ExecContext(context.Background(), `INSERT INTO topic_message
		(consensus_timestamp, message, running_hash, sequence_number, running_hash_version, chunk_num, chunk_total,
		 payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id) VALUES
		(1690000000000000001, '\x6869', '\x01', 1, 3, 1, NULL, 1001, 1689999999000000000, $1, NULL),
		(1690000000000000002, '\x7468657265', '\x02', 2, 3, 2, NULL, 1001, 1689999999000000000, $1, NULL),
		(1690000000000000003, '\x21', '\x03', 3, 3, 1, NULL, 1002, NULL, $1,
		 '\x0a0c0880b4d4a40610c0843d1203180a0b'),
		(1690000000000000004, '\x3f', '\x04', 4, NULL, 3, NULL, 1003, NULL, $1, NULL)`, int64(nullChunkTopic))
	if err != nil {
		t.Fatal(err)
	}
}

// checkNullChunkTotals: where REST says "total": null, GraphQL's
// chunkInfo.total is null too.
func (f *faces) checkNullChunkTotals(t *testing.T) {
	t.Helper()
	for seq := 1; seq <= 4; seq++ {
		status, body := f.get(t, fmt.Sprintf("/api/v1/topics/%s/messages/%d", nullChunkTopic, seq))
		if status != 200 {
			t.Fatalf("REST message %d: %d %v", seq, status, body)
		}
		ci, _ := body.(map[string]any)["chunk_info"].(map[string]any)
		if total, ok := ci["total"]; !ok || total != nil {
			t.Errorf("REST message %d: chunk_info %v, want total null", seq, ci)
		}
		data := f.query(t, `query($t: EntityId!, $s: Long!) { topicMessage(topicId: $t, sequenceNumber: $s) { chunkInfo { number total } } }`,
			map[string]any{"t": nullChunkTopic.String(), "s": seq})
		gci, _ := data["topicMessage"].(map[string]any)["chunkInfo"].(map[string]any)
		if total, ok := gci["total"]; !ok || total != nil {
			t.Errorf("GraphQL message %d: chunkInfo %v, want total null", seq, gci)
		}
	}
}

// faces are both APIs over one query layer with the same settings.
type faces struct {
	rest  *echo.Echo
	graph http.Handler
	max   int
	// what was compared
	messages, schedules, topics, recorded, chains, items int
}

func newFaces(d *db.DB, limitDefault, limitMax int) *faces {
	e := echo.New()
	e.HTTPErrorHandler = policy.ErrorHandler(nil)
	e.Pre(rest.CanonicalRoute)
	// one core for both faces, as the service has: the page sizes are its
	ledger := app.New(d, app.Rules{Pages: app.PageSizes{Default: limitDefault, Max: limitMax}})
	rest.New(ledger, rest.Options{}).Register(e)
	return &faces{
		rest:  e,
		graph: graph.NewAPI(ledger, graph.Options{}),
		max:   limitMax,
	}
}

// get calls REST and decodes its body (numbers kept exact).
func (f *faces) get(t *testing.T, path string) (int, any) {
	t.Helper()
	rec := httptest.NewRecorder()
	f.rest.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, gqlDecode(t, rec.Body.Bytes())
}

// query calls GraphQL and returns data, failing on any error.
func (f *faces) query(t *testing.T, q string, vars map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.graph.ServeHTTP(rec, req)
	r, _ := gqlDecode(t, rec.Body.Bytes()).(map[string]any)
	if rec.Code != 200 || r["errors"] != nil {
		t.Fatalf("GraphQL %s %v: %d %s", q, vars, rec.Code, rec.Body.String())
	}
	return r["data"].(map[string]any)
}

const (
	gqlMessageFields = `topicId sequenceNumber consensusTimestamp message(encoding: $enc) payerAccountId runningHash runningHashVersion
		chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }`
	gqlScheduleFields = `id adminKey { type key } consensusTimestamp creatorAccountId payerAccountId deleted executedTimestamp
		expirationTime memo transactionBody waitForExpiry signatures { consensusTimestamp publicKeyPrefix signature type }`
)

// checkMessages compares the messages of the database that match where on
// both faces.
func (f *faces) checkMessages(t *testing.T, b *bun.DB, where string) {
	t.Helper()
	rows, err := b.DB.QueryContext(context.Background(),
		"SELECT topic_id, sequence_number, consensus_timestamp FROM topic_message WHERE "+where+" ORDER BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		topic model.EntityID
		seq   int64
		ts    model.Timestamp
	}
	var keys []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.topic, &k.seq, &k.ts); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	q := `query($t: EntityId!, $s: Long!, $ts: Timestamp!, $enc: MessageEncoding) {
		bySequence: topicMessage(topicId: $t, sequenceNumber: $s) { ` + gqlMessageFields + ` }
		byTimestamp: topicMessageByTimestamp(consensusTimestamp: $ts) { ` + gqlMessageFields + ` } }`
	for _, k := range keys {
		for _, enc := range []string{"BASE64", "UTF8"} {
			data := f.query(t, q, map[string]any{"t": k.topic.String(), "s": k.seq, "ts": k.ts.String(), "enc": enc})
			var want any
			if enc == "BASE64" {
				status, body := f.get(t, fmt.Sprintf("/api/v1/topics/%s/messages/%d", k.topic, k.seq))
				if status != 200 {
					t.Fatalf("REST by sequence %v: %d %v", k, status, body)
				}
				want = body
			} else {
				status, body := f.get(t, fmt.Sprintf("/api/v1/topics/%s/messages?sequencenumber=%d&encoding=utf-8", k.topic, k.seq))
				if status != 200 {
					t.Fatalf("REST utf-8 %v: %d %v", k, status, body)
				}
				want = body.(map[string]any)["messages"].([]any)[0]
			}
			gqlSame(t, fmt.Sprintf("message %v %s", k, enc), want, gqlMessageAsREST(data["bySequence"]))
			f.messages++

			if enc == "BASE64" {
				status, body := f.get(t, "/api/v1/topics/messages/"+k.ts.String())
				switch {
				case status == 404 && data["byTimestamp"] == nil:
				case status == 200:
					gqlSame(t, fmt.Sprintf("message at %s", k.ts), body, gqlMessageAsREST(data["byTimestamp"]))
				default:
					t.Errorf("message at %s: REST %d %v, GraphQL %v", k.ts, status, body, data["byTimestamp"])
				}
			}
		}
	}
}

// entityIDs runs a query that selects one column of entity ids.
func entityIDs(t *testing.T, b *bun.DB, query string) []model.EntityID {
	t.Helper()
	var ids []model.EntityID
	if err := b.NewRaw(query).Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkSchedules compares every schedule on both faces.
func (f *faces) checkSchedules(t *testing.T, b *bun.DB) {
	t.Helper()
	for _, id := range entityIDs(t, b, "SELECT schedule_id FROM schedule ORDER BY 1") {
		status, body := f.get(t, "/api/v1/schedules/"+id.String())
		if status != 200 {
			t.Fatalf("REST schedule %s: %d %v", id, status, body)
		}
		data := f.query(t, `query($id: EntityId!) { schedule(id: $id) { `+gqlScheduleFields+` } }`, map[string]any{"id": id.String()})
		gqlSame(t, "schedule "+id.String(), body, gqlScheduleAsREST(data["schedule"]))
		f.schedules++
	}
}

// checkTopics compares every topic entity with REST's topic route where it
// answers 200. Two renderings differ by design: rest-java writes timestamp 0
// as "0.0" (none in the data), and a fee-exempt key REST renders as null is
// left out of GraphQL's non-null list.
func (f *faces) checkTopics(t *testing.T, b *bun.DB) {
	t.Helper()
	for _, id := range entityIDs(t, b, "SELECT id FROM entity WHERE type = 'TOPIC' ORDER BY 1") {
		status, body := f.get(t, "/api/v1/topics/"+id.String())
		if status != 200 {
			continue
		}
		want := body.(map[string]any)
		keys := []any{}
		for _, k := range want["fee_exempt_key_list"].([]any) {
			if k != nil {
				keys = append(keys, k)
			}
		}
		want["fee_exempt_key_list"] = keys
		data := f.query(t, `query($id: EntityId!) { topic(id: $id) { id memo deleted createdTimestamp timestamp { from to }
			adminKey { type key } submitKey { type key } feeScheduleKey { type key } feeExemptKeyList { type key }
			autoRenewAccountId autoRenewPeriod customFees { createdTimestamp fixedFees { amount collectorAccountId denominatingTokenId } } } }`,
			map[string]any{"id": id.String()})
		gqlSame(t, "topic "+id.String(), want, gqlTopicAsREST(data["topic"]))
		f.topics++
	}
}

// checkRecordedLists replays the list requests of the folder's recorded
// cases that REST answers 200 and GraphQL can express.
func (f *faces) checkRecordedLists(t *testing.T, dir string) {
	t.Helper()
	var cases []struct {
		URL string `json:"url"`
	}
	readJSON(t, filepath.Join(dir, "cases.json"), &cases)
	for _, c := range cases {
		l, ok := gqlListFromURL(c.URL)
		if !ok {
			continue
		}
		if status, _ := f.get(t, c.URL); status != 200 {
			continue
		}
		f.compareChains(t, c.URL, l)
		f.recorded++
	}
}

// checkChains pages through every topic's messages and the schedules, both
// orders, several page sizes.
func (f *faces) checkChains(t *testing.T, b *bun.DB, limits []int) {
	t.Helper()
	rows, err := b.DB.QueryContext(context.Background(), "SELECT DISTINCT topic_id FROM topic_message ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var topics []model.EntityID
	for rows.Next() {
		var id model.EntityID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		topics = append(topics, id)
	}
	rows.Close()
	for _, order := range []string{"asc", "desc"} {
		for _, limit := range limits {
			for _, topic := range topics {
				u := fmt.Sprintf("/api/v1/topics/%s/messages?order=%s&limit=%d", topic, order, limit)
				l, _ := gqlListFromURL(u)
				f.compareChains(t, u, l)
			}
			u := fmt.Sprintf("/api/v1/schedules?order=%s&limit=%d", order, limit)
			l, _ := gqlListFromURL(u)
			f.compareChains(t, u, l)
		}
	}
}

// gqlList is a REST list request expressed as GraphQL arguments.
type gqlList struct {
	schedules bool
	vars      map[string]any
}

// gqlListFromURL translates a REST list URL; ok is false for anything
// GraphQL cannot say the same way (an operator repeated, unknown keys).
func gqlListFromURL(raw string) (l gqlList, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return l, false
	}
	l.vars = map[string]any{"enc": "BASE64"}
	switch parts := strings.Split(strings.Trim(u.Path, "/"), "/"); {
	case len(parts) == 3 && parts[2] == "schedules":
		l.schedules = true
	case len(parts) == 5 && parts[2] == "topics" && parts[4] == "messages":
		l.vars["t"] = parts[3]
	default:
		return l, false
	}
	filters := map[string]map[string]any{}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return l, false
		}
		switch k = strings.ToLower(k); k {
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return l, false
			}
			l.vars["n"] = n
		case "order":
			l.vars["o"] = strings.ToUpper(v)
		case "encoding":
			switch strings.ToLower(v) {
			case "utf-8", "utf8":
				l.vars["enc"] = "UTF8"
			case "base64":
			default:
				return l, false
			}
		case "sequencenumber", "timestamp", "schedule.id", "account.id":
			op, value, ok := model.SplitOperator(v)
			if !ok {
				return l, false
			}
			arg := map[string]string{"sequencenumber": "s", "timestamp": "ts", "schedule.id": "sid", "account.id": "cid"}[k]
			if filters[arg] == nil {
				filters[arg] = map[string]any{}
			}
			if _, dup := filters[arg][string(op)]; dup {
				return l, false
			}
			filters[arg][string(op)] = value
		default:
			return l, false
		}
	}
	for arg, f := range filters {
		l.vars[arg] = f
	}
	return l, true
}

// compareChains follows REST's links.next from u and GraphQL's endCursor
// with the same arguments: both must yield the same items.
func (f *faces) compareChains(t *testing.T, u string, l gqlList) {
	t.Helper()
	var want []any
	next := u
	for pages := 0; next != ""; pages++ {
		if pages > 1000 {
			t.Fatalf("%s: REST chain does not end", u)
		}
		status, body := f.get(t, next)
		if status != 200 {
			t.Fatalf("%s: REST %d %v", next, status, body)
		}
		m := body.(map[string]any)
		items := m["messages"]
		if l.schedules {
			items = m["schedules"]
		}
		want = append(want, items.([]any)...)
		next, _ = m["links"].(map[string]any)["next"].(string)
	}

	var q string
	if l.schedules {
		q = `query($sid: EntityIdFilter, $cid: EntityIdFilter, $o: Order, $n: Int, $a: String) {
			list: schedules(scheduleId: $sid, creatorAccountId: $cid, order: $o, first: $n, after: $a) {
			nodes { ` + gqlScheduleFields + ` } pageInfo { hasNextPage endCursor } } }`
	} else {
		q = `query($t: EntityId!, $s: LongFilter, $ts: TimestampFilter, $o: Order, $n: Int, $a: String, $enc: MessageEncoding) {
			list: topicMessages(topicId: $t, sequenceNumber: $s, consensusTimestamp: $ts, order: $o, first: $n, after: $a) {
			nodes { ` + gqlMessageFields + ` } pageInfo { hasNextPage endCursor } } }`
	}
	vars := map[string]any{}
	for k, v := range l.vars {
		vars[k] = v
	}
	if l.schedules {
		delete(vars, "enc")
	}
	var got []any
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("%s: GraphQL chain does not end", u)
		}
		conn := f.query(t, q, vars)["list"].(map[string]any)
		for _, n := range conn["nodes"].([]any) {
			if l.schedules {
				got = append(got, gqlScheduleAsREST(n))
			} else {
				got = append(got, gqlMessageAsREST(n))
			}
		}
		info := conn["pageInfo"].(map[string]any)
		if info["hasNextPage"] != true {
			break
		}
		vars["a"] = info["endCursor"]
	}
	if l.schedules {
		for _, s := range want {
			gqlListSchedule(s)
		}
	}
	gqlSame(t, "chain "+u, want, got)
	f.chains++
	f.items += len(want)
}

// gqlListSchedule: REST's list route leaves out deleted and memo when the
// schedule has no entity row; GraphQL says null.
func gqlListSchedule(s any) {
	m := s.(map[string]any)
	for _, k := range []string{"deleted", "memo"} {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
}

// gqlMessageAsREST renders a GraphQL TopicMessage in REST's shape.
func gqlMessageAsREST(v any) any {
	n, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{
		"consensus_timestamp": n["consensusTimestamp"], "message": n["message"], "payer_account_id": n["payerAccountId"],
		"running_hash": n["runningHash"], "running_hash_version": n["runningHashVersion"],
		"sequence_number": n["sequenceNumber"], "topic_id": n["topicId"], "chunk_info": nil,
	}
	if ci, ok := n["chunkInfo"].(map[string]any); ok {
		id := ci["initialTransactionId"].(map[string]any)
		out["chunk_info"] = map[string]any{
			"initial_transaction_id": map[string]any{"account_id": id["accountId"], "nonce": id["nonce"],
				"scheduled": id["scheduled"], "transaction_valid_start": id["transactionValidStart"]},
			"number": ci["number"], "total": ci["total"],
		}
	}
	return out
}

// gqlTopicAsREST renders a GraphQL Topic in the shape of REST's topic route.
func gqlTopicAsREST(v any) any {
	n, ok := v.(map[string]any)
	if !ok {
		return v
	}
	key := func(k any) any {
		m, ok := k.(map[string]any)
		if !ok {
			return nil
		}
		typ := m["type"]
		if typ == "PROTOBUF_ENCODED" {
			typ = "ProtobufEncoded"
		}
		return map[string]any{"_type": typ, "key": m["key"]}
	}
	exempt := []any{}
	for _, k := range n["feeExemptKeyList"].([]any) {
		exempt = append(exempt, key(k))
	}
	cf := n["customFees"].(map[string]any)
	fees := []any{}
	for _, fee := range cf["fixedFees"].([]any) {
		fee := fee.(map[string]any)
		fees = append(fees, map[string]any{"amount": fee["amount"], "collector_account_id": fee["collectorAccountId"],
			"denominating_token_id": fee["denominatingTokenId"]})
	}
	ts := n["timestamp"].(map[string]any)
	return map[string]any{
		"admin_key": key(n["adminKey"]), "auto_renew_account": n["autoRenewAccountId"], "auto_renew_period": n["autoRenewPeriod"],
		"created_timestamp": n["createdTimestamp"],
		"custom_fees":       map[string]any{"created_timestamp": cf["createdTimestamp"], "fixed_fees": fees},
		"deleted":           n["deleted"], "fee_exempt_key_list": exempt, "fee_schedule_key": key(n["feeScheduleKey"]),
		"memo": n["memo"], "submit_key": key(n["submitKey"]),
		"timestamp": map[string]any{"from": ts["from"], "to": ts["to"]}, "topic_id": n["id"],
	}
}

// gqlScheduleAsREST renders a GraphQL Schedule in REST's shape.
func gqlScheduleAsREST(v any) any {
	n, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{
		"admin_key": nil, "deleted": n["deleted"], "consensus_timestamp": n["consensusTimestamp"],
		"creator_account_id": n["creatorAccountId"], "executed_timestamp": n["executedTimestamp"],
		"expiration_time": n["expirationTime"], "memo": n["memo"], "payer_account_id": n["payerAccountId"],
		"schedule_id": n["id"], "transaction_body": n["transactionBody"], "wait_for_expiry": n["waitForExpiry"],
	}
	if k, ok := n["adminKey"].(map[string]any); ok {
		typ := k["type"]
		if typ == "PROTOBUF_ENCODED" {
			typ = "ProtobufEncoded"
		}
		out["admin_key"] = map[string]any{"_type": typ, "key": k["key"]}
	}
	sigs := []any{}
	for _, s := range n["signatures"].([]any) {
		s := s.(map[string]any)
		sigs = append(sigs, map[string]any{"consensus_timestamp": s["consensusTimestamp"],
			"public_key_prefix": s["publicKeyPrefix"], "signature": s["signature"], "type": s["type"]})
	}
	out["signatures"] = sigs
	return out
}

func gqlSame(t *testing.T, what string, want, got any) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	t.Errorf("%s: GraphQL differs from REST (-REST +GraphQL):\n%s", what, cmp.Diff(want, got))
}

func gqlDecode(t *testing.T, body []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return v
}

func gqlConformanceFolders(t *testing.T) []string {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(conformanceDir, "*", "meta.json"))
	if len(metas) == 0 {
		t.Fatalf("no conformance data sets at %s (see testdata/README.md)", conformanceDir)
	}
	var dirs []string
	for _, m := range metas {
		dirs = append(dirs, filepath.Dir(m))
	}
	sort.Strings(dirs)
	return dirs
}

// gqlTruncateAll empties every table any data set fills (each folder's
// meta.json lists its own), so that no folder sees another's rows.
func gqlTruncateAll(t *testing.T, dirs []string) string {
	t.Helper()
	set := map[string]bool{}
	for _, dir := range dirs {
		var meta struct {
			Truncate []string `json:"truncate"`
		}
		readJSON(t, filepath.Join(dir, "meta.json"), &meta)
		for _, table := range meta.Truncate {
			set[table] = true
		}
	}
	var tables []string
	for table := range set {
		tables = append(tables, table)
	}
	sort.Strings(tables)
	return "TRUNCATE " + strings.Join(tables, ", ")
}
