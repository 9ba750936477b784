package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

const scheduleColumns = "s.consensus_timestamp, s.creator_account_id, s.executed_timestamp, s.expiration_time, " +
	"s.payer_account_id, s.schedule_id, s.transaction_body, s.wait_for_expiry, " +
	"e.id IS NOT NULL AS has_entity, e.deleted, e.key, e.memo"

const signatureColumns = "entity_id, consensus_timestamp, public_key_prefix, signature, type"

// The schedules routes' statements are fixed texts with parameters, each
// prepared once per connection, as the message routes' are: built with the
// values written in, the list's join (and the signatures' IN list) would be
// parsed and planned by the server for every request, and planning such a
// page costs more than executing it; prepared, each is an execution of a
// cached generic plan.
const (
	// scheduleByIDSQL: the schedule route, one statement for the schedule,
	// its entity row and its signatures: a row per signature, oldest first
	// (the schedule's columns repeated; one row with null signature columns
	// when it has none). Two statements (the schedule, then its
	// signatures) would cost the service two round trips and the server two
	// executions.
	scheduleByIDSQL = "SELECT " + scheduleColumns + ", g.consensus_timestamp, g.public_key_prefix, g.signature, g.type " +
		"FROM schedule AS s LEFT JOIN entity AS e ON e.id = s.schedule_id " +
		"LEFT JOIN LATERAL (SELECT consensus_timestamp, public_key_prefix, signature, type FROM transaction_signature AS x " +
		"WHERE x.entity_id = s.schedule_id) AS g ON true " +
		"WHERE s.schedule_id = $1 ORDER BY g.consensus_timestamp"

	// A page of the list filtered by schedule id only (or not at all): one
	// range and one exclusion list (model.RangeOf), so that the generic plan
	// walks the primary key from the range's start whatever the values, and
	// joins each schedule's entity row on its primary key.
	schedulePage = "SELECT " + scheduleColumns + " FROM schedule AS s " +
		"LEFT JOIN entity AS e ON e.id = s.schedule_id " +
		"WHERE s.schedule_id BETWEEN $1 AND $2 AND s.schedule_id <> ALL ($3::bigint[])"
	schedulePageAsc  = schedulePage + " ORDER BY s.schedule_id ASC LIMIT $4"
	schedulePageDesc = schedulePage + " ORDER BY s.schedule_id DESC LIMIT $4"

	// The creator account filtered as well: the best plan depends on the
	// values (a narrow creator range wants the creator index and a sort, a
	// wide one the primary key), so these are planned for their values
	// every time, as the messages' mixed pages are.
	schedulePageCreator = schedulePage +
		" AND s.creator_account_id BETWEEN $4 AND $5 AND s.creator_account_id <> ALL ($6::bigint[])"
	schedulePageCreatorAsc  = schedulePageCreator + " ORDER BY s.schedule_id ASC LIMIT $7"
	schedulePageCreatorDesc = schedulePageCreator + " ORDER BY s.schedule_id DESC LIMIT $7"

	// schedulesByIDSQL: the schedules with these ids ($1, an array), in id
	// order, one probe of the primary key each.
	schedulesByIDSQL = "SELECT " + scheduleColumns + " FROM schedule AS s " +
		"LEFT JOIN entity AS e ON e.id = s.schedule_id " +
		"WHERE s.schedule_id = ANY ($1::bigint[]) ORDER BY s.schedule_id"

	// signaturesOfSQL: the signatures of a page of schedules, one probe of
	// the (entity_id DESC, consensus_timestamp DESC) index per schedule, in
	// the index's order (no sort).
	signaturesOfSQL = "SELECT " + signatureColumns + " FROM transaction_signature " +
		"WHERE entity_id = ANY ($1::bigint[]) ORDER BY entity_id DESC, consensus_timestamp DESC"
)

