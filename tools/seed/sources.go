package seed

import (
	"github.com/jackc/pgx/v5/pgtype"
)

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
