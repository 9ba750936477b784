// Package seed fills a mirror node database (the tables of schema.md) with a
// deterministic, realistic data set of accounts, topics, topic messages and
// schedules, streamed through COPY, for tests, demos and benchmarks.
//
// The same Options always give the same rows, byte for byte: every value is
// derived from (Seed, what the row is, its position), never from a clock or
// from the order in which rows are generated.
//
// # Ids
//
// Entity nums, encoded with Options.Shard and Options.Realm (0.0 by default):
//
//	0.0.1001 – 0.0.1100   100 accounts (ACCOUNT): payers, creators, fee collectors, auto-renew accounts
//	0.0.1901 – 0.0.1905   5 tokens (TOKEN): denominations of token custom fees
//	0.0.2001 – …          Options.Topics topics (TOPIC): TopicID(i) = 2001 + i
//	0.0.3001 – …          Options.Schedules schedules (SCHEDULE): ScheduleID(j) = FirstScheduleNum() + j,
//	                      3001 + j while Topics ≤ 1000
//
// # Timeline
//
// With T0 = Options.BaseTimestamp (ns):
//
//	T0-90d …              accounts created, one an hour
//	T0-60d …              tokens created, one an hour
//	T0-30d … T0-1h        schedules created (ScheduleTimestamp), evenly spread
//	T0 + i·60s + <1s      topic i created (TopicCreatedTimestamp), with a
//	                      CONSENSUSCREATETOPIC transaction (type 24, result 22) at that instant
//	MessagesStart() …     messages and failed submissions, over about 30 days (MessageTimestamp)
//
// Message timestamps are unique across all topics: topic i only uses instants
// whose remainder modulo (Topics+1) ms, counted from MessagesStart, lies in
// [i ms, i+1 ms); the last class holds the failed submissions (a transaction
// with type 27 and result 7, 10, 150 or 163, and no message). Within its class
// each event falls at a random instant of its own period, so the topics
// interleave irregularly; rows are written in global timestamp order.
//
// # Topics
//
// Topic i holds TopicMessages(i) messages, sequence numbers 1..N. A topic of
// 8 messages or more starts with a fixed prelude: 1 UTF-8 text, 2 a JSON
// document, 3 binary (invalid UTF-8), 4–6 a 3-chunk group in the new form
// (initial_transaction_id set, valid_start_timestamp NULL), 7–8 a 2-chunk
// group in the legacy form (initial_transaction_id NULL, valid_start_timestamp
// and payer_account_id of each chunk's own transaction). After it, of the
// message starts about 56.5% are text, 25% JSON, 10% binary, 5% single chunks
// (1 of 1) and 3.5% 2–5-chunk groups; a quarter of the chunk groups are in the
// legacy form, a few of the others have scheduled=true and a nonce. Chunks are 1024 bytes but the last one;
// running_hash is 48 bytes and running_hash_version 3, NULL for about 0.5%.
// Every message has a transaction row (type 27, result 22, entity_id = topic).
//
// Keys, memos and flags cycle with i (topic 0: ED25519 admin key, no submit
// key, no fee schedule key, no fee-exempt list, custom fees `[]`, live):
// admin_key cycles ED25519, ECDSA_SECP256K1, NULL, 1-element KeyList,
// 2-of-3 ThresholdKey, 0x3200, 1-of-1 ThresholdKey, ED25519, 2-key KeyList,
// contract key; every tenth topic (i%10 == 9) is deleted and i%23 == 22 has
// deleted NULL; fixed_fees is `[]` for i%4 < 2, one HBAR fee for i%4 == 2,
// an HBAR and a token fee for i%4 == 3, and NULL for i%13 == 7.
//
// # Schedules
//
// Schedule j is in state j%6: 0 pending (expiration ~100 years after T0),
// 1 executed, 2 pending with wait_for_expiry, 3 expired (expiration before
// T0), 4 deleted (entity.deleted), 5 legacy (expiration_time NULL). It has
// (j+3)%5 signatures, at distinct timestamps from its creation on, whose type
// codes cycle through 2..6 and NULL, 32 or 64 bytes long. The admin key
// (entity.key) cycles ED25519, ECDSA, 2-of-3 ThresholdKey, NULL, 1-element
// KeyList, ED25519, contract key.
package seed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/protobuf/encoding/protowire"
)

// Fixed parts of the layout (nums before encoding with shard and realm).
const (
	FirstAccountNum = 1001
	Accounts        = 100
	FirstTokenNum   = 1901
	Tokens          = 5
	FirstTopicNum   = 2001

	// DefaultBaseTimestamp is 2023-11-14T22:13:20Z.
	DefaultBaseTimestamp int64 = 1_700_000_000_000_000_000

	// Transaction types and results written to `transaction`.
	TypeConsensusCreateTopic   = 24
	TypeConsensusSubmitMessage = 27
	ResultSuccess              = 22
)

const (
	second = int64(time.Second)
	minute = 60 * second
	hour   = 60 * minute
	day    = 24 * hour
	year   = 365 * day

	messageSpan = 30 * day                // messages of every topic spread over this
	slot        = int64(time.Millisecond) // width of one topic's timestamp class
	chunkSize   = 1024                    // SDK default chunk size
	firstNode   = 3                       // node accounts 0.0.3 … 0.0.9
	nodes       = 7
)

// Options say how much to generate and where.
type Options struct {
	Topics           int   // topics 0.0.2001 …
	MessagesPerTopic int   // messages of every topic but a hot one
	HotTopicMessages int   // > 0: the first topic holds this many messages instead
	Schedules        int   // schedules 0.0.FirstScheduleNum() …
	Seed             int64 // same seed, same rows
	Shard, Realm     int64 // of every entity id
	BaseTimestamp    int64 // T0 in ns; 0 means DefaultBaseTimestamp
}

// DefaultOptions is a small data set for tests and demos: 20 topics of 200
// messages and 200 schedules.
func DefaultOptions() Options {
	return Options{
		Topics:           20,
		MessagesPerTopic: 200,
		Schedules:        200,
		Seed:             42,
		BaseTimestamp:    DefaultBaseTimestamp,
	}
}

// BenchmarkOptions is the benchmark data set: 100 topics, 1,000,049 messages,
// 500,000 of them in the first (hot) topic.
func BenchmarkOptions() Options {
	o := DefaultOptions()
	o.Topics = 100
	o.MessagesPerTopic = 5051
	o.HotTopicMessages = 500_000
	return o
}

func (o Options) validate() error {
	switch {
	case o.Topics < 0 || o.Topics > 100_000:
		return fmt.Errorf("seed: Topics %d out of range 0..100000", o.Topics)
	case o.MessagesPerTopic < 0 || o.HotTopicMessages < 0 || o.Schedules < 0:
		return errors.New("seed: negative count")
	case o.Schedules > 10_000_000:
		return fmt.Errorf("seed: Schedules %d out of range 0..10000000", o.Schedules)
	case o.Shard < 0 || o.Shard > 1023:
		return fmt.Errorf("seed: Shard %d out of range 0..1023", o.Shard)
	case o.Realm < 0 || o.Realm > 65535:
		return fmt.Errorf("seed: Realm %d out of range 0..65535", o.Realm)
	case o.base() < 100*day || o.base() > 4_000_000_000*second:
		return fmt.Errorf("seed: BaseTimestamp %d out of range", o.BaseTimestamp)
	}
	return nil
}

