package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"mirrorql/model"
)

// topicRow is the joined topic, entity and custom_fee row; the fixed fees
// arrive as jsonb text (fixedFee).
type topicRow struct {
	ID                 int64
	HasTopic           bool
	HasEntity          bool
	HasCustomFee       bool
	AdminKey           []byte
	SubmitKey          []byte
	FeeScheduleKey     []byte
	FeeExemptKeyList   []byte
	AutoRenewAccountID *model.EntityID
	AutoRenewPeriod    *int64
	CreatedTimestamp   *model.Timestamp
	Deleted            *bool
	Memo               *string
	TimestampFrom      *model.Timestamp
	TimestampTo        *model.Timestamp
	CustomFeeFrom      *model.Timestamp
	FixedFees          []byte
}

// The id comes from whichever of the three rows exists, so a missing topic
// row can still be told apart from a missing entity row.
const topicColumns = "coalesce(t.id, e.id) AS id, t.id IS NOT NULL AS has_topic, e.id IS NOT NULL AS has_entity, " +
	"cf.entity_id IS NOT NULL AS has_custom_fee, t.admin_key, t.submit_key, t.fee_schedule_key, t.fee_exempt_key_list, " +
	"e.auto_renew_account_id, e.auto_renew_period, e.created_timestamp, e.deleted, e.memo, " +
	"lower(e.timestamp_range) AS timestamp_from, upper(e.timestamp_range) AS timestamp_to, " +
	"lower(cf.timestamp_range) AS custom_fee_from, cf.fixed_fees"

// topicByIDSQL is the details route's statement: fixed, with the id as its
// parameter, so that the server plans it once per connection (primary-key
// lookups of the three tables).
const topicByIDSQL = "SELECT " + topicColumns + " FROM (SELECT $1::bigint AS id) AS k " +
	"LEFT JOIN topic AS t ON t.id = k.id LEFT JOIN entity AS e ON e.id = k.id " +
	"LEFT JOIN custom_fee AS cf ON cf.entity_id = k.id"

// Topic is the current state of one topic from its topic, entity and
// custom_fee rows (primary-key lookups); ErrNotFound only when none exists.
func (d *DB) Topic(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	var (
		r     topicRow
		found bool
	)
	read := func(rows rowSource) error {
		var (
			id                                 pgtype.Int8
			renewAccount, renewPeriod, created pgtype.Int8
			from, to, feeFrom                  pgtype.Int8
			deleted                            pgtype.Bool
			memo                               pgtype.Text
		)
		for rows.Next() {
			if err := rows.Scan(&id, &r.HasTopic, &r.HasEntity, &r.HasCustomFee, &r.AdminKey, &r.SubmitKey,
				&r.FeeScheduleKey, &r.FeeExemptKeyList, &renewAccount, &renewPeriod, &created, &deleted, &memo,
				&from, &to, &feeFrom, &r.FixedFees); err != nil {
				return err
			}
			found = true
		}
		r.ID = id.Int64
		r.AutoRenewAccountID = nullable[model.EntityID](renewAccount)
		r.AutoRenewPeriod = nullable[int64](renewPeriod)
		r.CreatedTimestamp = nullable[model.Timestamp](created)
		r.TimestampFrom = nullable[model.Timestamp](from)
		r.TimestampTo = nullable[model.Timestamp](to)
		r.CustomFeeFrom = nullable[model.Timestamp](feeFrom)
		r.Deleted = nullableBool(deleted)
		r.Memo = nullableText(memo)
		return rows.Err()
	}
	if err := d.query(ctx, read, topicByIDSQL, int64(id)); err != nil {
		return nil, fmt.Errorf("topic %s: %w", id, err)
	}
	if !found || !(r.HasTopic || r.HasEntity || r.HasCustomFee) {
		return nil, ErrNotFound
	}
	t, err := r.model()
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", id, err)
	}
	t.ID = id
	return t, nil
}

// TopicExists reports whether the topic has an entity row or any message; the
// list route asks only after an empty page (DECISIONS #2).
func (d *DB) TopicExists(ctx context.Context, topic model.EntityID) (bool, error) {
	var exists bool
	err := d.bun.NewRaw(`SELECT EXISTS (SELECT 1 FROM entity WHERE id = ?) OR
		EXISTS (SELECT 1 FROM topic_message WHERE topic_id = ?)`, int64(topic), int64(topic)).
		Scan(ctx, &exists)
	if err != nil {
		return false, fmt.Errorf("topic %s exists: %w", topic, err)
	}
	return exists, nil
}

