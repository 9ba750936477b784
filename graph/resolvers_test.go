package graph_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mirrorql/app"
	"mirrorql/graph"
	"mirrorql/tests/testdb"
)

const ed25519Hex = "1111111111111111111111111111111111111111111111111111111111111111"
const ecdsaHex = "022222222222222222222222222222222222222222222222222222222222222222"

// TestResolvers runs queries against the fixture and compares whole answers.
func TestResolvers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		want  string
	}{
		{
			name: "topic with every field",
			query: `{ topic(id: "0.0.7") { id memo deleted createdTimestamp timestamp { from to }
				adminKey { type key } submitKey { type key } feeScheduleKey { type key }
				feeExemptKeyList { type key } autoRenewAccountId autoRenewPeriod
				customFees { createdTimestamp fixedFees { amount collectorAccountId denominatingTokenId } } } }`,
			want: `{"topic": {"id": "0.0.7", "memo": "topic seven", "deleted": false,
				"createdTimestamp": "1234567880.000000001",
				"timestamp": {"from": "1234567880.000000001", "to": null},
				"adminKey": {"type": "ED25519", "key": "` + ed25519Hex + `"},
				"submitKey": {"type": "ECDSA_SECP256K1", "key": "` + ecdsaHex + `"},
				"feeScheduleKey": null,
				"feeExemptKeyList": [{"type": "ED25519", "key": "` + ed25519Hex + `"}, {"type": "ECDSA_SECP256K1", "key": "` + ecdsaHex + `"}],
				"autoRenewAccountId": "0.0.98", "autoRenewPeriod": 7776000,
				"customFees": {"createdTimestamp": "1234567880.000000001", "fixedFees": [
					{"amount": 10, "collectorAccountId": "0.0.98", "denominatingTokenId": null},
					{"amount": 3, "collectorAccountId": "0.0.98", "denominatingTokenId": "0.0.1901"}]}}}`,
		},
		{
			name: "topic with only an entity row",
			query: `{ topic(id: "8") { id memo deleted createdTimestamp adminKey { key } feeExemptKeyList { key }
				autoRenewAccountId autoRenewPeriod customFees { createdTimestamp fixedFees { amount } } } }`,
			want: `{"topic": {"id": "0.0.8", "memo": "", "deleted": null, "createdTimestamp": null, "adminKey": null,
				"feeExemptKeyList": [], "autoRenewAccountId": null, "autoRenewPeriod": null,
				"customFees": {"createdTimestamp": null, "fixedFees": []}}}`,
		},
		{
			name:  "topics without an entity row are null",
			query: `{ a: topic(id: "0.9") { id } b: topic(id: "0.0.99") { id } }`,
			want:  `{"a": null, "b": null}`,
		},
		{
			name: "chunked message with a protobuf initial transaction id",
			query: `{ topicMessage(topicId: "7", sequenceNumber: 4) { topicId sequenceNumber consensusTimestamp message
				payerAccountId runningHash runningHashVersion
				chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }
				chunks { sequenceNumber } fullMessage utf8: fullMessage(encoding: UTF8) topic { id } } }`,
			want: `{"topicMessage": {"topicId": "0.0.7", "sequenceNumber": 4, "consensusTimestamp": "1234567890.000000004",
				"message": "dW4=", "payerAccountId": "0.0.98", "runningHash": "Bwg=", "runningHashVersion": 3,
				"chunkInfo": {"number": 2, "total": 3, "initialTransactionId": {"accountId": "0.0.3", "nonce": 1,
					"scheduled": true, "transactionValidStart": "1234567890.000000000"}},
				"chunks": [{"sequenceNumber": 3}, {"sequenceNumber": 4}, {"sequenceNumber": 5}],
				"fullMessage": "Y2h1bmtz", "utf8": "chunks", "topic": {"id": "0.0.7"}}}`,
		},
		{
			name: "legacy chunk whose sibling is missing, topic without entity row",
			query: `{ topicMessage(topicId: "0.0.9", sequenceNumber: "1") { sequenceNumber
				chunkInfo { number total initialTransactionId { accountId nonce scheduled transactionValidStart } }
				chunks { sequenceNumber } fullMessage topic { id } } }`,
			want: `{"topicMessage": {"sequenceNumber": 1,
				"chunkInfo": {"number": 1, "total": 2, "initialTransactionId": {"accountId": "0.0.98", "nonce": null,
					"scheduled": null, "transactionValidStart": "1234567880.000000000"}},
				"chunks": [{"sequenceNumber": 1}], "fullMessage": null, "topic": null}}`,
		},
		{
			name: "unchunked message: null version is 3, invalid UTF-8",
			query: `{ a: topicMessage(topicId: "7", sequenceNumber: 2) { runningHashVersion message
					utf8: message(encoding: UTF8) chunkInfo { number } chunks { sequenceNumber } fullMessage(encoding: UTF8) }
				b: topicMessage(topicId: "9", sequenceNumber: 2) { payerAccountId runningHashVersion } }`,
			want: `{"a": {"runningHashVersion": 3, "message": "/2jDqQ==", "utf8": "\ufffdhé", "chunkInfo": null,
				"chunks": null, "fullMessage": "\ufffdhé"},
				"b": {"payerAccountId": "0.0.99", "runningHashVersion": 2}}`,
		},
		{
			name:  "missing messages are null; sequence number 0 is valid",
			query: `{ a: topicMessage(topicId: "7", sequenceNumber: 0) { sequenceNumber } b: topicMessage(topicId: "7", sequenceNumber: 99) { sequenceNumber } }`,
			want:  `{"a": null, "b": null}`,
		},
		{
			name: "message by consensus timestamp: only a successful submit",
			query: `{ a: topicMessageByTimestamp(consensusTimestamp: "1234567890.000000002") { topicId sequenceNumber }
				b: topicMessageByTimestamp(consensusTimestamp: "1234567890.000000003") { sequenceNumber }
				c: topicMessageByTimestamp(consensusTimestamp: "1234567890.1") { sequenceNumber } }`,
			want: `{"a": {"topicId": "0.0.7", "sequenceNumber": 2}, "b": null, "c": null}`,
		},
		{
			name: "schedules with every field and status",
			query: `{ schedules { nodes { id adminKey { type key } consensusTimestamp creatorAccountId payerAccountId
				deleted executedTimestamp expirationTime memo transactionBody waitForExpiry status
				signatures { consensusTimestamp publicKeyPrefix signature type } } } }`,
			want: `{"schedules": {"nodes": [
				{"id": "0.0.2000", "adminKey": {"type": "ED25519", "key": "` + ed25519Hex + `"},
				 "consensusTimestamp": "1234567800.000000001", "creatorAccountId": "0.0.98", "payerAccountId": "0.0.98",
				 "deleted": false, "executedTimestamp": "1234567800.000000009", "expirationTime": null, "memo": "executed one",
				 "transactionBody": "CgsM", "waitForExpiry": false, "status": "EXECUTED",
				 "signatures": [
					{"consensusTimestamp": "1234567800.000000001", "publicKeyPrefix": "AQI=",
					 "signature": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMz\nMzMzMzMzMw==", "type": "ED25519"},
					{"consensusTimestamp": "1234567800.000000005", "publicKeyPrefix": "AwQ=", "signature": "BQY=", "type": "UNKNOWN"}]},
				{"id": "0.0.2001", "adminKey": null, "consensusTimestamp": "1234567800.000000002", "creatorAccountId": "0.0.98",
				 "payerAccountId": "0.0.99", "deleted": null, "executedTimestamp": null, "expirationTime": "1234567900.000000000",
				 "memo": null, "transactionBody": "DQ==", "waitForExpiry": true, "status": "EXPIRED", "signatures": []},
				{"id": "0.0.2002", "adminKey": {"type": "PROTOBUF_ENCODED", "key": "010101"}, "consensusTimestamp": "1234567800.000000003",
				 "creatorAccountId": "0.0.99", "payerAccountId": "0.0.98", "deleted": true, "executedTimestamp": null,
				 "expirationTime": null, "memo": "deleted one", "transactionBody": "Dg==", "waitForExpiry": false,
				 "status": "DELETED", "signatures": []},
				{"id": "0.0.2003", "adminKey": null, "consensusTimestamp": "1234567800.000000004", "creatorAccountId": "0.0.99",
				 "payerAccountId": "0.0.99", "deleted": false, "executedTimestamp": null, "expirationTime": "2234567800.000000000",
				 "memo": "pending one", "transactionBody": "Dw==", "waitForExpiry": false, "status": "PENDING",
				 "signatures": [{"consensusTimestamp": "1234567800.000000004", "publicKeyPrefix": "Bw==", "signature": "CA==", "type": "ECDSA_SECP256K1"}]}]}}`,
		},
		{
			name:  "single schedule; a missing one is null",
			query: `{ a: schedule(id: "2001") { id memo deleted status } b: schedule(id: "0.0.7") { id } }`,
			want:  `{"a": {"id": "0.0.2001", "memo": null, "deleted": null, "status": "EXPIRED"}, "b": null}`,
		},
		{
			name: "schedule filters: creator, id range, EVM addresses",
			query: `{ a: schedules(creatorAccountId: {eq: "0.0.99"}, order: DESC) { nodes { id } }
				b: schedules(scheduleId: {gt: "2000", lte: "0.2002"}) { nodes { id } }
				c: schedules(scheduleId: {eq: "0x00000000000000000000000000000000000007d3"}) { nodes { id } }
				d: schedules(creatorAccountId: {eq: "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"}) { nodes { id } pageInfo { hasNextPage endCursor } } }`,
			want: `{"a": {"nodes": [{"id": "0.0.2003"}, {"id": "0.0.2002"}]},
				"b": {"nodes": [{"id": "0.0.2001"}, {"id": "0.0.2002"}]},
				"c": {"nodes": [{"id": "0.0.2003"}]},
				"d": {"nodes": [], "pageInfo": {"hasNextPage": false, "endCursor": null}}}`,
		},
		{
			name: "message filters",
			query: `{ a: topicMessages(topicId: "7", sequenceNumber: {gte: 2, lt: "5", ne: 3}) { nodes { sequenceNumber } }
				b: topicMessages(topicId: "7", consensusTimestamp: {gt: "1234567890.000000003"}, order: DESC) { nodes { sequenceNumber } }
				c: topicMessages(topicId: "7", sequenceNumber: {eq: 1}, consensusTimestamp: {eq: "1234567890.000000002"}) { nodes { sequenceNumber } }
				d: topicMessages(topicId: "0.0.12345") { nodes { sequenceNumber } pageInfo { hasNextPage endCursor } } }`,
			want: `{"a": {"nodes": [{"sequenceNumber": 2}, {"sequenceNumber": 4}]},
				"b": {"nodes": [{"sequenceNumber": 5}, {"sequenceNumber": 4}]},
				"c": {"nodes": []},
				"d": {"nodes": [], "pageInfo": {"hasNextPage": false, "endCursor": null}}}`,
		},
		{
			name: "topics ordered by id with nested messages and message",
			query: `{ topics { nodes { id message(sequenceNumber: 5) { sequenceNumber } messages(first: 2, order: DESC) {
				nodes { sequenceNumber } pageInfo { hasNextPage } } } }
				desc: topics(order: DESC, id: {lte: "0.0.7"}) { nodes { id } } }`,
			want: `{"topics": {"nodes": [
				{"id": "0.0.7", "message": {"sequenceNumber": 5}, "messages": {"nodes": [{"sequenceNumber": 5}, {"sequenceNumber": 4}], "pageInfo": {"hasNextPage": true}}},
				{"id": "0.0.8", "message": null, "messages": {"nodes": [], "pageInfo": {"hasNextPage": false}}}]},
				"desc": {"nodes": [{"id": "0.0.7"}]}}`,
		},
		{
			name:  "variables of every scalar",
			query: `query($t: EntityId!, $s: Long!, $ts: Timestamp!) { topicMessage(topicId: $t, sequenceNumber: $s) { sequenceNumber } topicMessageByTimestamp(consensusTimestamp: $ts) { sequenceNumber } }`,
			vars:  map[string]any{"t": "0.7", "s": json.Number("5"), "ts": "1234567890.000000002"},
			want:  `{"topicMessage": {"sequenceNumber": 5}, "topicMessageByTimestamp": {"sequenceNumber": 2}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.query, tc.vars)
			if len(r.Errors) > 0 {
				t.Fatalf("errors: %+v", r.Errors)
			}
			if diff := cmp.Diff(mustJSON(t, tc.want), r.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidArguments: each mistake gives REST's message for it, in REST's
// order, with extensions.code BAD_USER_INPUT.
func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"topic id syntax", `{ topic(id: "a.b.c") { id } }`, []string{"Invalid parameter: topic.id"}},
		{"topic id out of range", `{ topic(id: "-5") { id } }`, []string{`Invalid entity ID "0.0.-5"`}},
		{"topic id: EVM address", `{ topic(id: "0x0000000000000000000000000000000000000007") { id } }`, []string{"Invalid parameter: topic.id"}},
		{"by sequence: both mistakes", `{ topicMessage(topicId: "0.0.-3", sequenceNumber: "a") { sequenceNumber } }`,
			[]string{"Invalid parameter: topic.id", "Invalid parameter: sequencenumber"}},
		{"by sequence: negative", `{ topicMessage(topicId: "7", sequenceNumber: -1) { sequenceNumber } }`, []string{"Invalid parameter: sequencenumber"}},
		{"by sequence: beyond int64", `{ topicMessage(topicId: "7", sequenceNumber: "9223372036854775808") { sequenceNumber } }`, []string{"Invalid parameter: sequencenumber"}},
		{"by sequence: big num", `{ topicMessage(topicId: "274877906951", sequenceNumber: 1) { sequenceNumber } }`, []string{`Invalid entity ID "0.0.274877906951"`}},
		{"by timestamp", `{ topicMessageByTimestamp(consensusTimestamp: "123abc") { sequenceNumber } }`, []string{"Invalid parameter: consensus_timestamp"}},
		{"by timestamp: overflow", `{ topicMessageByTimestamp(consensusTimestamp: "9999999999.999999999") { sequenceNumber } }`, []string{"Invalid parameter: consensus_timestamp"}},
		{"list: the topic id alone", `{ topicMessages(topicId: "x", first: 0) { nodes { sequenceNumber } } }`, []string{"Invalid parameter: topic.id"}},
		{"list: every other argument", `{ topicMessages(topicId: "7", sequenceNumber: {gt: "x", lt: "2_2"}, consensusTimestamp: {lt: "18:34"}, first: 0, after: "zzz") { nodes { sequenceNumber } } }`,
			[]string{"Invalid parameter: sequencenumber", "Invalid parameter: sequencenumber", "Invalid parameter: timestamp", "Invalid parameter: limit", "Invalid parameter: after"}},
		{"list: a cursor of another list", `{ topicMessages(topicId: "7", after: "c2M6MjAwMA") { nodes { sequenceNumber } } }`, []string{"Invalid parameter: after"}},
		{"schedule id", `{ schedule(id: "0.7.8.9") { id } }`, []string{"Invalid parameter: scheduleid"}},
		{"schedule id: EVM address", `{ schedule(id: "0x0000000000000000000000000000000000000007") { id } }`, []string{"Invalid parameter: scheduleid"}},
		{"schedules: every argument", `{ schedules(scheduleId: {eq: "x.y.z"}, creatorAccountId: {gt: "-92233720368547758080"}, first: -1) { nodes { id } } }`,
			[]string{"Invalid parameter: schedule.id", "Invalid parameter: account.id", "Invalid parameter: limit"}},
		{"schedules: parse failure after validation", `{ schedules(creatorAccountId: {eq: "-5"}) { nodes { id } } }`, []string{`Invalid entity ID "0.0.-5"`}},
		{"topics", `{ topics(id: {eq: "a"}) { nodes { id } } }`, []string{"Invalid parameter: topic.id"}},
		{"nested message", `{ topic(id: "7") { message(sequenceNumber: "x") { sequenceNumber } } }`, []string{"Invalid parameter: sequencenumber"}},
		{"nested messages", `{ topic(id: "7") { messages(first: 0) { nodes { sequenceNumber } } } }`, []string{"Invalid parameter: limit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.query, nil)
			var got []string
			for _, err := range r.Errors {
				got = append(got, err.Message)
				if err.Extensions["code"] != graph.CodeBadUserInput {
					t.Errorf("%q: extensions %v, want code %s", err.Message, err.Extensions, graph.CodeBadUserInput)
				}
				if len(err.Path) == 0 {
					t.Errorf("%q: no path", err.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFirstIsCapped: `first` above the maximum page size gives a page of the
// maximum; an explicit null gives the configured default page size, and an
// absent `first` the schema's default, 25 (here capped at 3).
func TestFirstIsCapped(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, testdb.Layout(), fixtureSQL, app.Rules{Pages: app.PageSizes{Default: 2, Max: 3}}, graph.Options{})
	r := e.do(t, `{ a: topicMessages(topicId: "7", first: 1000) { nodes { sequenceNumber } pageInfo { hasNextPage } }
		b: topicMessages(topicId: "7", first: null) { nodes { sequenceNumber } }
		c: topicMessages(topicId: "7") { nodes { sequenceNumber } } }`, nil)
	want := `{"a": {"nodes": [{"sequenceNumber": 1}, {"sequenceNumber": 2}, {"sequenceNumber": 3}], "pageInfo": {"hasNextPage": true}},
		"b": {"nodes": [{"sequenceNumber": 1}, {"sequenceNumber": 2}]},
		"c": {"nodes": [{"sequenceNumber": 1}, {"sequenceNumber": 2}, {"sequenceNumber": 3}]}}`
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if diff := cmp.Diff(mustJSON(t, want), r.Data); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPaging follows endCursor through every list of the fixture, in both
// orders and every page size: the pages hold every row once, in order, and
// hasNextPage is false exactly on the last.
func TestPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fixtureSQL, graph.Options{})
	lists := []struct {
		name, field, args, key string
		all                    []any
	}{
		{"messages", "topicMessages", `topicId: "7"`, "sequenceNumber", []any{1.0, 2.0, 3.0, 4.0, 5.0}},
		{"nested messages", "topic", `id: "7"`, "sequenceNumber", []any{1.0, 2.0, 3.0, 4.0, 5.0}},
		{"schedules", "schedules", ``, "id", []any{"0.0.2000", "0.0.2001", "0.0.2002", "0.0.2003"}},
		{"topics", "topics", ``, "id", []any{"0.0.7", "0.0.8"}},
	}
	for _, l := range lists {
		for _, order := range []string{"ASC", "DESC"} {
			for first := 1; first <= len(l.all)+1; first++ {
				var got []any
				var cursor any
				for pages := 0; ; pages++ {
					if pages > len(l.all)+1 {
						t.Fatalf("%s %s first %d: no end", l.name, order, first)
					}
					args := l.args
					if args != "" {
						args += ", "
					}
					conn := `%s(%sorder: %s, first: %d, after: $after) { edges { cursor node { %s } } pageInfo { hasNextPage endCursor } }`
					var q string
					if l.field == "topic" {
						q = "query($after: String) { topic(" + l.args + ") { " + sprintf(conn, "messages", "", order, first, l.key) + " } }"
					} else {
						q = "query($after: String) { " + sprintf(conn, l.field, args, order, first, l.key) + " }"
					}
					r := e.do(t, q, map[string]any{"after": cursor})
					if len(r.Errors) > 0 {
						t.Fatalf("errors: %+v", r.Errors)
					}
					c := r.Data.(map[string]any)[l.field].(map[string]any)
					if l.field == "topic" {
						c = c["messages"].(map[string]any)
					}
					edges := c["edges"].([]any)
					for _, edge := range edges {
						got = append(got, edge.(map[string]any)["node"].(map[string]any)[l.key])
					}
					info := c["pageInfo"].(map[string]any)
					if len(edges) > 0 && info["endCursor"] != edges[len(edges)-1].(map[string]any)["cursor"] {
						t.Errorf("endCursor %v is not the last edge's cursor", info["endCursor"])
					}
					if info["hasNextPage"] != true {
						break
					}
					cursor = info["endCursor"]
				}
				want := append([]any(nil), l.all...)
				if order == "DESC" {
					for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
						want[i], want[j] = want[j], want[i]
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %s first %d (-want +got):\n%s", l.name, order, first, diff)
				}
			}
		}
	}
}

// TestNullPayer: a message without a payer, which v1's topic_message holds
// (its payer_account_id is nullable; v2's is not), has a null
// payerAccountId.
func TestNullPayer(t *testing.T) {
	t.Parallel()
	e := newEnvLayout(t, testdb.LayoutV1, fixtureSQL+`;
		UPDATE topic_message SET payer_account_id = NULL WHERE topic_id = 9 AND sequence_number = 2`, graph.Options{})
	got := e.do(t, `{ topicMessage(topicId: "9", sequenceNumber: 2) { payerAccountId runningHashVersion } }`, nil)
	want := `{"topicMessage": {"payerAccountId": null, "runningHashVersion": 2}}`
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if len(got.Errors) > 0 {
		t.Fatalf("errors %v", got.Errors)
	}
	if d := cmp.Diff(w, got.Data); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