func (o Options) base() int64 {
	if o.BaseTimestamp == 0 {
		return DefaultBaseTimestamp
	}
	return o.BaseTimestamp
}

// EntityID encodes shard.realm.num with the options' shard and realm.
func (o Options) EntityID(num int64) int64 { return o.Shard<<54 | o.Realm<<38 | num }

// AccountID is the encoded id of account a (0 ≤ a < Accounts).
func (o Options) AccountID(a int) int64 { return o.EntityID(FirstAccountNum + int64(a%Accounts)) }

// TokenID is the encoded id of token k (0 ≤ k < Tokens).
func (o Options) TokenID(k int) int64 { return o.EntityID(FirstTokenNum + int64(k%Tokens)) }

// TopicID is the encoded id of topic i (0 ≤ i < Topics).
func (o Options) TopicID(i int) int64 { return o.EntityID(FirstTopicNum + int64(i)) }

// FirstScheduleNum is the num of the first schedule: 3001, or the next
// thousand + 1 past the topics when there are more than 1000.
func (o Options) FirstScheduleNum() int64 { return 3001 + int64((max(o.Topics, 1)-1)/1000)*1000 }

// ScheduleID is the encoded id of schedule j (0 ≤ j < Schedules).
func (o Options) ScheduleID(j int) int64 { return o.EntityID(o.FirstScheduleNum() + int64(j)) }

// TopicMessages is the number of messages of topic i.
func (o Options) TopicMessages(i int) int64 {
	if i == 0 && o.HotTopicMessages > 0 {
		return int64(o.HotTopicMessages)
	}
	return int64(o.MessagesPerTopic)
}

// TotalMessages is the number of topic_message rows.
func (o Options) TotalMessages() int64 {
	if o.Topics == 0 {
		return 0
	}
	return o.TopicMessages(0) + int64(o.Topics-1)*int64(o.MessagesPerTopic)
}

// FailedTransactions is the number of failed submissions (a transaction with
// a result other than 22 and no message): one per 250 messages, plus one.
func (o Options) FailedTransactions() int64 {
	if o.Topics == 0 {
		return 0
	}
	return o.TotalMessages()/250 + 1
}

// TopicCreatedTimestamp is topic i's created_timestamp, the lower bound of its
// timestamp_range and the instant of its CONSENSUSCREATETOPIC transaction.
func (o Options) TopicCreatedTimestamp(i int) int64 {
	g := newGen(o.Seed)
	return o.base() + int64(i)*minute + int64(g.hash(tagTopicCreated, uint64(i), 0)%uint64(second))
}

// MessagesStart is the earliest possible message timestamp.
func (o Options) MessagesStart() int64 { return o.base() + int64(o.Topics)*minute + hour }

// cell is the period of the timestamp classes: one slot per topic plus one
// for failed submissions.
func (o Options) cell() int64 { return int64(o.Topics+1) * slot }

// period is the distance between the timestamp cells of consecutive events of
// a stream of n events: a multiple of cell() spreading them over messageSpan.
func (o Options) period(n int64) int64 {
	c := o.cell()
	if n <= 0 {
		return c
	}
	return c * max(1, messageSpan/(n*c))
}

// MessageTimestamp is the consensus_timestamp of message seq (1-based) of topic i.
func (o Options) MessageTimestamp(i int, seq int64) int64 {
	g := newGen(o.Seed)
	return g.eventTimestamp(o.MessagesStart()+int64(i)*slot, o.period(o.TopicMessages(i)), o.cell(), i, seq)
}

// ScheduleTimestamp is schedule j's consensus_timestamp (its creation).
func (o Options) ScheduleTimestamp(j int) int64 {
	start, step := o.scheduleWindow()
	g := newGen(o.Seed)
	return start + int64(j)*step + int64(g.hash(tagSchedule, uint64(j), 0)%uint64(step/2+1))
}

func (o Options) scheduleWindow() (start, step int64) {
	start = o.base() - 30*day
	return start, max(1, (30*day-hour)/int64(max(o.Schedules, 1)))
}

// Stats counts the rows written, per table.
type Stats struct {
	Entities              int64
	Topics                int64
	CustomFees            int64
	Schedules             int64
	TransactionSignatures int64
	TopicMessages         int64
	Transactions          int64
	Elapsed               time.Duration
}

// Rows is the number of rows written in all.
func (s Stats) Rows() int64 {
	return s.Entities + s.Topics + s.CustomFees + s.Schedules + s.TransactionSignatures + s.TopicMessages + s.Transactions
}

func (s Stats) String() string {
	return fmt.Sprintf("entity %d, topic %d, custom_fee %d, schedule %d, transaction_signature %d, "+
		"topic_message %d, transaction %d: %d rows in %v (%.0f rows/s)",
		s.Entities, s.Topics, s.CustomFees, s.Schedules, s.TransactionSignatures, s.TopicMessages, s.Transactions,
		s.Rows(), s.Elapsed.Round(time.Millisecond), float64(s.Rows())/max(s.Elapsed.Seconds(), 1e-9))
}

// Tables are the tables Run writes to, in the order it writes them.
var Tables = []string{"entity", "topic", "custom_fee", "schedule", "transaction_signature", "topic_message", "transaction"}

// RunURL loads the data set through two connections to url: topic_message
// on one, every other table on the other, concurrently. Each connection
// commits its own transaction once both have finished copying.
func RunURL(ctx context.Context, url string, o Options) (Stats, error) {
	var conns []*pgx.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close(context.WithoutCancel(ctx))
		}
	}()
	for range 2 {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return Stats{}, fmt.Errorf("seed: connect: %w", err)
		}
		conns = append(conns, c)
	}
	return RunParallel(ctx, conns, o)
}

// Run writes the data set in one transaction, with one COPY per table. The
// tables must exist (db.Migrate) and hold none of the generated ids: Reset
// empties them.
func Run(ctx context.Context, conn *pgx.Conn, o Options) (Stats, error) {
	return RunParallel(ctx, []*pgx.Conn{conn}, o)
}