// EntityKind is the type of the entity row with this id ("TOPIC",
// "ACCOUNT", ...), ErrNotFound when it has none.
func (d *DB) EntityKind(ctx context.Context, id model.EntityID) (string, error) {
	var kinds []string
	err := d.bun.NewRaw("SELECT type::text FROM entity WHERE id = ?", int64(id)).Scan(ctx, &kinds)
	if err != nil {
		return "", fmt.Errorf("entity %s: %w", id, err)
	}
	if len(kinds) == 0 {
		return "", ErrNotFound
	}
	return kinds[0], nil
}

// TopicFilter selects a page of topic entities ordered by id.
type TopicFilter struct {
	ID    []model.Condition[model.EntityID]
	Order model.Order
	Limit int
}

// Topics lists entities of type TOPIC on the (type, id) index.
func (d *DB) Topics(ctx context.Context, f TopicFilter) ([]model.Topic, error) {
	q := d.topicsFromEntities().Where("e.type = 'TOPIC'")
	for _, c := range f.ID {
		q = q.Where("e.id "+comparison(c.Op)+" ?", int64(c.Value))
	}
	return d.scanTopics(ctx, q.OrderExpr("e.id "+direction(f.Order)).Limit(int64(f.Limit)))
}

// TopicsByID loads the topics with entity rows among ids, in one statement.
func (d *DB) TopicsByID(ctx context.Context, ids []model.EntityID) ([]model.Topic, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return d.scanTopics(ctx, d.topicsFromEntities().Where("e.id IN (?)", bun.In(ids)).OrderExpr("e.id"))
}

func (d *DB) topicsFromEntities() *bun.SelectQuery {
	return d.bun.NewSelect().ColumnExpr(topicColumns).TableExpr("entity AS e").
		Join("LEFT JOIN topic AS t ON t.id = e.id").
		Join("LEFT JOIN custom_fee AS cf ON cf.entity_id = e.id")
}

func (d *DB) scanTopics(ctx context.Context, q *bun.SelectQuery) ([]model.Topic, error) {
	var rows []topicRow
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	out := make([]model.Topic, 0, len(rows))
	for i := range rows {
		t, err := rows[i].model()
		if err != nil {
			return nil, fmt.Errorf("topic %d: %w", rows[i].ID, err)
		}
		out = append(out, *t)
	}
	return out, nil
}

func (r *topicRow) model() (*model.Topic, error) {
	t := &model.Topic{
		ID: model.EntityID(r.ID), HasTopic: r.HasTopic, HasEntity: r.HasEntity, HasCustomFee: r.HasCustomFee,
		AdminKey: r.AdminKey, SubmitKey: r.SubmitKey, FeeScheduleKey: r.FeeScheduleKey,
		FeeExemptKeyList: r.FeeExemptKeyList, AutoRenewAccountID: r.AutoRenewAccountID,
		AutoRenewPeriod: r.AutoRenewPeriod, CreatedTimestamp: r.CreatedTimestamp, Deleted: r.Deleted,
		TimestampFrom: r.TimestampFrom, TimestampTo: r.TimestampTo, CustomFeeFrom: r.CustomFeeFrom,
		FixedFees: []model.FixedFee{},
	}
	if r.Memo != nil {
		t.Memo = *r.Memo
	}
	if len(r.FixedFees) > 0 {
		var fees []fixedFee
		if err := json.Unmarshal(r.FixedFees, &fees); err != nil {
			return nil, fmt.Errorf("custom_fee.fixed_fees: %w", err)
		}
		t.FixedFees = make([]model.FixedFee, len(fees))
		for i, f := range fees {
			t.FixedFees[i] = model.FixedFee(f)
		}
	}
	return t, nil
}

// fixedFee is one element of the custom_fee.fixed_fees jsonb array.
type fixedFee struct {
	Amount              int64           `json:"amount"`
	CollectorAccountID  *model.EntityID `json:"collector_account_id"`
	DenominatingTokenID *model.EntityID `json:"denominating_token_id"`
}
