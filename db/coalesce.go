package db

import (
	"context"
	"sync"

	"mirrorql/app"
)

// coalescer lets concurrent point lookups of one kind share statements.
//
// While at most spread lookups of its kind are in progress, a lookup runs
// alone and at once, exactly as without a coalescer. Beyond that it queues,
// and one statement at a time fetches every queued key (up to maxBatch):
// the first statement to finish while lookups wait sends them, and goes on
// until none wait. A lightly loaded service therefore answers as if there
// were no coalescer, and a busy one sends a fraction of the statements. On
// the by-sequence route the round trip to the server (a write and a read
// system call, the server's Bind/Execute and executor start-up) is most of
// the work, on both sides; batching them when requests pile up is what lets
// the service keep up with the server (the figures: bench/results/decisions-2026-11.md).
//
// Why not coalesce always: with few lookups in progress there is no other
// work to do while one statement runs, and waiting for it idles the CPU:
// with every lookup after the first queued behind one statement, a lightly
// loaded service answered fewer requests a second than without coalescing. And
// why not a dataloader's time window: it adds its window to every lookup,
// busy or not; this batches only lookups that would otherwise have waited
// for the server anyway.
//
// Callers asking for the same key in one batch share the value: it must be
// read only.
type coalescer[K comparable, V any] struct {
	one      func(ctx context.Context, key K) (V, error)
	many     func(ctx context.Context, keys []K) (map[K]V, error) // a key missing from the map is app.ErrNotFound
	spread   int
	maxBatch int

	mu         sync.Mutex
	inProgress int  // lookups that have not returned
	running    int  // statements at the database
	batching   bool // one of them is a batch, and its goroutine drains the queue
	queue      []*waiter[K, V]
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

func newCoalescer[K comparable, V any](spread int, one func(context.Context, K) (V, error),
	many func(context.Context, []K) (map[K]V, error)) *coalescer[K, V] {
	return &coalescer[K, V]{one: one, many: many, spread: spread, maxBatch: defaultMaxBatch}
}

// get looks key up, alone or in a batch.
func (c *coalescer[K, V]) get(ctx context.Context, key K) (V, error) {
	if c.spread <= 0 {
		return c.one(ctx, key)
	}
	c.mu.Lock()
	c.inProgress++
	if c.inProgress <= c.spread || c.running == 0 {
		c.running++
		c.mu.Unlock()
		v, err := c.one(ctx, key)
		c.mu.Lock()
		c.inProgress--
		b := c.handOn()
		c.mu.Unlock()
		if b != nil {
			go c.drain(b)
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
		return zero, failed(ctx.Err()) // no statement of its own to fail: app's here
	}
}

// leave records that w's caller stopped waiting, and cancels w's statement
// if nobody else waits for it.
func (c *coalescer[K, V]) leave(w *waiter[K, V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.gone {
		return // answered meanwhile
	}
	w.gone = true
	c.inProgress--
	if b := w.batch; b != nil {
		if b.waiting--; b.waiting == 0 {
			b.cancel()
		}
	}
}

// handOn is called with mu held by a statement that has finished: it takes
// the queued waiters that still wait (up to maxBatch) when no batch is at
// the database, for this statement's slot to send. Otherwise, or when none
// wait, the slot is given back and handOn returns nil.
func (c *coalescer[K, V]) handOn() *batch[K, V] {
	if c.batching || len(c.queue) == 0 {
		c.running--
		return nil
	}
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
	c.batching = true
	b := &batch[K, V]{waiters: taken, waiting: len(taken)}
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(taken[0].ctx))
	for _, w := range taken {
		w.batch = b
	}
	return b
}

// drain sends batches, one statement at a time, until no lookup waits.
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
		c.mu.Lock()
		for _, w := range b.waiters {
			if w.gone {
				continue // counted out by leave
			}
			if err != nil {
				w.err = err
			} else if v, ok := vals[w.key]; ok {
				w.val = v
			} else {
				w.err = app.ErrNotFound
			}
			w.gone = true // answered: a late leave must not count it again
			c.inProgress--
			close(w.done)
		}
		c.batching = false
		b = c.handOn()
		c.mu.Unlock()
	}
}