// RunParallel is Run over one or more connections: with two or more, the
// topic_message COPY runs on the second connection while the first copies
// everything else, each in a transaction of its own, committed only when
// both copies have succeeded.
func RunParallel(ctx context.Context, conns []*pgx.Conn, o Options) (Stats, error) {
	start := time.Now()
	var st Stats
	if len(conns) == 0 {
		return st, errors.New("seed: no connection")
	}
	if err := o.validate(); err != nil {
		return st, err
	}
	if err := registerTypes(ctx, conns[0]); err != nil {
		return st, err
	}

	g := newGen(o.Seed)
	all := []copyJob{
		{"entity", entityColumns, g.entities(&o), &st.Entities},
		{"topic", topicColumns, g.topics(&o), &st.Topics},
		{"custom_fee", customFeeColumns, g.customFees(&o), &st.CustomFees},
		{"schedule", scheduleColumns, g.schedules(&o), &st.Schedules},
		{"transaction_signature", signatureColumns, g.signatures(&o), &st.TransactionSignatures},
		{"topic_message", messageColumns, newMessageSource(&o), &st.TopicMessages},
		{"transaction", transactionColumns, newTransactionSource(&o), &st.Transactions},
	}
	var plan [][]copyJob
	if len(conns) == 1 {
		plan = [][]copyJob{all}
	} else {
		conns = conns[:2]
		plan = [][]copyJob{append(all[:5:5], all[6]), {all[5]}}
	}

	txs := make([]pgx.Tx, len(conns))
	for i, c := range conns {
		tx, err := c.Begin(ctx)
		if err != nil {
			return st, fmt.Errorf("seed: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		// Losing the last commits in a crash costs nothing here; waiting
		// for the WAL flush of a large load costs seconds.
		if _, err := tx.Exec(ctx, "set local synchronous_commit = off"); err != nil {
			return st, fmt.Errorf("seed: %w", err)
		}
		txs[i] = tx
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(txs))
	for i, tx := range txs {
		go func() {
			for _, c := range plan[i] {
				n, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, c.src)
				if err != nil {
					cancel() // stop the other copy
					errs <- fmt.Errorf("seed: copy %s: %w", c.table, err)
					return
				}
				*c.n = n
			}
			errs <- nil
		}()
	}
	var err error
	for range txs {
		// Report the failure rather than the other copy's cancellation.
		if e := <-errs; e != nil && (err == nil || errors.Is(err, context.Canceled)) {
			err = e
		}
	}
	if err != nil {
		return st, err
	}
	for _, tx := range txs {
		if err := tx.Commit(ctx); err != nil {
			return st, fmt.Errorf("seed: commit: %w", err)
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

type copyJob struct {
	table string
	cols  []string
	src   pgx.CopyFromSource
	n     *int64
}

// Reset deletes every row of the tables Run writes to. Only for databases
// that hold nothing but seeded data.
func Reset(ctx context.Context, conn *pgx.Conn) error {
	q := "truncate table"
	for i, t := range Tables {
		if i > 0 {
			q += ","
		}
		q += " " + pgx.Identifier{t}.Sanitize()
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("seed: reset: %w", err)
	}
	return nil
}

// registerTypes teaches the connection the entity_type enum, which COPY's
// binary format needs to know.
func registerTypes(ctx context.Context, conn *pgx.Conn) error {
	if _, ok := conn.TypeMap().TypeForName("entity_type"); ok {
		return nil
	}
	t, err := conn.LoadType(ctx, "entity_type")
	if err != nil {
		return fmt.Errorf("seed: load type entity_type: %w", err)
	}
	conn.TypeMap().RegisterType(t)
	return nil
}

// ---------------------------------------------------------------------------
// Deterministic randomness.

// Hash domains: what a value is for, so unrelated values never correlate.
const (
	tagTopicCreated = iota + 1
	tagTimestamp
	tagMessage
	tagGroup
	tagPayload
	tagRunningHash
	tagTxHash
	tagFailed
	tagAccount
	tagToken
	tagTopic
	tagFee
	tagSchedule
	tagScheduleKey
	tagSignature
)

// mix is splitmix64's finaliser: small, fast and fixed forever, unlike
// math/rand's sources, so the data set never changes under a new Go.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

type gen struct{ seed uint64 }

func newGen(seed int64) gen { return gen{seed: mix(uint64(seed) ^ 0x6d6972726f72716c)} }

// hash is the deterministic value for (tag, a, b).
func (g gen) hash(tag, a, b uint64) uint64 {
	return mix(mix(mix(g.seed^tag)^a) ^ b)
}

func (g gen) rng(tag, a, b uint64) rng { return rng(g.hash(tag, a, b)) }

// eventTimestamp is the instant of event seq (1-based) of a stream: a random
// instant of the stream's class (cell-aligned offset plus a jitter within
// its 1 ms slot) in the seq-th period after base, so events arrive
// irregularly, yet in order and never at another stream's instant.
func (g gen) eventTimestamp(base, period, cell int64, stream int, seq int64) int64 {
	h := g.hash(tagTimestamp, uint64(stream), uint64(seq))
	return base + (seq-1)*period + int64(h>>24%uint64(period/cell))*cell + int64(h%uint64(slot))
}

// rng is a splitmix64 stream.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	return mix(uint64(*r))
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// appendBytes appends n random bytes.
func (r *rng) appendBytes(b []byte, n int) []byte {
	for n > 0 {
		v := r.next()
		for j := 0; j < 8 && n > 0; j++ {
			b = append(b, byte(v))
			v >>= 8
			n--
		}
	}
	return b
}

// ---------------------------------------------------------------------------
// Protobuf values.

// Key kinds, as protobuf Key bytes (behavior.md §5.3).
const (
	keyNull       = iota // NULL column
	keyED25519           // 0x1220 + 32 bytes
	keyECDSA             // 0x3a21 + 33 bytes (compressed secp256k1)
	keyList1ED           // KeyList of one ED25519 key: renders as ED25519
	keyThreshold1        // 1-of-1 ThresholdKey of an ECDSA key: renders as ECDSA_SECP256K1
	keyThreshold2        // 2-of-3 ThresholdKey: ProtobufEncoded
	keyList2             // KeyList of ED25519 + ECDSA: ProtobufEncoded
	keyContract          // contractID key: ProtobufEncoded
	keyImmutable         // 0x3200, an empty KeyList: renders as null
)

func appendED25519(b []byte, r *rng) []byte {
	b = append(b, 0x12, 0x20)
	return r.appendBytes(b, 32)
}

func appendECDSA(b []byte, r *rng) []byte {
	b = append(b, 0x3a, 0x21, 0x02|byte(r.next()&1))
	return r.appendBytes(b, 32)
}

// keyListBody is a KeyList message: repeated Key keys = 1.
func keyListBody(keys ...[]byte) []byte {
	var b []byte
	for _, k := range keys {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, k)
	}
	return b
}

func makeKey(kind int, r *rng) []byte {
	switch kind {
	case keyED25519:
		return appendED25519(nil, r)
	case keyECDSA:
		return appendECDSA(nil, r)
	case keyList1ED:
		b := protowire.AppendTag(nil, 6, protowire.BytesType) // Key.keyList
		return protowire.AppendBytes(b, keyListBody(appendED25519(nil, r)))
	case keyThreshold1, keyThreshold2:
		threshold, keys := uint64(1), [][]byte{appendECDSA(nil, r)}
		if kind == keyThreshold2 {
			threshold, keys = 2, [][]byte{appendED25519(nil, r), appendECDSA(nil, r), appendED25519(nil, r)}
		}
		t := protowire.AppendTag(nil, 1, protowire.VarintType) // ThresholdKey.threshold
		t = protowire.AppendVarint(t, threshold)
		t = protowire.AppendTag(t, 2, protowire.BytesType) // ThresholdKey.keys
		t = protowire.AppendBytes(t, keyListBody(keys...))
		b := protowire.AppendTag(nil, 5, protowire.BytesType) // Key.thresholdKey
		return protowire.AppendBytes(b, t)
	case keyList2:
		b := protowire.AppendTag(nil, 6, protowire.BytesType)
		return protowire.AppendBytes(b, keyListBody(appendED25519(nil, r), appendECDSA(nil, r)))
	case keyContract:
		c := protowire.AppendTag(nil, 3, protowire.VarintType) // ContractID.contractNum
		c = protowire.AppendVarint(c, 5000+uint64(r.intn(1000)))
		b := protowire.AppendTag(nil, 1, protowire.BytesType) // Key.contractID
		return protowire.AppendBytes(b, c)
	case keyImmutable:
		return []byte{0x32, 0x00}
	}
	return nil
}

// appendAccountID appends the fields of an AccountID (or TopicID: same
// numbers) message for an encoded id; proto3 leaves zero fields out.
func appendAccountID(b []byte, id int64) []byte {
	shard, realm, num := uint64(id)>>54&0x3ff, uint64(id)>>38&0xffff, uint64(id)&(1<<38-1)
	for f, v := range [...]uint64{shard, realm, num} {
		if v != 0 {
			b = protowire.AppendTag(b, protowire.Number(f+1), protowire.VarintType)
			b = protowire.AppendVarint(b, v)
		}
	}
	return b
}

// appendTransactionID appends a TransactionID message (behavior.md §2.4).
func appendTransactionID(b []byte, validStart, payer int64, scheduled bool, nonce int32) []byte {
	var ts [24]byte
	t := protowire.AppendTag(ts[:0], 1, protowire.VarintType) // Timestamp.seconds
	t = protowire.AppendVarint(t, uint64(validStart/second))
	if n := validStart % second; n != 0 {
		t = protowire.AppendTag(t, 2, protowire.VarintType) // Timestamp.nanos
		t = protowire.AppendVarint(t, uint64(n))
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType) // transactionValidStart
	b = protowire.AppendBytes(b, t)
	var as [32]byte
	b = protowire.AppendTag(b, 2, protowire.BytesType) // accountID
	b = protowire.AppendBytes(b, appendAccountID(as[:0], payer))
	if scheduled {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	if nonce != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(nonce))
	}
	return b
}

// ---------------------------------------------------------------------------
// Small tables: entity, topic, custom_fee, schedule, transaction_signature.

var entityColumns = []string{
	"id", "num", "realm", "shard", "type", "memo", "key", "created_timestamp", "timestamp_range", "deleted",
	"auto_renew_account_id", "auto_renew_period", "expiration_timestamp", "balance", "balance_timestamp",
	"receiver_sig_required", "max_automatic_token_associations",
}

var topicColumns = []string{
	"id", "admin_key", "submit_key", "fee_schedule_key", "fee_exempt_key_list", "created_timestamp", "timestamp_range",
}

var customFeeColumns = []string{"entity_id", "fixed_fees", "fractional_fees", "royalty_fees", "timestamp_range"}

var scheduleColumns = []string{
	"schedule_id", "consensus_timestamp", "creator_account_id", "payer_account_id", "executed_timestamp",
	"expiration_time", "wait_for_expiry", "transaction_body",
}

var signatureColumns = []string{"consensus_timestamp", "entity_id", "public_key_prefix", "signature", "type"}

// since is the int8range [lower,).
func since(lower int64) pgtype.Range[int64] {
	return pgtype.Range[int64]{Lower: lower, LowerType: pgtype.Inclusive, UpperType: pgtype.Unbounded, Valid: true}
}

var topicMemos = []string{
	"Supply chain events",
	"",
	"IoT sensor feed – building 7",
	"Carbon credit registry ✓",
	"DID document updates",
	"Payments audit log",
	"投票 / vote tallies",
	`memo with "quotes", a \ backslash and a tab	here`,
	"Oracle price feed HBAR/USD",
	"",
	"Shipping container tracking (MSCU)",
	"Game moves 🚀",
}

var scheduleMemos = []string{"", "Payroll run", "Treasury transfer – Q4 ✓", "multisig approval 承認", "Scheduled topic message"}

// topic key kinds, cycled by topic index; topic 0 has an ED25519 admin key
// and nothing else.
var (
	topicAdminKeys  = []int{keyED25519, keyECDSA, keyNull, keyList1ED, keyThreshold2, keyImmutable, keyThreshold1, keyED25519, keyList2, keyContract}
	topicSubmitKeys = []int{keyNull, keyED25519, keyECDSA, keyThreshold2, keyNull, keyList1ED, keyNull, keyED25519}
	scheduleKeys    = []int{keyED25519, keyECDSA, keyThreshold2, keyNull, keyList1ED, keyED25519, keyContract}
)

// topicDeleted is entity.deleted of topic i: true for every tenth, NULL for
// some, never for topic 0.
func topicDeleted(i int) any {
	switch {
	case i%10 == 9:
		return true
	case i%23 == 22:
		return nil
	}
	return false
}

func nullable(v int64, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func (g gen) topicKeys(i int) (admin, submit, feeSchedule, feeExempt []byte) {
	r := g.rng(tagTopic, uint64(i), 0)
	admin = makeKey(topicAdminKeys[i%len(topicAdminKeys)], &r)
	submit = makeKey(topicSubmitKeys[i%len(topicSubmitKeys)], &r)
	switch {
	case i%3 == 1:
		feeSchedule = makeKey(keyED25519, &r)
	case i%9 == 5:
		feeSchedule = makeKey(keyECDSA, &r)
	}
	switch {
	case i%13 == 12:
		feeExempt = []byte{} // empty KeyList: renders as []
	case i%5 == 1:
		feeExempt = keyListBody(makeKey(keyED25519, &r))
	case i%5 == 2:
		feeExempt = keyListBody(makeKey(keyED25519, &r), makeKey(keyECDSA, &r))
	case i%5 == 4:
		feeExempt = keyListBody(makeKey(keyThreshold2, &r), makeKey(keyECDSA, &r), makeKey(keyList1ED, &r))
	}
	return
}

func (g gen) entities(o *Options) pgx.CopyFromSource {
	nTopics, nSchedules := o.Topics, o.Schedules
	n := Accounts + Tokens + nTopics + nSchedules
	t0 := o.base()
	return pgx.CopyFromSlice(n, func(k int) ([]any, error) {
		switch {
		case k < Accounts:
			a := k
			r := g.rng(tagAccount, uint64(a), 0)
			created := t0 - 90*day + int64(a)*hour + int64(r.next()%uint64(second))
			memo := ""
			if a%10 == 0 {
				memo = "account " + strconv.Itoa(a) + " – treasury"
			}
			return []any{o.AccountID(a), int64(FirstAccountNum + a), o.Realm, o.Shard, "ACCOUNT", memo,
				appendED25519(nil, &r), created, since(created), false,
				nil, int64(7776000), created + 7776000*second, int64(r.next()%1_000_000_000_000) + 10_000_000_000, t0,
				a%17 == 3, int32(a % 11)}, nil
		case k < Accounts+Tokens:
			t := k - Accounts
			r := g.rng(tagToken, uint64(t), 0)
			created := t0 - 60*day + int64(t)*hour + int64(r.next()%uint64(second))
			return []any{o.TokenID(t), int64(FirstTokenNum + t), o.Realm, o.Shard, "TOKEN", "",
				appendED25519(nil, &r), created, since(created), false,
				o.AccountID(t), int64(7776000), created + 7776000*second, nil, nil, nil, nil}, nil
		case k < Accounts+Tokens+nTopics:
			i := k - Accounts - Tokens
			created := o.TopicCreatedTimestamp(i)
			admin, _, _, _ := g.topicKeys(i)
			var renewAccount, renewPeriod any = o.AccountID(i * 7), int64(7776000)
			var expiration any = created + 7776000*second
			if i%4 == 2 {
				renewAccount = nil
			}
			if i%11 == 10 {
				renewPeriod, expiration = nil, nil
			}
			return []any{o.TopicID(i), FirstTopicNum + int64(i), o.Realm, o.Shard, "TOPIC",
				topicMemos[i%len(topicMemos)], admin, created, since(created), topicDeleted(i),
				renewAccount, renewPeriod, expiration, nil, nil, nil, nil}, nil
		default:
			j := k - Accounts - Tokens - nTopics
			s := g.schedule(o, j)
			return []any{o.ScheduleID(j), o.FirstScheduleNum() + int64(j), o.Realm, o.Shard, "SCHEDULE",
				s.memo, s.key, s.ts, since(s.ts), s.state == scheduleDeleted,
				nil, nil, nil, nil, nil, nil, nil}, nil
		}
	})
}

func (g gen) topics(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Topics, func(i int) ([]any, error) {
		admin, submit, feeSchedule, feeExempt := g.topicKeys(i)
		created := o.TopicCreatedTimestamp(i)
		return []any{o.TopicID(i), admin, submit, feeSchedule, feeExempt, created, since(created)}, nil
	})
}

// fixedFees is custom_fee.fixed_fees of topic i: `[]` for half the topics,
// NULL for some, else one HBAR fee or an HBAR and a token fee.
func (g gen) fixedFees(o *Options, i int) []byte {
	if i%13 == 7 {
		return nil
	}
	r := g.rng(tagFee, uint64(i), 0)
	fee := func(b []byte, exempt bool, amount, collector int64, token int64) []byte {
		b = append(b, `{"all_collectors_are_exempt":`...)
		b = strconv.AppendBool(b, exempt)
		b = append(b, `,"amount":`...)
		b = strconv.AppendInt(b, amount, 10)
		b = append(b, `,"collector_account_id":`...)
		b = strconv.AppendInt(b, collector, 10)
		b = append(b, `,"denominating_token_id":`...)
		if token == 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, token, 10)
		}
		return append(b, '}')
	}
	b := []byte{'['}
	switch i % 4 {
	case 2:
		b = fee(b, false, int64(1+r.intn(50))*10_000_000, o.AccountID(r.intn(Accounts)), 0)
	case 3:
		b = fee(b, false, int64(1+r.intn(5))*100_000_000, o.AccountID(r.intn(Accounts)), 0)
		b = append(b, ',')
		b = fee(b, i%8 == 7, int64(1+r.intn(1000)), o.AccountID(r.intn(Accounts)), o.TokenID(r.intn(Tokens)))
	}
	return append(b, ']')
}

