package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LiveChunkEvery is how often LiveTopic.Append writes a chunk group instead of
// a single message: every LiveChunkEvery-th call.
const LiveChunkEvery = 7

// LiveTopic keeps one seeded topic growing the way a mirror node importer
// fills it, so that a demo has something to follow live. Each Append writes
// the topic's next message (or chunk group) together with its transaction
// rows in one database transaction: a reader never sees a message without its
// transaction, which is what the live poller relies on.
//
// It assumes it is the only writer of the topic. A concurrent one makes an
// Append fail on the (topic_id, sequence_number) index, and nothing of that
// Append is written.
type LiveTopic struct {
	o       Options
	index   int
	g       gen
	appends int64 // successful Appends: picks the next kind
	msg     *messageSource
	tx      *transactionSource
}

// NewLiveTopic is a writer for topic index of o's data set (0 is 0.0.2001).
func NewLiveTopic(o Options, index int) (*LiveTopic, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if index < 0 || index >= o.Topics {
		return nil, fmt.Errorf("seed: live topic %d out of range 0..%d", index, o.Topics-1)
	}
	l := &LiveTopic{o: o, index: index, g: newGen(o.Seed)}
	// The COPY sources of Run, without a timeline: Append sets their rows.
	l.msg = (&messageSource{}).bind()
	l.tx = (&transactionSource{o: &l.o, g: l.g}).bind()
	return l, nil
}

// ID is the encoded id of the topic.
func (l *LiveTopic) ID() int64 { return l.o.TopicID(l.index) }

// HasSubmitKey reports whether the seeded topic has a submit key; the
// written rows ignore it, as the importer does (consensus checked it).
func (l *LiveTopic) HasSubmitKey() bool {
	return topicSubmitKeys[l.index%len(topicSubmitKeys)] != keyNull
}

// Append writes the topic's next message and its transaction, or on every
// LiveChunkEvery-th call a group of 2–4 chunks (new form: initial transaction
// id set) with one transaction each, and returns the topic_message rows
// written. The first sequence number is the topic's maximum plus one; the
// first consensus timestamp is the wall clock, or just past the newest
// transaction if the clock is behind it, so timestamps only ever grow, as the
// poller's watermark needs. On error nothing is written, and the next call
// writes the same kind again.
func (l *LiveTopic) Append(ctx context.Context, conn *pgx.Conn) (int, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("seed: live topic: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var seq, newest int64
	err = tx.QueryRow(ctx, `select
		(select coalesce(max(sequence_number), 0) from topic_message where topic_id = $1),
		(select coalesce(max(consensus_timestamp), 0) from transaction)`, l.ID()).Scan(&seq, &newest)
	if err != nil {
		return 0, fmt.Errorf("seed: live topic: %w", err)
	}
	evs := l.events(seq+1, max(time.Now().UnixNano(), newest+1))
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"topic_message"}, messageColumns,
		&eventRows{evs: evs, set: l.msg.set, values: l.msg.values}); err != nil {
		return 0, fmt.Errorf("seed: live topic: copy topic_message: %w", err)
	}
	setTx := func(ev *event) { l.tx.set(ev, TypeConsensusSubmitMessage, 100_000_000) }
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"transaction"}, transactionColumns,
		&eventRows{evs: evs, set: setTx, values: l.tx.values}); err != nil {
		return 0, fmt.Errorf("seed: live topic: copy transaction: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("seed: live topic: commit: %w", err)
	}
	l.appends++
	return len(evs), nil
}

// events are the rows of the next Append: text and JSON in turn, a chunk
// group every LiveChunkEvery-th time, with payloads, payers and valid starts
// drawn as Run draws them.
func (l *LiveTopic) events(seq, ts int64) []event {
	o, i := &l.o, uint64(l.index)
	topic := l.ID()
	r := l.g.rng(tagPayload, i, uint64(seq))
	if l.appends%LiveChunkEvery == LiveChunkEvery-1 {
		hg := l.g.hash(tagGroup, i, uint64(seq))
		total := 2 + int32(hg%3)
		payer := o.AccountID(int(hg >> 8 % Accounts))
		validStart := ts - 2*second - int64(hg>>16%uint64(8*second))
		initTx := appendTransactionID(nil, validStart, payer, false, 0)
		evs := make([]event, total)
		for k := range total {
			n := chunkSize
			if k == total-1 {
				n = 1 + int(hg>>48%chunkSize)
			}
			s := seq + int64(k)
			evs[k] = event{
				ts: ts + int64(k), topic: topic, seq: s, h: l.g.hash(tagMessage, i, uint64(s)), result: ResultSuccess,
				chunkNum: k + 1, chunks: total, payer: payer, validStart: validStart + int64(k), initTx: initTx,
				message: appendText(nil, &r, n, true), runningHash: l.runningHash(s),
			}
		}
		return evs
	}
	h := l.g.hash(tagMessage, i, uint64(seq))
	var message []byte
	if l.appends%2 == 0 {
		message = appendText(nil, &r, 12+r.intn(240), false)
	} else {
		message = appendJSON(nil, &r, o, seq)
	}
	return []event{{
		ts: ts, topic: topic, seq: seq, h: h, result: ResultSuccess,
		payer:      o.AccountID(int(h >> 8 % Accounts)),
		validStart: ts - 2*second - int64(h>>16%uint64(8*second)),
		message:    message, runningHash: l.runningHash(seq),
	}}
}

func (l *LiveTopic) runningHash(seq int64) []byte {
	r := l.g.rng(tagRunningHash, uint64(l.index), uint64(seq))
	return r.appendBytes(nil, 48)
}

// eventRows feeds events to COPY through a source's set, which fills the
// fields its values point at.
type eventRows struct {
	evs    []event
	set    func(*event)
	values []any
}

func (r *eventRows) Next() bool {
	if len(r.evs) == 0 {
		return false
	}
	r.set(&r.evs[0])
	r.evs = r.evs[1:]
	return true
}

func (r *eventRows) Values() ([]any, error) { return r.values, nil }
func (r *eventRows) Err() error             { return nil }
