package db

import (
	"context"

	"mirrorql/app"
	"mirrorql/model"
)

// pointLookups puts the two point lookups of a message behind coalescers:
// each runs its own statement while few are in progress and shares a batch
// statement (MessagesBySequence, MessagesByTimestamp) beyond; spread is
// Options.Coalesce. Each lookup and batch is the current reader's.
func (d *DB) pointLookups(spread int) {
	d.bySequence = newCoalescer(spread, func(ctx context.Context, k app.TopicSequence) (*model.TopicMessage, error) {
		return d.reader().MessageBySequence(ctx, k.TopicID, k.SequenceNumber)
	}, d.MessagesBySequence)
	d.byTimestamp = newCoalescer(spread, func(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
		return d.reader().MessageByTimestamp(ctx, ts)
	}, d.MessagesByTimestamp)
}