func (g gen) customFees(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Topics, func(i int) ([]any, error) {
		var fixed any // untyped nil: NULL
		if f := g.fixedFees(o, i); f != nil {
			fixed = f
		}
		return []any{o.TopicID(i), fixed, nil, nil, since(o.TopicCreatedTimestamp(i))}, nil
	})
}

// Schedule states, cycled by schedule index.
const (
	schedulePending  = iota // expiration far in the future
	scheduleExecuted        // executed_timestamp set
	scheduleWaiting         // pending, wait_for_expiry
	scheduleExpired         // expiration_time before T0, never executed
	scheduleDeleted         // entity.deleted
	scheduleLegacy          // expiration_time NULL (created before expiries existed)
	scheduleStates
)

type schedule struct {
	ts, creator, payer int64
	executed, expires  any // int64 or nil
	wait               bool
	state              int
	signatures         int
	memo               string
	key                []byte
}

func (g gen) schedule(o *Options, j int) schedule {
	s := schedule{
		ts:         o.ScheduleTimestamp(j),
		creator:    o.AccountID(j*7 + 3),
		state:      j % scheduleStates,
		signatures: (j + 3) % 5, // 0–4; the first schedule has 3
	}
	s.payer = s.creator
	if j%3 != 0 {
		s.payer = o.AccountID(j*11 + 5)
	}
	r := g.rng(tagScheduleKey, uint64(j), 0)
	s.key = makeKey(scheduleKeys[j%len(scheduleKeys)], &r)
	s.memo = scheduleMemos[j%len(scheduleMemos)]
	if j%len(scheduleMemos) == 1 {
		s.memo += " #" + strconv.Itoa(j)
	}
	farFuture := o.base() + 100*year + int64(j)*second
	switch s.state {
	case schedulePending:
		s.expires = farFuture
	case scheduleWaiting:
		s.expires, s.wait = farFuture, true
	case scheduleExecuted:
		s.executed = g.signatureTimestamp(s.ts, j, s.signatures) + second
		if j%12 != 7 {
			s.expires = s.ts + 30*minute
		}
	case scheduleExpired, scheduleDeleted:
		s.expires = s.ts + 30*minute
	}
	return s
}