// Schedules is one page of schedules with their entity fields (one statement,
// primary-key join) and their signatures (one batched statement).
func (d *DB) Schedules(ctx context.Context, f app.ScheduleFilter) ([]model.Schedule, error) {
	rows := make([]model.Schedule, 0, max(0, min(f.Limit, 128)))
	if f.NoMatch {
		return rows, nil
	}
	ids, okIDs := model.RangeOf(f.ScheduleID)
	creators, okCreators := model.RangeOf(f.CreatorAccountID)
	if !okIDs || !okCreators {
		return rows, nil
	}
	page, withCreator := schedulePageAsc, schedulePageCreatorAsc
	if f.Order == model.Desc {
		page, withCreator = schedulePageDesc, schedulePageCreatorDesc
	}
	read := func(rs driver.RowSource) (err error) { rows, err = scanSchedules(rs, rows); return err }
	limit := int64(f.Limit)
	var err error
	if len(f.CreatorAccountID) == 0 {
		err = d.query(ctx, read, page, ids.Lo, ids.Hi, driver.NotArray(ids), limit)
	} else {
		err = d.queryPlanned(ctx, read, withCreator, ids.Lo, ids.Hi, driver.NotArray(ids),
			creators.Lo, creators.Hi, driver.NotArray(creators), limit)
	}
	if err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	if err := d.attachSignatures(ctx, rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// scanSchedules appends rows of scheduleColumns to out.
func scanSchedules(rows driver.RowSource, out []model.Schedule) ([]model.Schedule, error) {
	var (
		executed, expires pgtype.Int8
		deleted           pgtype.Bool
		memo              pgtype.Text
	)
	for rows.Next() {
		var sc model.Schedule
		if err := rows.Scan(&sc.ConsensusTimestamp, &sc.CreatorAccountID, &executed, &expires, &sc.PayerAccountID,
			&sc.ScheduleID, &sc.TransactionBody, &sc.WaitForExpiry, &sc.HasEntity, &deleted, &sc.Key, &memo); err != nil {
			return out, err
		}
		sc.ExecutedTimestamp = nullable[model.Timestamp](executed)
		sc.ExpirationTime = nullable[model.Timestamp](expires)
		sc.Deleted = nullableBool(deleted)
		sc.Memo = nullableText(memo)
		out = append(out, sc)
	}
	return out, rows.Err()
}

// scanSignatures appends rows of signatureColumns to out, in the order read.
func scanSignatures(rows driver.RowSource, out []model.Signature) ([]model.Signature, error) {
	for rows.Next() {
		var (
			g   model.Signature
			typ pgtype.Int2
		)
		if err := rows.Scan(&g.EntityID, &g.ConsensusTimestamp, &g.PublicKeyPrefix, &g.Signature, &typ); err != nil {
			return out, err
		}
		if typ.Valid {
			g.Type = &typ.Int16
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// Schedule is one schedule with its entity fields and signatures, in one
// statement.
func (d *DB) Schedule(ctx context.Context, id model.EntityID) (*model.Schedule, error) {
	var (
		sc    model.Schedule
		found bool
	)
	read := func(rows driver.RowSource) error {
		var (
			executed, expires, sigAt pgtype.Int8
			deleted                  pgtype.Bool
			memo                     pgtype.Text
			typ                      pgtype.Int2
		)
		for rows.Next() {
			var prefix, sig []byte
			if err := rows.Scan(&sc.ConsensusTimestamp, &sc.CreatorAccountID, &executed, &expires, &sc.PayerAccountID,
				&sc.ScheduleID, &sc.TransactionBody, &sc.WaitForExpiry, &sc.HasEntity, &deleted, &sc.Key, &memo,
				&sigAt, &prefix, &sig, &typ); err != nil {
				return err
			}
			found = true
			if sigAt.Valid {
				g := model.Signature{EntityID: sc.ScheduleID, ConsensusTimestamp: model.Timestamp(sigAt.Int64),
					PublicKeyPrefix: prefix, Signature: sig}
				if typ.Valid {
					t := typ.Int16
					g.Type = &t
				}
				sc.Signatures = append(sc.Signatures, g)
			}
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
		return nil, app.ErrNotFound
	}
	return &sc, nil
}

// SchedulesByID loads the schedules with these ids (in id order, missing ids
// skipped) in two statements, for single lookups and batch loaders alike.
func (d *DB) SchedulesByID(ctx context.Context, ids []model.EntityID) ([]model.Schedule, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows := make([]model.Schedule, 0, len(ids))
	read := func(rs driver.RowSource) (err error) { rows, err = scanSchedules(rs, rows); return err }
	if err := d.query(ctx, read, schedulesByIDSQL, driver.Int64Array(ids)); err != nil {
		return nil, fmt.Errorf("schedules %v: %w", ids, err)
	}
	if err := d.attachSignatures(ctx, rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// SignaturesOf returns the signatures of each schedule, oldest first, in one
// statement on the (entity_id, consensus_timestamp) index.
func (d *DB) SignaturesOf(ctx context.Context, ids []model.EntityID) (map[model.EntityID][]model.Signature, error) {
	out := make(map[model.EntityID][]model.Signature, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sigs := make([]model.Signature, 0, 2*len(ids))
	read := func(rs driver.RowSource) (err error) { sigs, err = scanSignatures(rs, sigs); return err }
	// arrays travel as text literals (Int64Array)
	if err := d.query(ctx, read, signaturesOfSQL, driver.Int64Array(ids)); err != nil {
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
