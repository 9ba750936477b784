package db

import (
	"context"

	"mirrorql/app"
	"mirrorql/model"
)

// pointLookups puts the two point lookups of a message behind coalescers:
// each runs its own statement while few are in progress and shares a batch
// statement (MessagesBySequence, MessagesByTimestamp) beyond; spread is
// Options.Coalesce. On the v2 layout a lookup reads the partition its
// topic's map names, and a batch pipelines a statement per partition.
func (d *DB) pointLookups(spread int) {
	d.bySequence = newCoalescer(spread, func(ctx context.Context, k app.TopicSequence) (*model.TopicMessage, error) {
		if p := d.v2(); p != nil {
			return d.messageBySequenceV2(ctx, p, k.TopicID, k.SequenceNumber)
		}
		return d.oneMessage(ctx, messageBySequenceSQL, int64(k.TopicID), k.SequenceNumber)
	}, d.MessagesBySequence)
	d.byTimestamp = newCoalescer(spread, func(ctx context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
		if p := d.v2(); p != nil {
			return d.messageByTimestampV2(ctx, p, ts)
		}
		return d.oneMessage(ctx, messageByTimestampSQL, int64(ts))
	}, d.MessagesByTimestamp)
}