// signatureTimestamp is the instant of signature k of schedule j: the create
// transaction for k = 0, then one ScheduleSign every ~2 s, so that the
// signatures of a schedule never share a timestamp (their order is stable).
func (g gen) signatureTimestamp(ts int64, j, k int) int64 {
	if k == 0 {
		return ts
	}
	return ts + int64(k)*2*second + int64(g.hash(tagSignature, uint64(j), uint64(k))%uint64(second))
}

// transactionBody is a SchedulableTransactionBody: a crypto transfer or a
// topic message.
func (g gen) transactionBody(o *Options, j int, s *schedule) []byte {
	r := g.rng(tagSchedule, uint64(j), 1)
	b := protowire.AppendTag(nil, 1, protowire.VarintType) // transactionFee
	b = protowire.AppendVarint(b, 100_000_000+uint64(r.intn(100))*1_000_000)
	if s.memo != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType) // memo
		b = protowire.AppendString(b, s.memo)
	}
	if j%2 == 0 || o.Topics == 0 {
		amount := uint64(1+r.intn(10_000)) * 100_000
		aa := func(id int64, amount int64) []byte {
			a := protowire.AppendTag(nil, 1, protowire.BytesType) // AccountAmount.accountID
			a = protowire.AppendBytes(a, appendAccountID(nil, id))
			a = protowire.AppendTag(a, 2, protowire.VarintType) // AccountAmount.amount (sint64)
			return protowire.AppendVarint(a, protowire.EncodeZigZag(amount))
		}
		var tl []byte // TransferList
		tl = protowire.AppendTag(tl, 1, protowire.BytesType)
		tl = protowire.AppendBytes(tl, aa(s.payer, -int64(amount)))
		tl = protowire.AppendTag(tl, 1, protowire.BytesType)
		tl = protowire.AppendBytes(tl, aa(o.AccountID(j*13+1), int64(amount)))
		ct := protowire.AppendTag(nil, 1, protowire.BytesType) // CryptoTransferTransactionBody.transfers
		ct = protowire.AppendBytes(ct, tl)
		b = protowire.AppendTag(b, 9, protowire.BytesType) // cryptoTransfer
		return protowire.AppendBytes(b, ct)
	}
	sm := protowire.AppendTag(nil, 1, protowire.BytesType) // ConsensusSubmitMessageTransactionBody.topicID
	sm = protowire.AppendBytes(sm, appendAccountID(nil, o.TopicID(j%o.Topics)))
	sm = protowire.AppendTag(sm, 2, protowire.BytesType) // message
	sm = protowire.AppendString(sm, "scheduled message #"+strconv.Itoa(j))
	b = protowire.AppendTag(b, 21, protowire.BytesType) // consensusSubmitMessage
	return protowire.AppendBytes(b, sm)
}

