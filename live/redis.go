package live

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"mirrorql/model"
)

// Channel is the importer's Redis channel of a topic: topic.<encoded id>.
func Channel(topic model.EntityID) string { return "topic." + strconv.FormatInt(int64(topic), 10) }

// WakeOnRedis follows the importer's publications on the channels of the
// topics the hub follows and wakes the hub on each: now, and again after
// each of rechecks, since the importer publishes before its transaction
// commits (a recheck already pending serves the publications that come
// meanwhile). The payload is never read: subscribers get only committed
// rows, which the poll reads. It returns when ctx ends; while Redis is down
// the hub polls on its interval alone (go-redis reconnects and subscribes
// again).
func WakeOnRedis(ctx context.Context, h *Hub, client *redis.Client, rechecks []time.Duration, log *slog.Logger) {
	w := &redisWaker{want: map[model.EntityID]bool{}, have: map[model.EntityID]bool{}, dirty: make(chan struct{}, 1)}
	h.Watch(w.watch)
	ps := client.Subscribe(ctx)
	defer ps.Close()

	var mu sync.Mutex
	pending := make([]bool, len(rechecks))
	wake := func() {
		h.Wake()
		mu.Lock()
		defer mu.Unlock()
		for i, after := range rechecks {
			if !pending[i] {
				pending[i] = true
				time.AfterFunc(after, func() {
					mu.Lock()
					pending[i] = false
					mu.Unlock()
					h.Wake()
				})
			}
		}
	}
	go func() {
		for range ps.Channel() {
			wake()
		}
	}()

	retry := time.NewTicker(5 * time.Second)
	defer retry.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.dirty:
		case <-retry.C:
		}
		if err := w.apply(ctx, ps); err != nil {
			if !failing {
				log.Warn("live: cannot subscribe to the importer's Redis channels; polling alone until it answers", "err", err)
			}
			failing = true
		} else if failing {
			log.Info("live: subscribed to the importer's Redis channels again")
			failing = false
		}
	}
}

type redisWaker struct {
	mu         sync.Mutex
	want, have map[model.EntityID]bool
	dirty      chan struct{}
}

func (w *redisWaker) watch(added, removed []model.EntityID) {
	w.mu.Lock()
	for _, t := range added {
		w.want[t] = true
	}
	for _, t := range removed {
		delete(w.want, t)
	}
	w.mu.Unlock()
	select {
	case w.dirty <- struct{}{}:
	default:
	}
}

// apply subscribes to the channels wanted and leaves the others.
func (w *redisWaker) apply(ctx context.Context, ps *redis.PubSub) error {
	w.mu.Lock()
	var join, leave []string
	for t := range w.want {
		if !w.have[t] {
			join = append(join, Channel(t))
		}
	}
	for t := range w.have {
		if !w.want[t] {
			leave = append(leave, Channel(t))
		}
	}
	want := make(map[model.EntityID]bool, len(w.want))
	for t := range w.want {
		want[t] = true
	}
	w.mu.Unlock()
	if len(join) > 0 {
		if err := ps.Subscribe(ctx, join...); err != nil {
			return err
		}
	}
	if len(leave) > 0 {
		if err := ps.Unsubscribe(ctx, leave...); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.have = want
	w.mu.Unlock()
	return nil
}
