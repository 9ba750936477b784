package db

import (
	"context"
	"sync"
)

// coalescer lets concurrent point lookups of one kind share statements.
//
// A lookup that finds fewer than limit statements of its kind at the
// database runs alone and at once, exactly as without a coalescer. One that
// finds them all busy queues instead, and the statement that finishes next
// sends every queued key (up to maxBatch) in one statement. An idle service
// therefore answers with no added wait, and a busy one sends far fewer
// statements than it answers lookups: on the by-sequence route the round
// trip to the server (a write and a read system call, the server's parse of
// a Bind/Execute, its executor start-up) was half of the service's CPU
// profile and most of the server's.
//
// A time-window batcher (a dataloader's wait) would add its window to every
// lookup, busy or not; this one batches only what would have waited for a
// connection anyway.
//
// Callers asking for the same key in one batch share the value: it must be
// read only.
type coalescer[K comparable, V any] struct {
	one      func(ctx context.Context, key K) (V, error)
	many     func(ctx context.Context, keys []K) (map[K]V, error) // a key missing from the map is ErrNotFound
	limit    int
	maxBatch int

	mu      sync.Mutex
	running int // statements of this kind at the database
	queue   []*waiter[K, V]
}

// waiter is one queued lookup.
type waiter[K comparable, V any] struct {
	ctx   context.Context
	key   K
	done  chan struct{}
	val   V
	err   error
	batch *batch[K, V] // nil until a statement takes it; guarded by coalescer.mu
	gone  bool         // its caller stopped waiting; guarded by coalescer.mu
}

// batch is one statement for several waiters. Its context outlives any one
// of them (the first to arrive may give up while the others still wait) and
// is cancelled when the last of them gives up.
type batch[K comparable, V any] struct {
	waiters []*waiter[K, V]
	ctx     context.Context
	cancel  context.CancelFunc
	waiting int // guarded by coalescer.mu
}

const defaultMaxBatch = 128

func newCoalescer[K comparable, V any](limit int, one func(context.Context, K) (V, error),
	many func(context.Context, []K) (map[K]V, error)) *coalescer[K, V] {
	return &coalescer[K, V]{one: one, many: many, limit: limit, maxBatch: defaultMaxBatch}
}

// get looks key up, alone or in a batch.
func (c *coalescer[K, V]) get(ctx context.Context, key K) (V, error) {
	if c == nil || c.limit <= 0 {
		return c.one(ctx, key)
	}
	c.mu.Lock()
	if c.running < c.limit {
		c.running++
		c.mu.Unlock()
		v, err := c.one(ctx, key)
		if next := c.next(); next != nil {
			go c.drain(next)
		}
		return v, err
	}
	w := &waiter[K, V]{ctx: ctx, key: key, done: make(chan struct{})}
	c.queue = append(c.queue, w)
	c.mu.Unlock()

	select {
	case <-w.done:
		return w.val, w.err
	case <-ctx.Done():
		c.leave(w)
		var zero V
		return zero, ctx.Err()
	}
}

// leave records that w's caller stopped waiting, and cancels w's statement
// if nobody else waits for it.
func (c *coalescer[K, V]) leave(w *waiter[K, V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.gone = true
	if b := w.batch; b != nil {
		if b.waiting--; b.waiting == 0 {
			b.cancel()
		}
	}
}

// next takes the queued waiters that still wait (up to maxBatch) for the
// statement that has just finished to hand on; nil when there are none, and
// the statement's slot is then given back.
func (c *coalescer[K, V]) next() *batch[K, V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var taken []*waiter[K, V]
	n := 0
	for n < len(c.queue) && len(taken) < c.maxBatch {
		if w := c.queue[n]; !w.gone {
			taken = append(taken, w)
		}
		n++
	}
	clear(c.queue[:n])
	c.queue = c.queue[n:]
	if len(c.queue) == 0 {
		c.queue = nil
	}
	if len(taken) == 0 {
		c.running--
		return nil
	}
	b := &batch[K, V]{waiters: taken, waiting: len(taken)}
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(taken[0].ctx))
	for _, w := range taken {
		w.batch = b
	}
	return b
}

// drain runs batches in the slot of a finished statement until the queue
// is empty.
func (c *coalescer[K, V]) drain(b *batch[K, V]) {
	for b != nil {
		keys := make([]K, 0, len(b.waiters))
		seen := make(map[K]struct{}, len(b.waiters))
		for _, w := range b.waiters {
			if _, dup := seen[w.key]; !dup {
				seen[w.key] = struct{}{}
				keys = append(keys, w.key)
			}
		}
		vals, err := c.many(b.ctx, keys)
		b.cancel()
		for _, w := range b.waiters {
			if err != nil {
				w.err = err
			} else if v, ok := vals[w.key]; ok {
				w.val = v
			} else {
				w.err = ErrNotFound
			}
			close(w.done)
		}
		b = c.next()
	}
}
