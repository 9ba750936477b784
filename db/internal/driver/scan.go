package driver

import (
	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/model"
)

// Rows are read into model values by hand rather than through bun's
// reflection, which showed in the profiles of the list routes: each
// statement's columns are scanned in order into plain values, pgtype's
// nullable ones for nullable columns (they scan without reflection through
// pgx and, as sql.Scanners, through database/sql too).

// ScanMessages appends rows of MessageColumns to out.
func ScanMessages(rows RowSource, out []model.TopicMessage) ([]model.TopicMessage, error) {
	return ScanMessageRows(rows, out, nil, nil)
}

// ScanMessageRows appends rows of prefix's columns then MessageColumns to
// out, calling each (when not nil) after each row is scanned. It allocates
// nothing a row but what the driver does (the three byte columns): every row
// is scanned into one scratch row and copied into a slab made once for the
// page (out's spare capacity is the page's limit), which the messages'
// nullable fields point into.
func ScanMessageRows(rows RowSource, out []model.TopicMessage, prefix []any, each func()) ([]model.TopicMessage, error) {
	var (
		r    messageRow
		slab []messageRow
	)
	dest := r.columns(&r.ts, &r.seq, &r.topic)
	if len(prefix) > 0 {
		dest = append(prefix[:len(prefix):len(prefix)], dest...)
	}
	for rows.Next() {
		// The previous row's message keeps its byte slices: a driver must
		// not scan into them.
		r.message, r.hash, r.initial = nil, nil, nil
		if err := rows.Scan(dest...); err != nil {
			return out, err
		}
		if len(slab) == 0 {
			slab = make([]messageRow, max(cap(out)-len(out), 1))
		}
		slab[0] = r
		out = append(out, slab[0].topicMessage())
		slab = slab[1:]
		if each != nil {
			each()
		}
	}
	return out, rows.Err()
}

// columns are the scan destinations of MessageColumns, in its order: the
// one place that knows it besides the list itself. The three columns that
// are never null go where the caller says (a left join's, such as the live
// poll's, can be).
func (r *messageRow) columns(ts, seq, topic any) []any {
	return []any{ts, &r.message, &r.hash, seq, &r.version, &r.chunkNum, &r.chunkTotal, &r.payer, &r.validStart,
		topic, &r.initial}
}

// messageRow is a row of MessageColumns.
type messageRow struct {
	ts, seq, topic         int64
	message, hash, initial []byte
	version                pgtype.Int2
	chunkNum, chunkTotal   pgtype.Int4
	payer, validStart      pgtype.Int8
	payerID                model.EntityID
	validStartTS           model.Timestamp
}

// topicMessage is the row's message; its nullable fields point into r.
func (r *messageRow) topicMessage() model.TopicMessage {
	m := model.TopicMessage{
		ConsensusTimestamp:   model.Timestamp(r.ts),
		Message:              r.message,
		RunningHash:          r.hash,
		SequenceNumber:       r.seq,
		TopicID:              model.EntityID(r.topic),
		InitialTransactionID: r.initial,
	}
	if r.version.Valid {
		m.RunningHashVersion = &r.version.Int16
	}
	if r.chunkNum.Valid {
		m.ChunkNum = &r.chunkNum.Int32
	}
	if r.chunkTotal.Valid {
		m.ChunkTotal = &r.chunkTotal.Int32
	}
	if r.payer.Valid {
		r.payerID = model.EntityID(r.payer.Int64)
		m.PayerAccountID = &r.payerID
	}
	if r.validStart.Valid {
		r.validStartTS = model.Timestamp(r.validStart.Int64)
		m.ValidStartTimestamp = &r.validStartTS
	}
	return m
}

// ScanOne scans the first row's columns into dest; no row leaves dest as it
// was.
func ScanOne(rows RowSource, dest ...any) error {
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// LivePollRows reads the rows of a poll's statement into poll.
type LivePollRows struct {
	Poll      app.Poll
	Walked    int64 // submit transactions walked
	HeadFound bool  // the ledger has a transaction at or after the head floor
}

// Read reads a poll's rows (a statement's read).
func (lp *LivePollRows) Read(rows RowSource) error {
	var (
		head, scanned, n, ts, seq, topic pgtype.Int8
		r                                messageRow
	)
	dest := append([]any{&head, &scanned, &n}, r.columns(&ts, &seq, &topic)...)
	for rows.Next() {
		r.message, r.hash, r.initial = nil, nil, nil
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		lp.Poll.Head, lp.Poll.Scanned, lp.Walked = model.Timestamp(head.Int64), model.Timestamp(scanned.Int64), n.Int64
		lp.HeadFound = head.Valid
		if !ts.Valid { // the marks row alone: no message
			continue
		}
		r.ts, r.seq, r.topic = ts.Int64, seq.Int64, topic.Int64
		row := r // the message's nullable fields point into its own copy
		lp.Poll.Messages = append(lp.Poll.Messages, row.topicMessage())
	}
	return rows.Err()
}
