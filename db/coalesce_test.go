package db

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mirrorql/app"
)

// fakeLookups answer key k with 10·k; keys below zero are not found. A
// statement blocks until release is closed (if set), so that a test can
// hold the slots busy.
type fakeLookups struct {
	mu      sync.Mutex
	ones    []int
	batches [][]int
	release chan struct{}
	started chan struct{} // one send per statement, if set
	fail    error
}

func (f *fakeLookups) wait(ctx context.Context) error {
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.fail
}

func (f *fakeLookups) one(ctx context.Context, k int) (int, error) {
	f.mu.Lock()
	f.ones = append(f.ones, k)
	f.mu.Unlock()
	if err := f.wait(ctx); err != nil {
		return 0, err
	}
	if k < 0 {
		return 0, app.ErrNotFound
	}
	return 10 * k, nil
}

func (f *fakeLookups) many(ctx context.Context, ks []int) (map[int]int, error) {
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(ks))
	f.mu.Unlock()
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, k := range ks {
		if k >= 0 {
			out[k] = 10 * k
		}
	}
	return out, nil
}

type result struct {
	key, val int
	err      error
}

// queue starts a get per key once limit statements are busy, and waits
// until all of them are queued.
// patience bounds a wait for what takes microseconds (a goroutine queueing,
// a batch ending): a passing test never waits it out, so it only turns a
// hang into a failure (package live's tests have the same bound).
const patience = time.Minute

