package graph

import (
	"context"

	"mirrorql/graph/view"
	"mirrorql/model"
)

// activity is Topic.activity: its arguments checked, then one statement.
func (r *Resolver) activity(ctx context.Context, t *view.Topic, fromArg, toArg view.TimestampArg, buckets int) ([]*view.ActivityBucket, error) {
	var errs argErrors
	from, err := model.ParseTimestamp(string(fromArg))
	if err != nil {
		errs.add(invalidParameter("from"))
	}
	to, err := model.ParseTimestamp(string(toArg))
	if err != nil {
		errs.add(invalidParameter("to"))
	}
	if buckets < 1 || buckets > model.MaxBuckets {
		errs.add(invalidParameter("buckets"))
	}
	if len(errs) == 0 && to <= from {
		errs.add("`to` must be after `from`")
	}
	if err := errs.err(ctx); err != nil {
		return nil, err
	}
	bounds := model.Boundaries(from, to, buckets)
	counts, err := r.store.Activity(ctx, t.Row.ID, bounds)
	if err != nil {
		return nil, err
	}
	out := make([]*view.ActivityBucket, len(counts))
	all := make([]view.ActivityBucket, len(counts))
	for i, n := range counts {
		all[i] = view.ActivityBucket{Start: bounds[i], End: bounds[i+1], Count: n}
		out[i] = &all[i]
	}
	return out, nil
}
