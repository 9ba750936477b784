package db

import (
	"context"
	"fmt"
	"math"

	"mirrorql/app"
	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// LivePoll finds the messages of topics whose submit transaction is after
// the watermark, at most limit of them. A watermark of model.Timestamp
// math.MaxInt64 finds none and only reads the ledger's head.
func (d *DB) LivePoll(ctx context.Context, after model.Timestamp, topics []model.EntityID, limit int) (app.Poll, error) {
	r := &driver.LivePollRows{}
	if err := d.reader().LivePoll(ctx, after, topics, limit, r); err != nil {
		return app.Poll{}, fmt.Errorf("live poll of %d topics: %w", len(topics), err)
	}
	p := r.Poll
	p.Full = limit > 0 && after != math.MaxInt64 && r.Walked >= int64(limit)
	return p, nil
}