func queue(t *testing.T, c *coalescer[int, int], ctx context.Context, keys ...int) chan result {
	t.Helper()
	c.mu.Lock()
	before := len(c.queue)
	c.mu.Unlock()
	out := make(chan result, len(keys))
	for _, k := range keys {
		go func() {
			v, err := c.get(ctx, k)
			out <- result{k, v, err}
		}()
	}
	deadline := time.Now().Add(patience)
	for {
		c.mu.Lock()
		n := len(c.queue)
		c.mu.Unlock()
		if n >= before+len(keys) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d lookups queued", n, len(keys))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCoalescerAloneWhenIdle(t *testing.T) {
	f := &fakeLookups{}
	c := newCoalescer(1, f.one, f.many)
	for k := range 5 {
		v, err := c.get(context.Background(), k)
		if err != nil || v != 10*k {
			t.Fatalf("get(%d) = %d, %v", k, v, err)
		}
	}
	if _, err := c.get(context.Background(), -1); err != app.ErrNotFound {
		t.Errorf("get(-1): %v, want app.ErrNotFound", err)
	}
	if len(f.ones) != 6 || len(f.batches) != 0 {
		t.Errorf("%d single statements and %d batches, want 6 and 0", len(f.ones), len(f.batches))
	}
	if c.running != 0 {
		t.Errorf("running = %d after all returned", c.running)
	}
}

func TestCoalescerBatchesWhatWaits(t *testing.T) {
	f := &fakeLookups{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := newCoalescer(2, f.one, f.many)
	ctx := context.Background()
	first := make(chan result, 2)
	for _, k := range []int{1, 2} {
		go func() {
			v, err := c.get(ctx, k)
			first <- result{k, v, err}
		}()
	}
	<-f.started
	<-f.started // both slots busy
	waiting := queue(t, c, ctx, 3, 4, 4, -5, 6)
	close(f.release)
	got := map[int]int{}
	for range 2 {
		r := <-first
		got[r.key] = r.val
	}
	for range 5 {
		r := <-waiting
		switch {
		case r.key < 0 && r.err != app.ErrNotFound:
			t.Errorf("key %d: %v, want app.ErrNotFound", r.key, r.err)
		case r.key >= 0 && (r.err != nil || r.val != 10*r.key):
			t.Errorf("key %d: %d, %v", r.key, r.val, r.err)
		}
	}
	if !slices.Equal(f.ones, []int{1, 2}) && !slices.Equal(f.ones, []int{2, 1}) {
		t.Errorf("single statements for %v, want 1 and 2", f.ones)
	}
	// Every waiter joins the batch of the first statement to finish, once
	// per distinct key.
	if len(f.batches) != 1 || !slices.Equal(slices.Sorted(slices.Values(f.batches[0])), []int{-5, 3, 4, 6}) {
		t.Errorf("batches %v, want one of -5, 3, 4, 6", f.batches)
	}
	waitIdle(t, c)
}

func TestCoalescerBatchError(t *testing.T) {
	boom := errors.New("boom")
	f := &fakeLookups{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := newCoalescer(1, f.one, f.many)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { _, err := c.get(ctx, 1); done <- err }()
	<-f.started
	waiting := queue(t, c, ctx, 2, 3)
	f.mu.Lock()
	f.fail = boom
	f.mu.Unlock()
	close(f.release)
	<-done
	for range 2 {
		if r := <-waiting; !errors.Is(r.err, boom) {
			t.Errorf("key %d: %v, want the batch's error", r.key, r.err)
		}
	}
}

func TestCoalescerMaxBatch(t *testing.T) {
	f := &fakeLookups{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := newCoalescer(1, f.one, f.many)
	c.maxBatch = 2
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { _, err := c.get(ctx, 0); done <- err }()
	<-f.started
	waiting := queue(t, c, ctx, 1, 2, 3, 4, 5)
	close(f.release)
	<-done
	for range 5 {
		if r := <-waiting; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if len(f.batches) != 3 {
		t.Errorf("batches %v, want 3 of at most 2 keys", f.batches)
	}
	for _, b := range f.batches {
		if len(b) > 2 {
			t.Errorf("batch %v larger than maxBatch", b)
		}
	}
}

// A waiter that gives up returns at once; one that gave up before its batch
// formed is left out of it; a batch whose waiters have all given up is
// cancelled.
func TestCoalescerCancel(t *testing.T) {
	f := &fakeLookups{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := newCoalescer(1, f.one, f.many)
	done := make(chan error, 1)
	go func() { _, err := c.get(context.Background(), 1); done <- err }()
	<-f.started

	// Gives up while queued: never asked for.
	early, cancelEarly := context.WithCancel(context.Background())
	leaving := queue(t, c, early, 2)
	cancelEarly()
	var u *app.Unavailable // a failure in app's terms, though no statement failed
	if r := <-leaving; !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &u) || u.Outage() {
		t.Fatalf("cancelled waiter: %#v", r.err)
	}
	// Give up once their batch is at the database: the batch is cancelled.
	late, cancelLate := context.WithCancel(context.Background())
	batched := queue(t, c, late, 3, 4)
	close(f.release) // the first statement ends; 3 and 4 go out as a batch
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The batch passes f.wait at once (release is closed), so hold the
	// check to what must hold either way: the waiters return, and the
	// queue and slots are empty afterwards.
	cancelLate()
	for range 2 {
		if r := <-batched; r.err != nil && !errors.Is(r.err, context.Canceled) {
			t.Errorf("key %d: %v", r.key, r.err)
		}
	}
	<-f.started // the batch's statement
	waitIdle(t, c)
	for _, b := range f.batches {
		if slices.Contains(b, 2) {
			t.Errorf("batch %v asks for a key whose caller had left", b)
		}
	}
}

// The batch's context is cancelled when the last of its waiters gives up,
// and not before.
func TestCoalescerCancelsAbandonedBatch(t *testing.T) {
	gate := make(chan struct{})
	var batchCtx atomic.Pointer[context.Context]
	batchStarted := make(chan struct{})
	c := newCoalescer(1,
		func(ctx context.Context, k int) (int, error) { <-gate; return k, nil },
		func(ctx context.Context, ks []int) (map[int]int, error) {
			batchCtx.Store(&ctx)
			close(batchStarted)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	done := make(chan struct{})
	go func() { c.get(context.Background(), 1); close(done) }() //nolint:errcheck
	waitRunning(t, c, 1)
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	a := queue(t, c, ctxA, 2)
	b := queue(t, c, ctxB, 3)
	close(gate)
	<-done
	<-batchStarted
	ctx := *batchCtx.Load()
	left := time.Now()
	cancelA()
	<-a
	// A cancellation that should not happen can only be watched for a
	// while: one would follow a's leaving as a's own return did, so ten
	// times what that took, as measured, is the window.
	window := 10 * time.Since(left)
	select {
	case <-ctx.Done():
		t.Fatal("batch cancelled while a waiter still waits")
	case <-time.After(window):
	}
	cancelB()
	<-b
	select {
	case <-ctx.Done():
	case <-time.After(patience):
		t.Fatal("batch not cancelled after its last waiter left")
	}
	waitIdle(t, c)
}

// Many callers at once: each gets its own key's value, whichever way it was
// looked up, and the slots are all given back.
func TestCoalescerConcurrent(t *testing.T) {
	f := &fakeLookups{}
	var batches, most atomic.Int32
	many := func(ctx context.Context, ks []int) (map[int]int, error) {
		n := batches.Add(1)
		defer batches.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return f.many(ctx, ks)
	}
	c := newCoalescer(2, f.one, many)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (g*31 + i*7) % 50
				v, err := c.get(context.Background(), k)
				if err != nil || v != 10*k {
					t.Errorf("get(%d) = %d, %v", k, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waitIdle(t, c)
	f.mu.Lock()
	defer f.mu.Unlock()
	t.Logf("%d lookups: %d alone, %d in %d batches", 64*200, len(f.ones), 64*200-len(f.ones), len(f.batches))
	if most.Load() > 1 {
		t.Errorf("%d batches at the database at once, want at most 1", most.Load())
	}
}

func TestCoalescerOff(t *testing.T) {
	f := &fakeLookups{}
	c := newCoalescer(0, f.one, f.many)
	var wg sync.WaitGroup
	for k := range 32 {
		wg.Add(1)
		go func() { defer wg.Done(); c.get(context.Background(), k) }() //nolint:errcheck
	}
	wg.Wait()
	if len(f.ones) != 32 || len(f.batches) != 0 {
		t.Errorf("%d single statements and %d batches, want 32 and 0", len(f.ones), len(f.batches))
	}
}

func waitRunning(t *testing.T, c *coalescer[int, int], n int) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		c.mu.Lock()
		r := c.running
		c.mu.Unlock()
		if r == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("running = %d, want %d", r, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitIdle(t *testing.T, c *coalescer[int, int]) {
	t.Helper()
	waitRunning(t, c, 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) != 0 || c.inProgress != 0 || c.batching {
		t.Errorf("%d lookups still queued, %d in progress, batching %v", len(c.queue), c.inProgress, c.batching)
	}
}

// Up to spread lookups in progress run alone, side by side; the next queues.
func TestCoalescerSpread(t *testing.T) {
	f := &fakeLookups{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := newCoalescer(3, f.one, f.many)
	ctx := context.Background()
	done := make(chan result, 3)
	for k := range 3 {
		go func() {
			v, err := c.get(ctx, k)
			done <- result{k, v, err}
		}()
	}
	for range 3 {
		<-f.started // three statements at once
	}
	waiting := queue(t, c, ctx, 7)
	close(f.release)
	for range 3 {
		if r := <-done; r.err != nil || r.val != 10*r.key {
			t.Errorf("key %d: %d, %v", r.key, r.val, r.err)
		}
	}
	if r := <-waiting; r.err != nil || r.val != 70 {
		t.Errorf("queued key: %d, %v", r.val, r.err)
	}
	waitIdle(t, c)
	if len(f.ones) != 3 || len(f.batches) != 1 {
		t.Errorf("%d alone, %d batches; want 3 and 1", len(f.ones), len(f.batches))
	}
}