func (g gen) schedules(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Schedules, func(j int) ([]any, error) {
		s := g.schedule(o, j)
		return []any{o.ScheduleID(j), s.ts, s.creator, s.payer, s.executed, s.expires, s.wait,
			g.transactionBody(o, j, &s)}, nil
	})
}

// signatureTypes cycles through every SignaturePair case (2 CONTRACT,
// 3 ED25519, 4 RSA_3072, 5 ECDSA_384, 6 ECDSA_SECP256K1) and NULL (-1).
var signatureTypes = []int16{3, 6, 3, 2, 6, 4, 3, 5, -1, 6}

func (g gen) signatures(o *Options) pgx.CopyFromSource {
	j, k, c := 0, 0, 0 // schedule, its signature, signatures so far
	var s schedule
	if o.Schedules > 0 {
		s = g.schedule(o, 0)
	}
	return pgx.CopyFromFunc(func() ([]any, error) {
		for k >= s.signatures {
			if j++; j >= o.Schedules {
				return nil, nil
			}
			s, k = g.schedule(o, j), 0
		}
		r := g.rng(tagSignature, uint64(j), uint64(k)+1000)
		typ := signatureTypes[c%len(signatureTypes)]
		var prefix, sig []byte
		switch typ {
		case 3:
			prefix, sig = r.appendBytes(nil, 32), r.appendBytes(nil, 64)
		case 6:
			prefix = r.appendBytes([]byte{0x02 | byte(r.next()&1)}, 32)
			sig = r.appendBytes(nil, 64)
		case 4, 5:
			prefix, sig = r.appendBytes(nil, 1+r.intn(6)), r.appendBytes(nil, 64)
		default: // CONTRACT and NULL
			prefix, sig = r.appendBytes(nil, 1+r.intn(6)), r.appendBytes(nil, 32)
		}
		var t any = typ
		if typ < 0 {
			t = nil
		}
		row := []any{g.signatureTimestamp(s.ts, j, k), o.ScheduleID(j), prefix, sig, t}
		k++
		c++
		return row, nil
	})
}

// ---------------------------------------------------------------------------
// The message timeline: topic_message and transaction.

// Message kinds.
const (
	kindText = iota
	kindJSON
	kindBinary
	kindChunks // a chunk group, possibly of one chunk
)

var words = []string{
	"ledger", "consensus", "topic", "message", "sensor", "reading", "temperature", "humidity", "payment",
	"invoice", "shipment", "container", "port", "audit", "record", "hash", "node", "relay", "batch", "order",
	"token", "transfer", "approved", "pending", "settled", "carbon", "credit", "vote", "proposal", "oracle",
	"price", "feed", "the", "a", "of", "and", "to", "from", "with", "at", "café", "naïve", "Grüße", "日本語",
	"данные", "✓", "🚀", "ñandú", `"quoted"`, "line\nbreak", "tab\tstop", `back\slash`, "<b>&amp;</b>",
	"42", "3.14", "0xdeadbeef", "2023-11-14T22:13:20Z",
}

// appendText appends words up to about n bytes; with exact it cuts at n bytes
// even inside a UTF-8 sequence, as chunking a long message does.
func appendText(b []byte, r *rng, n int, exact bool) []byte {
	start := len(b)
	for len(b)-start < n {
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, words[r.intn(len(words))]...)
	}
	if exact {
		b = b[:start+n]
	}
	return b
}

func appendDecimal(b []byte, v int64, scale int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/scale, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, v%scale+scale, 10) // leading 1 keeps the zeros
	return append(b, frac[1:]...)
}

