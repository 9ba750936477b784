package seed

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protowire"

	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// smallOptions is quick to load yet has everything: a hot topic, topics of
// fewer than 8 messages (no fixed prelude), deleted topics, every schedule
// state and every signature count.
func smallOptions() Options {
	o := DefaultOptions()
	o.Topics = 25
	o.MessagesPerTopic = 60
	o.HotTopicMessages = 1500
	o.Schedules = 60
	return o
}

// seeded returns a connection to a fresh, migrated database holding o's
// data set, loaded by Run.
func seeded(t *testing.T, o Options) (*pgx.Conn, Stats) {
	t.Helper()
	return seed(t, o, false)
}

// seed loads o's data set into a fresh database, by Run or (parallel) by RunURL.
func seed(t *testing.T, o Options, parallel bool) (*pgx.Conn, Stats) {
	t.Helper()
	url, _ := testdb.New(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var st Stats
	if parallel {
		st, err = RunURL(ctx, url, o)
	} else {
		st, err = Run(ctx, conn, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return conn, st
}

func queryInt(t *testing.T, conn *pgx.Conn, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func wantSignatures(o Options) int64 {
	var n int64
	for j := range o.Schedules {
		n += int64((j + 3) % 5)
	}
	return n
}

func TestCounts(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	conn, st := seeded(t, o)
	messages := int64(1500 + 24*60)
	want := map[string]int64{
		"entity":                Accounts + Tokens + int64(o.Topics+o.Schedules),
		"topic":                 int64(o.Topics),
		"custom_fee":            int64(o.Topics),
		"schedule":              int64(o.Schedules),
		"transaction_signature": wantSignatures(o),
		"topic_message":         messages,
		"transaction":           messages + o.FailedTransactions() + int64(o.Topics),
	}
	got := map[string]int64{
		"entity": st.Entities, "topic": st.Topics, "custom_fee": st.CustomFees, "schedule": st.Schedules,
		"transaction_signature": st.TransactionSignatures, "topic_message": st.TopicMessages,
		"transaction": st.Transactions,
	}
	if o.TotalMessages() != messages {
		t.Errorf("TotalMessages() = %d, want %d", o.TotalMessages(), messages)
	}
	for _, table := range Tables {
		if got[table] != want[table] {
			t.Errorf("Stats for %s = %d, want %d", table, got[table], want[table])
		}
		if n := queryInt(t, conn, "select count(*) from "+table); n != want[table] {
			t.Errorf("count(%s) = %d, want %d", table, n, want[table])
		}
	}
	if st.Rows() != sum(want) {
		t.Errorf("Rows() = %d, want %d", st.Rows(), sum(want))
	}

	// Entity rows by type.
	for typ, n := range map[string]int64{"ACCOUNT": Accounts, "TOKEN": Tokens, "TOPIC": int64(o.Topics), "SCHEDULE": int64(o.Schedules)} {
		if got := queryInt(t, conn, "select count(*) from entity where type = $1::text::entity_type", typ); got != n {
			t.Errorf("entities of type %s = %d, want %d", typ, got, n)
		}
	}
	// Every topic and schedule has its entity row, under the documented ids.
	if n := queryInt(t, conn, "select count(*) from topic join entity e using (id) where e.type = 'TOPIC'"); n != int64(o.Topics) {
		t.Errorf("topics with an entity row = %d", n)
	}
	if n := queryInt(t, conn, "select count(*) from schedule s join entity e on e.id = s.schedule_id where e.type = 'SCHEDULE'"); n != int64(o.Schedules) {
		t.Errorf("schedules with an entity row = %d", n)
	}
	if n := queryInt(t, conn, "select min(id) from topic"); n != o.TopicID(0) || n != 2001 {
		t.Errorf("first topic = %d, want %d", n, o.TopicID(0))
	}
	if n := queryInt(t, conn, "select min(schedule_id) from schedule"); n != o.ScheduleID(0) || n != 3001 {
		t.Errorf("first schedule = %d, want %d", n, o.ScheduleID(0))
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func TestMessages(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	conn, _ := seeded(t, o)
	ctx := context.Background()

	// Sequence numbers 1..N per topic, timestamps increasing with them and
	// unique across topics.
	rows, err := conn.Query(ctx, `select topic_id, count(*), min(sequence_number), max(sequence_number),
		count(distinct sequence_number) from topic_message group by topic_id order by topic_id`)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var topic, n, lo, hi, distinct int64
		if err := rows.Scan(&topic, &n, &lo, &hi, &distinct); err != nil {
			t.Fatal(err)
		}
		want := o.TopicMessages(i)
		if topic != o.TopicID(i) || n != want || lo != 1 || hi != want || distinct != want {
			t.Errorf("topic %d: id %d, %d messages, seq %d..%d (%d distinct); want id %d, %d messages",
				i, topic, n, lo, hi, distinct, o.TopicID(i), want)
		}
		i++
	}
	if rows.Err() != nil || i != o.Topics {
		t.Fatalf("topics with messages: %d (%v)", i, rows.Err())
	}
	if n := queryInt(t, conn, `select count(*) from (
		select consensus_timestamp <= lag(consensus_timestamp) over (partition by topic_id order by sequence_number) as bad
		from topic_message) x where bad`); n != 0 {
		t.Errorf("%d messages not later than their predecessor", n)
	}
	if n := queryInt(t, conn, "select count(*) - count(distinct consensus_timestamp) from topic_message"); n != 0 {
		t.Errorf("%d duplicate message timestamps", n)
	}
	if n := queryInt(t, conn, "select count(*) from topic_message where consensus_timestamp < $1", o.MessagesStart()); n != 0 {
		t.Errorf("%d messages before MessagesStart", n)
	}
	// Topics are created before their first message.
	if n := queryInt(t, conn, `select count(*) from topic_message m join topic t on t.id = m.topic_id
		where m.consensus_timestamp <= t.created_timestamp`); n != 0 {
		t.Errorf("%d messages before their topic was created", n)
	}
	// MessageTimestamp computes the stored timestamps.
	for _, c := range []struct {
		topic int
		seq   int64
	}{{0, 1}, {0, 2}, {0, 1500}, {1, 1}, {7, 33}, {24, 60}} {
		want := o.MessageTimestamp(c.topic, c.seq)
		got := queryInt(t, conn, "select consensus_timestamp from topic_message where topic_id = $1 and sequence_number = $2",
			o.TopicID(c.topic), c.seq)
		if got != want {
			t.Errorf("topic %d seq %d: timestamp %d, MessageTimestamp says %d", c.topic, c.seq, got, want)
		}
	}

	// Running hashes and versions.
	if n := queryInt(t, conn, "select count(*) from topic_message where length(running_hash) <> 48"); n != 0 {
		t.Errorf("%d running hashes not 48 bytes", n)
	}
	if n := queryInt(t, conn, "select count(*) from topic_message where running_hash_version is distinct from 3 and running_hash_version is not null"); n != 0 {
		t.Errorf("%d running_hash_version not 3 or NULL", n)
	}
	if n := queryInt(t, conn, "select count(*) from topic_message where running_hash_version is null"); n == 0 {
		t.Error("no message with a NULL running_hash_version")
	}
	if n := queryInt(t, conn, "select count(*) from topic_message where payer_account_id is null"); n != 0 {
		t.Errorf("%d messages without payer", n)
	}

	// Payload kinds: UTF-8 text, JSON documents, binary.
	var text, jsonDocs, binary, unicode int
	rows, err = conn.Query(ctx, "select message from topic_message where chunk_num is null")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m []byte
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		switch {
		case len(m) == 0:
			t.Error("empty message")
		case !utf8.Valid(m):
			binary++
		case json.Valid(m) && m[0] == '{':
			jsonDocs++
		default:
			text++
		}
		if utf8.Valid(m) && bytes.ContainsFunc(m, func(r rune) bool { return r > 0x7f }) {
			unicode++
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	t.Logf("unchunked messages: %d text, %d JSON, %d binary (%d with non-ASCII text)", text, jsonDocs, binary, unicode)
	if text == 0 || jsonDocs == 0 || binary == 0 || unicode == 0 {
		t.Error("a payload kind is missing")
	}

	// The fixed prelude of topic 0.
	var kinds []string
	rows, err = conn.Query(ctx, `select message, chunk_num, chunk_total, initial_transaction_id is not null, valid_start_timestamp is not null
		from topic_message where topic_id = $1 and sequence_number <= 8 order by sequence_number`, o.TopicID(0))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m []byte
		var num, total *int32
		var newForm, legacy bool
		if err := rows.Scan(&m, &num, &total, &newForm, &legacy); err != nil {
			t.Fatal(err)
		}
		switch {
		case num != nil && newForm:
			kinds = append(kinds, "new")
		case num != nil && legacy:
			kinds = append(kinds, "legacy")
		case !utf8.Valid(m):
			kinds = append(kinds, "binary")
		case json.Valid(m):
			kinds = append(kinds, "json")
		default:
			kinds = append(kinds, "text")
		}
	}
	if got := fmtList(kinds); got != "text json binary new new new legacy legacy" {
		t.Errorf("prelude of topic 0 = %s", got)
	}
}

func fmtList(s []string) string {
	var b []byte
	for i, v := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, v...)
	}
	return string(b)
}

func TestChunkGroups(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	conn, _ := seeded(t, o)
	rows, err := conn.Query(context.Background(), `select topic_id, sequence_number, consensus_timestamp, chunk_num, chunk_total,
		initial_transaction_id, valid_start_timestamp, payer_account_id
		from topic_message where chunk_num is not null order by topic_id, sequence_number`)
	if err != nil {
		t.Fatal(err)
	}
	type chunk struct {
		topic, seq, ts int64
		num, total     int32
		initTx         []byte
		validStart     *int64
		payer          int64
	}
	var prev chunk
	groups, newForm, legacy, multi := 0, 0, 0, 0
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.topic, &c.seq, &c.ts, &c.num, &c.total, &c.initTx, &c.validStart, &c.payer); err != nil {
			t.Fatal(err)
		}
		if c.num < 1 || c.num > c.total {
			t.Fatalf("topic %d seq %d: chunk %d of %d", c.topic, c.seq, c.num, c.total)
		}
		if c.num == 1 {
			if prev.num != prev.total {
				t.Errorf("topic %d seq %d: group ends at chunk %d of %d", prev.topic, prev.seq, prev.num, prev.total)
			}
			groups++
			if c.total > 1 {
				multi++
			}
			switch {
			case c.initTx != nil && c.validStart == nil:
				newForm++
				// The initial transaction id names the payer and a valid
				// start before the first chunk.
				validStart, payer := decodeTransactionID(t, c.initTx)
				if payer != c.payer || validStart >= c.ts || validStart < c.ts-10*second {
					t.Errorf("topic %d seq %d: initial transaction id %x: payer %d valid start %d, row payer %d ts %d",
						c.topic, c.seq, c.initTx, payer, validStart, c.payer, c.ts)
				}
			case c.initTx == nil && c.validStart != nil:
				legacy++
				if *c.validStart >= c.ts {
					t.Errorf("topic %d seq %d: legacy valid start %d after %d", c.topic, c.seq, *c.validStart, c.ts)
				}
			default:
				t.Errorf("topic %d seq %d: neither chunk info form", c.topic, c.seq)
			}
		} else {
			// A later chunk: the next sequence number of the same topic, same group.
			if c.topic != prev.topic || c.seq != prev.seq+1 || c.num != prev.num+1 || c.total != prev.total ||
				!bytes.Equal(c.initTx, prev.initTx) || c.payer != prev.payer ||
				(c.validStart == nil) != (prev.validStart == nil) ||
				(c.validStart != nil && *c.validStart != *prev.validStart+1) { // each chunk's own valid start
				t.Errorf("topic %d seq %d chunk %d/%d does not continue topic %d seq %d chunk %d/%d",
					c.topic, c.seq, c.num, c.total, prev.topic, prev.seq, prev.num, prev.total)
			}
		}
		prev = c
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if prev.num != prev.total {
		t.Errorf("last group ends at chunk %d of %d", prev.num, prev.total)
	}
	t.Logf("%d chunk groups (%d of several chunks): %d new form, %d legacy", groups, multi, newForm, legacy)
	if newForm < o.Topics || legacy < o.Topics/3 || multi < o.Topics {
		t.Error("too few chunk groups of some form")
	}
}

// decodeTransactionID parses protobuf TransactionID bytes (docs/reference/behavior.md §2.4).
func decodeTransactionID(t *testing.T, b []byte) (validStart, payer int64) {
	t.Helper()
	fields := func(b []byte, f func(n protowire.Number, v uint64, sub []byte)) {
		for len(b) > 0 {
			n, typ, l := protowire.ConsumeTag(b)
			if l < 0 {
				t.Fatalf("bad tag in %x", b)
			}
			b = b[l:]
			switch typ {
			case protowire.VarintType:
				v, l := protowire.ConsumeVarint(b)
				f(n, v, nil)
				b = b[l:]
			case protowire.BytesType:
				v, l := protowire.ConsumeBytes(b)
				f(n, 0, v)
				b = b[l:]
			default:
				t.Fatalf("unexpected wire type %d in %x", typ, b)
			}
		}
	}
	fields(b, func(n protowire.Number, _ uint64, sub []byte) {
		switch n {
		case 1:
			fields(sub, func(n protowire.Number, v uint64, _ []byte) {
				if n == 1 {
					validStart += int64(v) * second
				} else {
					validStart += int64(v)
				}
			})
		case 2:
			var shard, realm, num int64
			fields(sub, func(n protowire.Number, v uint64, _ []byte) {
				switch n {
				case 1:
					shard = int64(v)
				case 2:
					realm = int64(v)
				case 3:
					num = int64(v)
				}
			})
			payer = shard<<54 | realm<<38 | num
		}
	})
	return validStart, payer
}

func TestTransactions(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	o.Shard, o.Realm = 1, 2 // ids are encoded with them everywhere
	conn, _ := seeded(t, o)
	// Every message has its successful submit transaction, as the
	// by-timestamp route requires.
	if n := queryInt(t, conn, `select count(*) from topic_message m left join transaction t
		on t.consensus_timestamp = m.consensus_timestamp and t.result = 22 and t.type = 27
		and t.entity_id = m.topic_id and t.payer_account_id = m.payer_account_id
		where t.consensus_timestamp is null`); n != 0 {
		t.Errorf("%d messages without their transaction", n)
	}
	// Failed submissions have no message.
	if n := queryInt(t, conn, "select count(*) from transaction where result <> 22"); n != o.FailedTransactions() {
		t.Errorf("failed transactions = %d, want %d", n, o.FailedTransactions())
	}
	if n := queryInt(t, conn, `select count(*) from transaction t join topic_message m
		on m.consensus_timestamp = t.consensus_timestamp where t.result <> 22 or t.type <> 27`); n != 0 {
		t.Errorf("%d failed or non-submit transactions with a message", n)
	}
	if n := queryInt(t, conn, "select count(*) from transaction where type = 24 and result = 22"); n != int64(o.Topics) {
		t.Errorf("topic creations = %d, want %d", n, o.Topics)
	}
	if n := queryInt(t, conn, "select count(*) from transaction where valid_start_ns >= consensus_timestamp"); n != 0 {
		t.Errorf("%d transactions valid from after their consensus", n)
	}
	if n := queryInt(t, conn, "select count(*) from topic where id >> 54 <> 1 or (id >> 38) & 65535 <> 2"); n != 0 {
		t.Errorf("%d topic ids not in shard 1 realm 2", n)
	}
	if n := queryInt(t, conn, "select min(id) from topic"); n != o.TopicID(0) || n != 1<<54|2<<38|2001 {
		t.Errorf("first topic = %d, want 1.2.2001 = %d", n, o.TopicID(0))
	}
}

func TestTopicsAndSchedules(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	o.Topics, o.MessagesPerTopic = 40, 3
	conn, _ := seeded(t, o)

	// Key kinds (by hex prefix and length), in every key column.
	keyKinds := func(q string) map[string]int {
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for rows.Next() {
			var k []byte
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			kinds[keyKind(k)]++
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		return kinds
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"select admin_key from topic", []string{"null", "ED25519", "ECDSA", "list1", "threshold1", "other", "immutable"}},
		{"select submit_key from topic", []string{"null", "ED25519", "ECDSA", "list1", "other"}},
		{"select fee_schedule_key from topic", []string{"null", "ED25519", "ECDSA"}},
		{"select key from entity where type = 'SCHEDULE'", []string{"null", "ED25519", "ECDSA", "list1", "other"}},
	} {
		got := keyKinds(c.q)
		for _, k := range c.want {
			if got[k] == 0 {
				t.Errorf("%s: no %s key (%v)", c.q, k, got)
			}
		}
	}
	// Topic entity key is the topic's admin key.
	if n := queryInt(t, conn, "select count(*) from topic join entity e using (id) where e.key is distinct from topic.admin_key"); n != 0 {
		t.Errorf("%d topics whose entity.key differs from admin_key", n)
	}
	// fee_exempt_key_list: NULL, empty, and KeyLists of 1–3 keys.
	for q, want := range map[string]int64{
		"select count(*) from topic where fee_exempt_key_list is null":                           1,
		"select count(*) from topic where fee_exempt_key_list = ''::bytea":                       1,
		"select count(*) from topic where substring(fee_exempt_key_list from 1 for 1) = '\\x0a'": 3,
	} {
		if n := queryInt(t, conn, q); n < want {
			t.Errorf("%s = %d, want ≥ %d", q, n, want)
		}
	}
	// Deleted topics, and topic 0 is live.
	if n := queryInt(t, conn, "select count(*) from entity where type = 'TOPIC' and deleted"); n == 0 {
		t.Error("no deleted topic")
	}
	if n := queryInt(t, conn, "select count(*) from entity where id = $1 and not deleted", o.TopicID(0)); n != 1 {
		t.Error("topic 0 is not a live topic")
	}
	// Custom fees: [], NULL, HBAR-only and token-denominated.
	for q, min := range map[string]int64{
		"select count(*) from custom_fee where fixed_fees = '[]'::jsonb":                                                                                                                                          1,
		"select count(*) from custom_fee where fixed_fees is null":                                                                                                                                                1,
		"select count(*) from custom_fee where jsonb_array_length(fixed_fees) = 1":                                                                                                                                1,
		"select count(*) from custom_fee where jsonb_array_length(fixed_fees) = 2":                                                                                                                                1,
		"select count(*) from custom_fee, jsonb_array_elements(fixed_fees) f where f->'denominating_token_id' = 'null'::jsonb":                                                                                    1,
		"select count(*) from custom_fee, jsonb_array_elements(fixed_fees) f where (f->>'denominating_token_id')::bigint between 1901 and 1905":                                                                   1,
		"select count(*) from custom_fee, jsonb_array_elements(fixed_fees) f where (f->>'collector_account_id')::bigint between 1001 and 1100 and (f->>'amount')::bigint > 0 and f ? 'all_collectors_are_exempt'": 1,
		"select count(*) from custom_fee c join topic t on t.id = c.entity_id where lower(c.timestamp_range) = t.created_timestamp and upper_inf(c.timestamp_range)":                                              40,
	} {
		if n := queryInt(t, conn, q); n < min {
			t.Errorf("%s = %d, want ≥ %d", q, n, min)
		}
	}

	// Schedules: every state.
	base := o.base()
	for q, min := range map[string]int64{
		"select count(*) from schedule where executed_timestamp > consensus_timestamp":                                             1,
		"select count(*) from schedule s join entity e on e.id = s.schedule_id where e.deleted and s.executed_timestamp is null":   1,
		"select count(*) from schedule where expiration_time < $1 and executed_timestamp is null":                                  1,
		"select count(*) from schedule where expiration_time > $1 + 50 * 365 * 86400 * 1000000000::bigint and not wait_for_expiry": 1,
		"select count(*) from schedule where expiration_time > $1 + 50 * 365 * 86400 * 1000000000::bigint and wait_for_expiry":     1,
		"select count(*) from schedule where expiration_time is null and executed_timestamp is null":                               1,
		"select count(*) from schedule where consensus_timestamp < $1 - 3600 * 1000000000::bigint":                                 200,
		"select count(*) from schedule where payer_account_id <> creator_account_id":                                               1,
		"select count(*) from schedule where payer_account_id = creator_account_id":                                                1,
		"select count(*) from entity where type = 'SCHEDULE' and memo <> ''":                                                       1,
		"select count(*) from entity where type = 'SCHEDULE' and memo = ''":                                                        1,
	} {
		var args []any
		if bytes.Contains([]byte(q), []byte("$1")) {
			args = append(args, base)
		}
		if n := queryInt(t, conn, q, args...); n < min {
			t.Errorf("%s = %d, want ≥ %d", q, n, min)
		}
	}
	// Signatures: 0–4 per schedule, every type code and NULL, 32 and 64 bytes,
	// distinct timestamps within a schedule.
	if n := queryInt(t, conn, `select count(distinct n) from (select s.schedule_id, count(ts.entity_id) n
		from schedule s left join transaction_signature ts on ts.entity_id = s.schedule_id group by s.schedule_id) x`); n != 5 {
		t.Errorf("%d distinct signature counts, want 5 (0..4)", n)
	}
	if n := queryInt(t, conn, "select count(distinct coalesce(type, -1)) from transaction_signature where type between 2 and 6 or type is null"); n != 6 {
		t.Errorf("%d distinct signature types, want 6 (2..6 and NULL)", n)
	}
	if n := queryInt(t, conn, "select count(distinct length(signature)) from transaction_signature where length(signature) in (32, 64)"); n != 2 {
		t.Error("signatures are not both 32 and 64 bytes long")
	}
	if n := queryInt(t, conn, "select count(*) from transaction_signature where length(encode(signature, 'base64')) > 76"); n == 0 {
		t.Error("no signature longer than 76 base64 characters")
	}
	if n := queryInt(t, conn, "select count(*) - count(distinct (entity_id, consensus_timestamp)) from transaction_signature"); n != 0 {
		t.Errorf("%d signatures share a schedule and timestamp", n)
	}
	if n := queryInt(t, conn, `select count(*) from transaction_signature ts join schedule s on s.schedule_id = ts.entity_id
		where ts.consensus_timestamp < s.consensus_timestamp`); n != 0 {
		t.Errorf("%d signatures before their schedule", n)
	}
	if n := queryInt(t, conn, "select count(*) from schedule where length(transaction_body) < 10"); n != 0 {
		t.Errorf("%d schedules with a short transaction body", n)
	}
}

// keyKind names the shape of protobuf Key bytes (docs/reference/behavior.md §5.3).
func keyKind(k []byte) string {
	h := hex.EncodeToString(k)
	switch {
	case k == nil:
		return "null"
	case h == "3200":
		return "immutable"
	case len(k) == 34 && h[:4] == "1220":
		return "ED25519"
	case len(k) == 35 && h[:4] == "3a21":
		return "ECDSA"
	case len(k) == 38 && h[:12] == "32240a221220":
		return "list1"
	case len(k) == 43 && h[:20] == "2a29080112250a233a21":
		return "threshold1"
	}
	return "other"
}

// tableDigests is md5 over every row of every table, in a fixed order.
func tableDigests(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, table := range Tables {
		var s string
		q := "select md5(string_agg(t::text, '|' order by t::text)) from " + table + " t"
		if err := conn.QueryRow(context.Background(), q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		d[table] = s
	}
	return d
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	a, sa := seed(t, o, false)
	b, sb := seed(t, o, true) // RunURL: two connections, same rows
	da, db := tableDigests(t, a), tableDigests(t, b)
	for _, table := range Tables {
		if da[table] != db[table] {
			t.Errorf("%s differs between two runs: %s vs %s", table, da[table], db[table])
		}
	}
	sa.Elapsed, sb.Elapsed = 0, 0
	if sa != sb {
		t.Errorf("Stats differ: %v vs %v", sa, sb)
	}
	// Another seed gives other data.
	o.Seed++
	if err := Reset(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), b, o); err != nil {
		t.Fatal(err)
	}
	dc := tableDigests(t, b)
	if dc["topic_message"] == da["topic_message"] || dc["schedule"] == da["schedule"] {
		t.Error("a different seed gave the same messages or schedules")
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(*Options){
		"negative messages": func(o *Options) { o.MessagesPerTopic = -1 },
		"shard":             func(o *Options) { o.Shard = 1024 },
		"realm":             func(o *Options) { o.Realm = -1 },
		"base":              func(o *Options) { o.BaseTimestamp = 1 },
	} {
		o := DefaultOptions()
		f(&o)
		if err := o.validate(); err == nil {
			t.Errorf("%s: validate accepted %+v", name, o)
		}
	}
	if err := DefaultOptions().validate(); err != nil {
		t.Error(err)
	}
	if err := BenchmarkOptions().validate(); err != nil {
		t.Error(err)
	}
}

func TestTransactionIDBytes(t *testing.T) {
	t.Parallel()
	// The example of docs/reference/behavior.md §2.4: 0.0.3, 1234567890.000000000, scheduled, nonce 1.
	got := hex.EncodeToString(appendTransactionID(nil, 1234567890*second, 3, true, 1))
	if got != "0a0608d285d8cc041202180318012001" {
		t.Errorf("TransactionID = %s", got)
	}
	got = hex.EncodeToString(appendTransactionID(nil, 1234567890*second+5, 1<<54|2<<38|7, false, 0))
	if got != "0a0808d285d8cc0410051206080110021807" {
		t.Errorf("TransactionID with nanos, shard and realm = %s", got)
	}
}

func TestKeyBytes(t *testing.T) {
	t.Parallel()
	r := rng(1)
	for kind, want := range map[int]string{
		keyNull: "null", keyED25519: "ED25519", keyECDSA: "ECDSA", keyList1ED: "list1",
		keyThreshold1: "threshold1", keyThreshold2: "other", keyList2: "other", keyContract: "other",
		keyImmutable: "immutable",
	} {
		if got := keyKind(makeKey(kind, &r)); got != want {
			t.Errorf("makeKey(%d) is %s, want %s", kind, got, want)
		}
	}
}

// TestTimelineOrder checks, without a database, that the message stream is
// in strictly increasing timestamp order with per-topic sequence numbers
// 1..N, for the benchmark's shape scaled down.
func TestTimelineOrder(t *testing.T) {
	t.Parallel()
	o := BenchmarkOptions()
	o.MessagesPerTopic, o.HotTopicMessages = 101, 10_000
	tl := newTimeline(&o, false)
	last := int64(-1)
	next := make([]int64, o.Topics)
	var failed int64
	for tl.next() {
		ev := &tl.ev
		if ev.ts <= last {
			t.Fatalf("timestamp %d after %d", ev.ts, last)
		}
		last = ev.ts
		if ev.failed {
			failed++
			continue
		}
		i := int(ev.topic - o.TopicID(0))
		if next[i]++; ev.seq != next[i] {
			t.Fatalf("topic %d: seq %d, want %d", i, ev.seq, next[i])
		}
		if ev.ts != o.MessageTimestamp(i, ev.seq) {
			t.Fatalf("topic %d seq %d: %d, MessageTimestamp %d", i, ev.seq, ev.ts, o.MessageTimestamp(i, ev.seq))
		}
	}
	for i, n := range next {
		if n != o.TopicMessages(i) {
			t.Errorf("topic %d: %d messages, want %d", i, n, o.TopicMessages(i))
		}
	}
	if failed != o.FailedTransactions() {
		t.Errorf("%d failed submissions, want %d", failed, o.FailedTransactions())
	}
	if span := time.Duration(last - o.MessagesStart()); span > 31*24*time.Hour || span < 29*24*time.Hour {
		t.Errorf("messages span %v", span)
	}
}

// BenchmarkSeed loads a data set into a fresh database per iteration,
// sequentially and in parallel, and reports the rate; the database is created
// and migrated outside the timer. size=200k is 200,000 messages with their
// transactions; size=1M is the benchmark data set (1,000,049 messages,
// 500,000 in the hot topic):
//
//	go test ./seed -run '^$' -bench 'BenchmarkSeed/size=200k' -benchtime 1x
//	go test ./seed -run '^$' -bench 'BenchmarkSeed/size=1M' -benchtime 1x -timeout 30m
func BenchmarkSeed(b *testing.B) {
	small := DefaultOptions()
	small.HotTopicMessages = 100_000
	small.MessagesPerTopic = 5264 // 100,000 + 19 × 5,264 = 200,016 messages
	for _, size := range []struct {
		name string
		o    Options
	}{{"200k", small}, {"1M", BenchmarkOptions()}} {
		for _, parallel := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%s/parallel=%v", size.name, parallel), func(b *testing.B) {
				benchmarkSeed(b, size.o, parallel)
			})
		}
	}
}

func benchmarkSeed(b *testing.B, o Options, parallel bool) {
	var messages int64
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		url, _ := testdb.New(b)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var st Stats
		if parallel {
			st, err = RunURL(ctx, url, o)
		} else {
			st, err = Run(ctx, conn, o)
		}
		b.StopTimer()
		_ = conn.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
		messages += st.TopicMessages
		elapsed += st.Elapsed
	}
	b.ReportMetric(float64(messages)/elapsed.Seconds(), "messages/s")
}

// BenchmarkGenerate measures the generator alone (no database): one message
// row and one transaction row per op.
func BenchmarkGenerate(b *testing.B) {
	o := BenchmarkOptions()
	b.ReportAllocs()
	m, x := newMessageSource(&o), newTransactionSource(&o)
	for b.Loop() {
		if !m.Next() {
			m = newMessageSource(&o)
		}
		if !x.Next() {
			x = newTransactionSource(&o)
		}
	}
}
