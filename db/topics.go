package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

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
// custom_fee rows (primary-key lookups); app.ErrNotFound only when none
// exists.
func (d *DB) Topic(ctx context.Context, id model.EntityID) (*model.Topic, error) {
	var got []model.Topic
	read := func(rows driver.RowSource) (err error) { got, err = scanTopicRows(rows, got); return err }
	if err := d.query(ctx, read, topicByIDSQL, int64(id)); err != nil {
		return nil, fmt.Errorf("topic %s: %w", id, err)
	}
	if len(got) == 0 || !(got[0].HasTopic || got[0].HasEntity || got[0].HasCustomFee) {
		return nil, app.ErrNotFound
	}
	t := &got[0]
	t.ID = id
	return t, nil
}

// scanTopicRows appends rows of topicColumns to out; the fixed fees arrive as
// jsonb text (fixedFee).
func scanTopicRows(rows driver.RowSource, out []model.Topic) ([]model.Topic, error) {
	for rows.Next() {
		var (
			t                                  model.Topic
			id                                 pgtype.Int8
			renewAccount, renewPeriod, created pgtype.Int8
			from, to, feeFrom                  pgtype.Int8
			deleted                            pgtype.Bool
			memo                               pgtype.Text
			fees                               []byte
		)
		if err := rows.Scan(&id, &t.HasTopic, &t.HasEntity, &t.HasCustomFee, &t.AdminKey, &t.SubmitKey,
			&t.FeeScheduleKey, &t.FeeExemptKeyList, &renewAccount, &renewPeriod, &created, &deleted, &memo,
			&from, &to, &feeFrom, &fees); err != nil {
			return out, err
		}
		t.ID = model.EntityID(id.Int64)
		t.AutoRenewAccountID = nullable[model.EntityID](renewAccount)
		t.AutoRenewPeriod = nullable[int64](renewPeriod)
		t.CreatedTimestamp = nullable[model.Timestamp](created)
		t.TimestampFrom = nullable[model.Timestamp](from)
		t.TimestampTo = nullable[model.Timestamp](to)
		t.CustomFeeFrom = nullable[model.Timestamp](feeFrom)
		t.Deleted = nullableBool(deleted)
		t.Memo = memo.String
		var err error
		if t.FixedFees, err = fixedFees(fees); err != nil {
			return out, fmt.Errorf("topic %s: %w", t.ID, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// The topics' other statements: fixed texts with parameters, prepared once
// per connection, as every statement of the query layer is.
const (
	topicExistsSQL = "SELECT EXISTS (SELECT 1 FROM entity WHERE id = $1) OR " +
		"EXISTS (SELECT 1 FROM topic_message WHERE topic_id = $1)"
	entityKindSQL = "SELECT type::text FROM entity WHERE id = $1"

	topicsFromEntities = "SELECT " + topicColumns + " FROM entity AS e " +
		"LEFT JOIN topic AS t ON t.id = e.id LEFT JOIN custom_fee AS cf ON cf.entity_id = e.id"
	// A page of topic entities on the (type, id) index: the id filters as
	// one range and one exclusion list (model.RangeOf), as the schedules'.
	topicPage     = topicsFromEntities + " WHERE e.type = 'TOPIC' AND e.id BETWEEN $1 AND $2 AND e.id <> ALL ($3::bigint[])"
	topicPageAsc  = topicPage + " ORDER BY e.id ASC LIMIT $4"
	topicPageDesc = topicPage + " ORDER BY e.id DESC LIMIT $4"
	// topicsByIDSQL: the topics with entity rows among $1 (an array).
	topicsByIDSQL = topicsFromEntities + " WHERE e.id = ANY ($1::bigint[]) ORDER BY e.id"
)

// TopicExists reports whether the topic has an entity row or any message; the
// list route asks only after an empty page (docs/reference/DECISIONS.md #2).
func (d *DB) TopicExists(ctx context.Context, topic model.EntityID) (bool, error) {
	var exists bool
	read := func(rows driver.RowSource) error { return driver.ScanOne(rows, &exists) }
	if err := d.query(ctx, read, topicExistsSQL, int64(topic)); err != nil {
		return false, fmt.Errorf("topic %s exists: %w", topic, err)
	}
	return exists, nil
}

// EntityKind is the type of the entity row with this id ("TOPIC",
// "ACCOUNT", ...), app.ErrNotFound when it has none.
func (d *DB) EntityKind(ctx context.Context, id model.EntityID) (string, error) {
	var kind string
	read := func(rows driver.RowSource) error { return driver.ScanOne(rows, &kind) }
	if err := d.query(ctx, read, entityKindSQL, int64(id)); err != nil {
		return "", fmt.Errorf("entity %s: %w", id, err)
	}
	if kind == "" {
		return "", app.ErrNotFound
	}
	return kind, nil
}

// Topics lists entities of type TOPIC on the (type, id) index.
func (d *DB) Topics(ctx context.Context, f app.TopicFilter) ([]model.Topic, error) {
	ids, ok := model.RangeOf(f.ID)
	if !ok {
		return nil, nil
	}
	page := topicPageAsc
	if f.Order == model.Desc {
		page = topicPageDesc
	}
	return d.topics(ctx, page, ids.Lo, ids.Hi, driver.NotArray(ids), int64(f.Limit))
}

// TopicsByID loads the topics with entity rows among ids, in one statement.
func (d *DB) TopicsByID(ctx context.Context, ids []model.EntityID) ([]model.Topic, error) {
	switch len(ids) {
	case 0:
		return nil, nil
	case 1:
		// One topic (GraphQL's topic(id), a lone message's topic) is asked
		// with the details route's statement: the server runs its
		// primary-key lookups for less than the array's plan.
		t, err := d.Topic(ctx, ids[0])
		switch {
		case app.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		case !t.HasEntity:
			return nil, nil
		}
		return []model.Topic{*t}, nil
	}
	return d.topics(ctx, topicsByIDSQL, driver.Int64Array(ids))
}

func (d *DB) topics(ctx context.Context, query string, args ...any) ([]model.Topic, error) {
	var out []model.Topic
	read := func(rows driver.RowSource) (err error) { out, err = scanTopicRows(rows, out); return err }
	if err := d.query(ctx, read, query, args...); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	return out, nil
}

// fixedFees decodes custom_fee.fixed_fees; none is an empty list.
func fixedFees(raw []byte) ([]model.FixedFee, error) {
	if len(raw) == 0 {
		return []model.FixedFee{}, nil
	}
	var fees []fixedFee
	if err := json.Unmarshal(raw, &fees); err != nil {
		return nil, fmt.Errorf("custom_fee.fixed_fees: %w", err)
	}
	out := make([]model.FixedFee, len(fees))
	for i, f := range fees {
		out[i] = model.FixedFee(f)
	}
	return out, nil
}

// fixedFee is one element of the custom_fee.fixed_fees jsonb array.
type fixedFee struct {
	Amount              int64           `json:"amount"`
	CollectorAccountID  *model.EntityID `json:"collector_account_id"`
	DenominatingTokenID *model.EntityID `json:"denominating_token_id"`
}