func appendJSON(b []byte, r *rng, o *Options, seq int64) []byte {
	switch r.intn(4) {
	case 0:
		b = append(b, `{"type":"temperature","device":"sensor-`...)
		b = strconv.AppendInt(b, int64(r.intn(500)), 10)
		b = append(b, `","value":`...)
		b = appendDecimal(b, int64(r.intn(6000))-1000, 100)
		b = append(b, `,"unit":"C","seq":`...)
		b = strconv.AppendInt(b, seq, 10)
		return append(b, '}')
	case 1:
		b = append(b, `{"type":"payment","from":"`...)
		b = appendEntity(b, o.AccountID(r.intn(Accounts)))
		b = append(b, `","to":"`...)
		b = appendEntity(b, o.AccountID(r.intn(Accounts)))
		b = append(b, `","amount":`...)
		b = strconv.AppendInt(b, int64(r.next()%10_000_000_000), 10)
		b = append(b, `,"currency":"HBAR","memo":"invoice `...)
		b = strconv.AppendInt(b, int64(r.intn(100_000)), 10)
		return append(b, `"}`...)
	case 2:
		b = append(b, `{"event":"shipment.scanned","container":"MSCU`...)
		b = strconv.AppendInt(b, int64(1_000_000+r.intn(9_000_000)), 10)
		b = append(b, `","port":"`...)
		b = append(b, [...]string{"NLRTM", "SGSIN", "CNSHA", "USLAX", "DEHAM"}[r.intn(5)]...)
		b = append(b, `","tags":["reefer","priority"],"ok":`...)
		b = strconv.AppendBool(b, r.intn(10) != 0)
		return append(b, '}')
	default:
		b = append(b, `{"did":"did:hedera:mainnet:z6Mk`...)
		for range 16 {
			b = append(b, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"[r.intn(58)])
		}
		b = append(b, `","op":"update","version":`...)
		b = strconv.AppendInt(b, int64(1+r.intn(9)), 10)
		b = append(b, `,"meta":{"nested":{"depth":2,"note":"ünïcödé ✓"},"nullable":null}}`...)
		return b
	}
}

func appendEntity(b []byte, id int64) []byte {
	b = strconv.AppendInt(b, int64(uint64(id)>>54&0x3ff), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, id>>38&0xffff, 10)
	b = append(b, '.')
	return strconv.AppendInt(b, id&(1<<38-1), 10)
}

// stream is the events of one topic (its messages) or of the failed
// submissions, in timestamp order.
type stream struct {
	idx    int
	id     int64 // topic id; 0 for the failed stream
	failed bool
	n, seq int64 // events in all; the next one (1-based)
	base   int64 // first cell of the stream's class
	period int64
	ts     int64 // timestamp of event seq

	// the chunk group in progress
	left, total, num int32
	lastLen          int
	legacy           bool
	scheduled        bool
	nonce            int32
	payer            int64
	validStart       int64
	initTx           []byte
}

// event is one message or failed submission.
type event struct {
	failed           bool
	ts, topic, seq   int64
	payer            int64
	validStart       int64
	h                uint64
	chunkNum, chunks int32 // 0: not chunked
	legacy           bool  // legacy chunk info: valid_start_timestamp, no initial_transaction_id
	initTx           []byte
	scheduled        bool
	nonce            int32
	result           int16
	nullVersion      bool
	message          []byte // only with payloads
	runningHash      []byte // only with payloads
}

// timeline merges the streams by timestamp (a binary heap of stream indexes).
type timeline struct {
	o        *Options
	g        gen
	cell     int64
	streams  []stream
	heap     []int32
	payloads bool
	ev       event
	buf      []byte
	hash     [48]byte
}

func newTimeline(o *Options, payloads bool) *timeline {
	t := &timeline{o: o, g: newGen(o.Seed), cell: o.cell(), payloads: payloads, buf: make([]byte, 0, 4096)}
	if o.Topics == 0 {
		return t
	}
	start := o.MessagesStart()
	t.streams = make([]stream, o.Topics+1)
	for i := range t.streams {
		s := &t.streams[i]
		s.idx, s.seq, s.base = i, 1, start+int64(i)*slot
		if i < o.Topics {
			s.id, s.n = o.TopicID(i), o.TopicMessages(i)
			s.initTx = make([]byte, 0, 48)
		} else {
			s.failed, s.n = true, o.FailedTransactions()
		}
		s.period = o.period(s.n)
		if s.n > 0 {
			s.ts = t.g.eventTimestamp(s.base, s.period, t.cell, i, 1)
			t.heap = append(t.heap, int32(i))
		}
	}
	for i := len(t.heap)/2 - 1; i >= 0; i-- {
		t.down(i)
	}
	return t
}

func (t *timeline) less(a, b int32) bool { return t.streams[a].ts < t.streams[b].ts }

func (t *timeline) down(i int) {
	h := t.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && t.less(h[r], h[l]) {
			m = r
		}
		if !t.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// next advances to the next event, in timestamp order, into t.ev.
func (t *timeline) next() bool {
	if len(t.heap) == 0 {
		return false
	}
	s := &t.streams[t.heap[0]]
	ts, seq := s.ts, s.seq
	if s.seq++; s.seq > s.n {
		last := len(t.heap) - 1
		t.heap[0] = t.heap[last]
		t.heap = t.heap[:last]
	} else {
		s.ts = t.g.eventTimestamp(s.base, s.period, t.cell, s.idx, s.seq)
	}
	t.down(0)
	if s.failed {
		t.failedEvent(seq, ts)
	} else {
		t.messageEvent(s, seq, ts)
	}
	return true
}

// failedResults are results of a failed ConsensusSubmitMessage: INVALID_SIGNATURE,
// INSUFFICIENT_PAYER_BALANCE, INVALID_TOPIC_ID, INVALID_CHUNK_NUMBER.
var failedResults = []int16{7, 10, 150, 163}

func (t *timeline) failedEvent(seq, ts int64) {
	h := t.g.hash(tagFailed, 0, uint64(seq))
	t.ev = event{
		failed:     true,
		ts:         ts,
		topic:      t.o.TopicID(int(h % uint64(t.o.Topics))),
		payer:      t.o.AccountID(int(h >> 8 % Accounts)),
		validStart: ts - 2*second - int64(h>>16%uint64(8*second)),
		h:          h,
		result:     failedResults[h>>48%uint64(len(failedResults))],
	}
}

// kindOf is the kind of the message that starts at seq when no chunk group
// is in progress, and the group size for kindChunks. Every topic of 8
// messages or more starts with text, JSON, binary, a 3-chunk group in the new
// form and a 2-chunk group in the legacy form (seq 1–8).
func (t *timeline) kindOf(s *stream, seq int64, h uint64) (kind int, size int32, legacy bool) {
	if s.n >= 8 && seq <= 8 {
		switch seq {
		case 1:
			return kindText, 0, false
		case 2:
			return kindJSON, 0, false
		case 3:
			return kindBinary, 0, false
		case 4:
			return kindChunks, 3, false
		default: // 7
			return kindChunks, 2, true
		}
	}
	legacy = h>>40%4 == 0
	switch r := h % 1000; {
	case r < 35:
		size = 2 + int32(h>>20%4)
		return kindChunks, int32(min(int64(size), s.n-seq+1)), legacy
	case r < 85:
		return kindChunks, 1, legacy
	case r < 480:
		return kindText, 0, false
	case r < 730:
		return kindJSON, 0, false
	case r < 830:
		return kindBinary, 0, false
	default:
		return kindText, 0, false
	}
}

func (t *timeline) messageEvent(s *stream, seq, ts int64) {
	o := t.o
	h := t.g.hash(tagMessage, uint64(s.idx), uint64(seq))
	ev := &t.ev
	*ev = event{ts: ts, topic: s.id, seq: seq, h: h, result: ResultSuccess}
	ev.nullVersion = seq > 8 && h%211 == 0

	kind := kindChunks
	if s.left == 0 {
		var size int32
		var legacy bool
		kind, size, legacy = t.kindOf(s, seq, h)
		if kind == kindChunks {
			hg := t.g.hash(tagGroup, uint64(s.idx), uint64(seq))
			s.total, s.left, s.num, s.legacy = size, size, 0, legacy
			s.scheduled = !legacy && seq > 8 && hg%61 == 7
			s.nonce = 0
			if s.scheduled {
				s.nonce = int32(hg >> 40 % 3)
			}
			s.payer = o.AccountID(int(hg >> 8 % Accounts))
			s.validStart = ts - 2*second - int64(hg>>16%uint64(8*second))
			s.lastLen = 1 + int(hg>>48%chunkSize)
			if size == 1 {
				s.lastLen = 1 + int(hg>>48%600)
			}
			s.initTx = s.initTx[:0]
			if !legacy {
				s.initTx = appendTransactionID(s.initTx, s.validStart, s.payer, s.scheduled, s.nonce)
			}
		}
	}

	var r rng
	if t.payloads {
		r = t.g.rng(tagPayload, uint64(s.idx), uint64(seq))
	}
	buf := t.buf[:0]
	if kind == kindChunks {
		s.num++
		s.left--
		ev.chunkNum, ev.chunks, ev.legacy = s.num, s.total, s.legacy
		ev.payer, ev.validStart = s.payer, s.validStart+int64(s.num-1)
		ev.scheduled, ev.nonce = s.scheduled, s.nonce
		if !s.legacy {
			ev.initTx = s.initTx
		}
		if t.payloads {
			n := chunkSize
			if s.left == 0 {
				n = s.lastLen
			}
			buf = appendText(buf, &r, n, true)
		}
	} else {
		ev.payer = o.AccountID(int(h >> 8 % Accounts))
		ev.validStart = ts - 2*second - int64(h>>16%uint64(8*second))
		if t.payloads {
			switch kind {
			case kindText:
				buf = appendText(buf, &r, 12+r.intn(240), false)
			case kindJSON:
				buf = appendJSON(buf, &r, o, seq)
			case kindBinary:
				// A lead byte that no UTF-8 text starts with, then noise.
				buf = append(buf, [...]byte{0xff, 0xfe, 0xc0, 0x80}[r.intn(4)])
				buf = r.appendBytes(buf, 15+r.intn(112))
			}
		}
	}
	if t.payloads {
		t.buf = buf
		ev.message = buf
		rh := t.g.rng(tagRunningHash, uint64(s.idx), uint64(seq))
		ev.runningHash = rh.appendBytes(t.hash[:0], 48)
	}
}

// bytesValue passes a reused byte slice to COPY without boxing it anew per row;
// nil is NULL.
type bytesValue struct{ b []byte }

func (v *bytesValue) BytesValue() ([]byte, error) { return v.b, nil }

var messageColumns = []string{
	"consensus_timestamp", "message", "running_hash", "sequence_number", "running_hash_version",
	"chunk_num", "chunk_total", "payer_account_id", "valid_start_timestamp", "topic_id", "initial_transaction_id",
}

// messageSource streams topic_message rows. Values returns the same slice of
// pointers every time: COPY encodes a row before asking for the next one.
type messageSource struct {
	t                                 *timeline
	ts, seq, topic, payer, validStart pgtype.Int8
	version                           pgtype.Int2
	chunkNum, chunkTotal              pgtype.Int4
	message, runningHash, initialTxID bytesValue
	values                            []any
}

func newMessageSource(o *Options) *messageSource {
	return (&messageSource{t: newTimeline(o, true)}).bind()
}

// bind points Values at the row's fields.
func (s *messageSource) bind() *messageSource {
	s.values = []any{&s.ts, &s.message, &s.runningHash, &s.seq, &s.version, &s.chunkNum, &s.chunkTotal,
		&s.payer, &s.validStart, &s.topic, &s.initialTxID}
	return s
}

func (s *messageSource) Next() bool {
	for s.t.next() {
		if !s.t.ev.failed {
			s.set(&s.t.ev)
			return true
		}
	}
	return false
}

// set makes ev's message the current row.
func (s *messageSource) set(ev *event) {
	s.ts = pgtype.Int8{Int64: ev.ts, Valid: true}
	s.seq = pgtype.Int8{Int64: ev.seq, Valid: true}
	s.topic = pgtype.Int8{Int64: ev.topic, Valid: true}
	s.payer = pgtype.Int8{Int64: ev.payer, Valid: true}
	s.version = pgtype.Int2{Int16: 3, Valid: !ev.nullVersion}
	s.chunkNum = pgtype.Int4{Int32: ev.chunkNum, Valid: ev.chunks > 0}
	s.chunkTotal = pgtype.Int4{Int32: ev.chunks, Valid: ev.chunks > 0}
	s.validStart = pgtype.Int8{Int64: ev.validStart, Valid: ev.legacy}
	s.message.b, s.runningHash.b, s.initialTxID.b = ev.message, ev.runningHash, ev.initTx
}

func (s *messageSource) Values() ([]any, error) { return s.values, nil }
func (s *messageSource) Err() error             { return nil }

var transactionColumns = []string{
	"consensus_timestamp", "type", "result", "payer_account_id", "valid_start_ns", "valid_duration_seconds",
	"node_account_id", "entity_id", "max_fee", "charged_tx_fee", "transaction_hash", "scheduled", "nonce", "index",
}

// transactionSource streams transaction rows: the topic creations, then every
// message and failed submission in timestamp order.
type transactionSource struct {
	o                                   *Options
	g                                   gen
	t                                   *timeline
	created                             int // topic creations emitted
	ts, payer, validStart, node, entity pgtype.Int8
	duration, maxFee, charged           pgtype.Int8
	typ, result                         pgtype.Int2
	nonce, index                        pgtype.Int4
	scheduled                           pgtype.Bool
	hash                                bytesValue
	hashBuf                             [48]byte
	values                              []any
}

func newTransactionSource(o *Options) *transactionSource {
	return (&transactionSource{o: o, g: newGen(o.Seed), t: newTimeline(o, false)}).bind()
}

// bind points Values at the row's fields.
func (s *transactionSource) bind() *transactionSource {
	s.values = []any{&s.ts, &s.typ, &s.result, &s.payer, &s.validStart, &s.duration, &s.node, &s.entity,
		&s.maxFee, &s.charged, &s.hash, &s.scheduled, &s.nonce, &s.index}
	return s
}

func (s *transactionSource) Next() bool {
	if s.created < s.o.Topics {
		i := s.created
		s.created++
		ts := s.o.TopicCreatedTimestamp(i)
		ev := event{ts: ts, topic: s.o.TopicID(i), payer: s.o.AccountID(i * 7), validStart: ts - 3*second,
			h: s.g.hash(tagTopicCreated, uint64(i), 1), result: ResultSuccess}
		s.set(&ev, TypeConsensusCreateTopic, 2_000_000_000)
		return true
	}
	if !s.t.next() {
		return false
	}
	s.set(&s.t.ev, TypeConsensusSubmitMessage, 100_000_000)
	return true
}

// set makes ev's transaction, of type typ, the current row.
func (s *transactionSource) set(ev *event, typ int16, maxFee int64) {
	s.typ = pgtype.Int2{Int16: typ, Valid: true}
	s.maxFee = pgtype.Int8{Int64: maxFee, Valid: true}
	s.ts = pgtype.Int8{Int64: ev.ts, Valid: true}
	s.result = pgtype.Int2{Int16: ev.result, Valid: true}
	s.payer = pgtype.Int8{Int64: ev.payer, Valid: true}
	s.validStart = pgtype.Int8{Int64: ev.validStart, Valid: true}
	s.duration = pgtype.Int8{Int64: 120, Valid: true}
	s.node = pgtype.Int8{Int64: s.o.EntityID(firstNode + int64(ev.h>>24%nodes)), Valid: true}
	s.entity = pgtype.Int8{Int64: ev.topic, Valid: true}
	s.charged = pgtype.Int8{Int64: 60_000 + int64(ev.h>>32%40_000), Valid: true}
	s.scheduled = pgtype.Bool{Bool: ev.scheduled, Valid: true}
	s.nonce = pgtype.Int4{Int32: ev.nonce, Valid: true}
	s.index = pgtype.Int4{Int32: int32(ev.h >> 56 % 64), Valid: true}
	r := s.g.rng(tagTxHash, uint64(ev.ts), 0)
	s.hash.b = r.appendBytes(s.hashBuf[:0], 48)
}

func (s *transactionSource) Values() ([]any, error) { return s.values, nil }
func (s *transactionSource) Err() error             { return nil }
