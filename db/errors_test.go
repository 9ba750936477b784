package db_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"mirrorql/app"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/tests/testdb"
)

// reads asks every question of app.Store once, of things an empty database
// does not hold, and keeps only the error.
var reads = map[string]func(context.Context, *db.DB) error{
	"MessageBySequence": func(ctx context.Context, d *db.DB) error {
		_, err := d.MessageBySequence(ctx, 7, 1)
		return err
	},
	"MessageByTimestamp": func(ctx context.Context, d *db.DB) error {
		_, err := d.MessageByTimestamp(ctx, 1000)
		return err
	},
	"Topic": func(ctx context.Context, d *db.DB) error {
		_, err := d.Topic(ctx, 7)
		return err
	},
	"EntityKind": func(ctx context.Context, d *db.DB) error {
		_, err := d.EntityKind(ctx, 7)
		return err
	},
	"Schedule": func(ctx context.Context, d *db.DB) error {
		_, err := d.Schedule(ctx, 7)
		return err
	},
	"MessagesOfTopic": func(ctx context.Context, d *db.DB) error {
		_, err := d.MessagesOfTopic(ctx, app.MessageFilter{TopicID: 7, Limit: 10})
		return err
	},
	"MessagesOfTopics": func(ctx context.Context, d *db.DB) error {
		_, err := d.MessagesOfTopics(ctx, []model.EntityID{7, 8}, app.MessageFilter{Limit: 10})
		return err
	},
	"MessagesBySequence": func(ctx context.Context, d *db.DB) error {
		_, err := d.MessagesBySequence(ctx, []app.TopicSequence{{TopicID: 7, SequenceNumber: 1}})
		return err
	},
	"LatestMessages": func(ctx context.Context, d *db.DB) error {
		_, err := d.LatestMessages(ctx, []model.EntityID{7})
		return err
	},
	"ChunksOf": func(ctx context.Context, d *db.DB) error {
		one, two := int32(1), int32(2)
		_, err := d.ChunksOf(ctx, []*model.TopicMessage{{TopicID: 7, SequenceNumber: 1, ChunkNum: &one, ChunkTotal: &two}})
		return err
	},
	"Activity": func(ctx context.Context, d *db.DB) error {
		_, err := d.Activity(ctx, 7, []model.Timestamp{1000, 2000})
		return err
	},
	"TopicExists": func(ctx context.Context, d *db.DB) error {
		_, err := d.TopicExists(ctx, 7)
		return err
	},
	"TopicsByID": func(ctx context.Context, d *db.DB) error {
		_, err := d.TopicsByID(ctx, []model.EntityID{7})
		return err
	},
	"Topics": func(ctx context.Context, d *db.DB) error {
		_, err := d.Topics(ctx, app.TopicFilter{Limit: 10})
		return err
	},
	"Schedules": func(ctx context.Context, d *db.DB) error {
		_, err := d.Schedules(ctx, app.ScheduleFilter{Limit: 10})
		return err
	},
	"SchedulesVersion": func(ctx context.Context, d *db.DB) error {
		_, err := d.SchedulesVersion(ctx)
		return err
	},
	"LivePoll": func(ctx context.Context, d *db.DB) error {
		_, err := d.LivePoll(ctx, 0, []model.EntityID{7}, 10)
		return err
	},
	"LivePoll of the head": func(ctx context.Context, d *db.DB) error {
		_, err := d.LivePoll(ctx, math.MaxInt64, nil, 0)
		return err
	},
}

// lookups are the reads that name one thing: not found when it is not there.
var lookups = []string{"MessageBySequence", "MessageByTimestamp", "Topic", "EntityKind", "Schedule"}

// TestErrorsAreApps: the query layer answers in app's errors, whichever
// read and layout: a lookup that finds nothing is app.ErrNotFound, the other
// reads find nothing without an error, and a failure is an app.Unavailable,
// an outage only when the database could not be reached.
func TestErrorsAreApps(t *testing.T) {
	t.Parallel()
	_, b := testdb.New(t)
	d := db.Wrap(b)
	ctx := context.Background()
	notFound := map[string]bool{}
	for _, name := range lookups {
		notFound[name] = true
	}
	for name, read := range reads {
		err := read(ctx, d)
		switch {
		case notFound[name] && (!errors.Is(err, app.ErrNotFound) || !app.IsNotFound(err)):
			t.Errorf("%s of nothing: %v, want app.ErrNotFound", name, err)
		case !notFound[name] && err != nil:
			t.Errorf("%s of nothing: %v", name, err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for name, read := range reads {
		checkUnavailable(t, name+" cancelled", read(cancelled, d), false)
		if err := read(cancelled, d); !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled: %v, want its cause kept", name, err)
		}
	}
}

// TestErrorsOfAnUnreachableDatabase: every read of a database that does not
// answer is an app.Unavailable marked as an outage (Health logs it, the faces
// do not).
func TestErrorsOfAnUnreachableDatabase(t *testing.T) {
	t.Parallel()
	d := openPool(t, db.Options{URL: "postgres://nobody@127.0.0.1:1/none?sslmode=disable", ConnectTimeout: 200 * time.Millisecond})
	for name, read := range reads {
		checkUnavailable(t, name, read(context.Background(), d), true)
	}
}

// checkUnavailable: err is an app.Unavailable, an outage when down says so.
func checkUnavailable(t *testing.T, name string, err error, down bool) {
	t.Helper()
	var u *app.Unavailable
	switch {
	case !errors.As(err, &u):
		t.Errorf("%s: %#v, want an app.Unavailable", name, err)
	case u.Outage() != down:
		t.Errorf("%s: %v: outage %v, want %v", name, err, u.Outage(), down)
	case app.IsNotFound(err):
		t.Errorf("%s: %v: also not found", name, err)
	}
}
