package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"mirrorql/model"
)

const scheduleColumns = "s.consensus_timestamp, s.creator_account_id, s.executed_timestamp, s.expiration_time, " +
	"s.payer_account_id, s.schedule_id, s.transaction_body, s.wait_for_expiry, " +
	"e.id IS NOT NULL AS has_entity, e.deleted, e.key, e.memo"

const signatureColumns = "entity_id, consensus_timestamp, public_key_prefix, signature, type"

// ScheduleFilter selects a page of schedules ordered by schedule id.
// NoMatch is set when a filter value names no entity (an opaque EVM address):
// the page is empty without a query.
type ScheduleFilter struct {
	ScheduleID       []model.Condition[model.EntityID]
	CreatorAccountID []model.Condition[model.EntityID]
	NoMatch          bool
	Order            model.Order
	Limit            int
}

// Schedules is one page of schedules with their entity fields (one statement,
// primary-key join) and their signatures (one batched statement).
func (d *DB) Schedules(ctx context.Context, f ScheduleFilter) ([]model.Schedule, error) {
	if f.NoMatch {
		return []model.Schedule{}, nil
	}
	q := d.scheduleSelect()
	for _, c := range f.ScheduleID {
		q = q.Where("s.schedule_id "+c.Op.SQL()+" ?", int64(c.Value))
	}
	for _, c := range f.CreatorAccountID {
		q = q.Where("s.creator_account_id "+c.Op.SQL()+" ?", int64(c.Value))
	}
	rows := make([]model.Schedule, 0, f.Limit)
	if err := q.OrderExpr("s.schedule_id "+direction(f.Order)).Limit(int64(f.Limit)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	if err := d.attachSignatures(ctx, rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// The schedule route's statements: fixed, with the id as their parameter,
// so that the server plans each once per connection. The signatures walk the
// (entity_id, consensus_timestamp) index backwards, as SignaturesOf's do.
const (
	scheduleByIDSQL = "SELECT " + scheduleColumns + " FROM schedule AS s " +
		"LEFT JOIN entity AS e ON e.id = s.schedule_id WHERE s.schedule_id = $1"
	signaturesOfScheduleSQL = "SELECT " + signatureColumns + " FROM transaction_signature WHERE entity_id = $1 " +
		"ORDER BY entity_id DESC, consensus_timestamp DESC"
)

// Schedule is one schedule with its entity fields and signatures.
func (d *DB) Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error) {
	var (
		sc    model.Schedule
		found bool
	)
	read := func(rows rowSource) error {
		var (
			executed, expires pgtype.Int8
			deleted           pgtype.Bool
			memo              pgtype.Text
		)
		for rows.Next() {
			if err := rows.Scan(&sc.ConsensusTimestamp, &sc.CreatorAccountID, &executed, &expires, &sc.PayerAccountID,
				&sc.ScheduleID, &sc.TransactionBody, &sc.WaitForExpiry, &sc.HasEntity, &deleted, &sc.Key, &memo); err != nil {
				return err
			}
			found = true
		}
		sc.ExecutedTimestamp = nullable[model.Timestamp](executed)
		sc.ExpirationTime = nullable[model.Timestamp](expires)
		sc.Deleted = nullableBool(deleted)
		sc.Memo = nullableText(memo)
		return rows.Err()
	}
	if err := d.query(ctx, read, scheduleByIDSQL, int64(id)); err != nil {
		return nil, fmt.Errorf("schedule %s: %w", id, err)
	}
	if !found {
		return nil, ErrNotFound
	}
	readSigs := func(rows rowSource) error {
		var sigs []model.Signature
		for rows.Next() {
			var (
				g   model.Signature
				typ pgtype.Int2
			)
			if err := rows.Scan(&g.EntityID, &g.ConsensusTimestamp, &g.PublicKeyPrefix, &g.Signature, &typ); err != nil {
				return err
			}
			if typ.Valid {
				g.Type = &typ.Int16
			}
			sigs = append(sigs, g)
		}
		// the index runs descending: oldest first is the reverse
		for i, j := 0, len(sigs)-1; i < j; i, j = i+1, j-1 {
			sigs[i], sigs[j] = sigs[j], sigs[i]
		}
		sc.Signatures = sigs
		return rows.Err()
	}
	if err := d.query(ctx, readSigs, signaturesOfScheduleSQL, int64(id)); err != nil {
		return nil, fmt.Errorf("signatures of schedule %s: %w", id, err)
	}
	return &sc, nil
}

// SchedulesByID loads the schedules with these ids (in id order, missing ids
// skipped) in two statements, for single lookups and batch loaders alike.
func (d *DB) SchedulesByID(ctx context.Context, ids []model.EntityID) ([]model.Schedule, error) {
	var rows []model.Schedule
	err := d.scheduleSelect().Where("s.schedule_id IN (?)", bun.In(ids)).
		OrderExpr("s.schedule_id").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("schedules %v: %w", ids, err)
	}
	if err := d.attachSignatures(ctx, rows); err != nil {
		return nil, err
	}
	return rows, nil
}

func (d *DB) scheduleSelect() *bun.SelectQuery {
	return d.bun.NewSelect().ColumnExpr(scheduleColumns).TableExpr("schedule AS s").
		Join("LEFT JOIN entity AS e ON e.id = s.schedule_id")
}

// SignaturesOf returns the signatures of each schedule, oldest first, in one
// statement on the (entity_id, consensus_timestamp) index.
func (d *DB) SignaturesOf(ctx context.Context, ids []model.EntityID) (map[model.EntityID][]model.Signature, error) {
	out := make(map[model.EntityID][]model.Signature, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var sigs []model.Signature
	err := d.bun.NewSelect().
		ColumnExpr(signatureColumns).
		TableExpr("transaction_signature").
		Where("entity_id IN (?)", bun.In(ids)).
		OrderExpr("entity_id DESC, consensus_timestamp DESC").
		Scan(ctx, &sigs)
	if err != nil {
		return nil, fmt.Errorf("signatures of %d schedules: %w", len(ids), err)
	}
	// the index runs descending; walk it backwards for oldest-first lists
	for i := len(sigs) - 1; i >= 0; i-- {
		out[sigs[i].EntityID] = append(out[sigs[i].EntityID], sigs[i])
	}
	return out, nil
}

func (d *DB) attachSignatures(ctx context.Context, rows []model.Schedule) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]model.EntityID, len(rows))
	for i := range rows {
		ids[i] = rows[i].ScheduleID
	}
	sigs, err := d.SignaturesOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].Signatures = sigs[rows[i].ScheduleID]
	}
	return nil
}
