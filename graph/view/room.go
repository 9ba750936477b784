package view

import (
	"bytes"
	"context"
	"sync"
)

// The room of a response, lent.
//
// gqlgen's executor writes a query's data into a bytes.Buffer it makes for
// the request, and a list grows it to the page's size: some 64 KB for 100
// messages, nearly half the bytes a GraphQL page allocated where REST's page,
// written into a pooled buffer, allocates none. Under the service's soft
// memory limit every such byte brings the next collection nearer, and the
// GraphQL page ran at a lower share of REST's in a service that had run a
// while than in a fresh one (bench/results/ab-2026-11-29-room.md). So the
// transport that writes the response out may lend it its room: a list that
// makes its room (writeList) takes it from a pool, and the transport gives
// it back once the response has been written. Without a lender (the GET and
// streaming transports) the buffer grows as before.

// A Lender lends the room of one response. Its methods may be called from
// the executor's goroutines.
type Lender struct {
	mu   sync.Mutex
	lent []*[]byte
}

type lenderKey struct{}

// Lend is ctx with a lender for the response of its request. Return gives
// back what was lent: call it once nothing reads the response's data any
// more.
func Lend(ctx context.Context) (context.Context, *Lender) {
	l := &Lender{}
	return context.WithValue(ctx, lenderKey{}, l), l
}

// Return puts what l lent back into the pool; the response's data must not
// be read after it.
func (l *Lender) Return() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.lent {
		if cap(*b) <= maxRoom {
			*b = (*b)[:0]
			rooms.Put(b)
		}
	}
	l.lent = nil
}

// rooms are lent buffers given back; one larger than maxRoom is let go
// rather than kept.
var rooms sync.Pool

const maxRoom = 1 << 20

// take is a lent buffer, empty, of at least n bytes of room.
func (l *Lender) take(n int) []byte {
	b, _ := rooms.Get().(*[]byte)
	if b == nil || cap(*b) < n {
		// A pooled buffer that is too small goes back: the next, smaller
		// response may take it.
		if b != nil {
			rooms.Put(b)
		}
		s := make([]byte, 0, n)
		b = &s
	}
	l.mu.Lock()
	l.lent = append(l.lent, b)
	l.mu.Unlock()
	return (*b)[:0]
}

// makeRoom makes n bytes of room at the end of buf, from ctx's lender when
// there is one and buf has not the room already: the buffer's bytes are
// copied into the lent one, which buf then holds.
func makeRoom(ctx context.Context, buf *bytes.Buffer, n int) {
	if buf.Available() >= n {
		return
	}
	l, _ := ctx.Value(lenderKey{}).(*Lender)
	if l == nil {
		buf.Grow(n)
		return
	}
	*buf = *bytes.NewBuffer(append(l.take(buf.Len()+n), buf.Bytes()...))
}
