package db

import (
	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/model"
)

// Rows are read into model values by hand rather than through bun's
// reflection, which showed in the profiles of the list routes: each
// statement's columns are scanned in order into plain values, pgtype's
// nullable ones for nullable columns (they scan without reflection through
// pgx and, as sql.Scanners, through database/sql too).

// scanMessages appends rows of messageColumns to out.
func scanMessages(rows rowSource, out []model.TopicMessage) ([]model.TopicMessage, error) {
	return scanMessageRows(rows, out, nil, nil)
}

// scanMessageRows appends rows of prefix's columns then messageColumns to
// out, calling each (when not nil) after each row is scanned. It allocates
// nothing a row but what the driver does (the three byte columns): every row
// is scanned into one scratch row and copied into a slab made once for the
// page (out's spare capacity is the page's limit), which the messages'
// nullable fields point into.
func scanMessageRows(rows rowSource, out []model.TopicMessage, prefix []any, each func()) ([]model.TopicMessage, error) {
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

// columns are the scan destinations of messageColumns, in its order: the
// one place that knows it besides the list itself. The three columns that
// are never null go where the caller says (a left join's, such as the live
// poll's, can be).
func (r *messageRow) columns(ts, seq, topic any) []any {
	return []any{ts, &r.message, &r.hash, seq, &r.version, &r.chunkNum, &r.chunkTotal, &r.payer, &r.validStart,
		topic, &r.initial}
}

// messageRow is a row of messageColumns.
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

// scanOne scans the first row's columns into dest; no row leaves dest as it
// was.
func scanOne(rows rowSource, dest ...any) error {
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// nullable is a nullable bigint column as a pointer to its value.
func nullable[T ~int64](v pgtype.Int8) *T {
	if !v.Valid {
		return nil
	}
	x := T(v.Int64)
	return &x
}

// nullableBool is a nullable boolean column as a pointer to its value.
func nullableBool(v pgtype.Bool) *bool {
	if !v.Valid {
		return nil
	}
	return &v.Bool
}

// nullableText is a nullable text column as a pointer to its value.
func nullableText(v pgtype.Text) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
