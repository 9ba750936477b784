package view

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestWriteListRoom: a list written with a lender writes the same bytes as
// without one, its room is the lender's, and what was lent is taken again
// by the next response once given back.
func TestWriteListRoom(t *testing.T) {
	write := func(ctx context.Context, buf *bytes.Buffer, n int) {
		buf.WriteString(`{"nodes":`)
		writeList(ctx, buf, n, func(i int) { buf.WriteString(`"` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `"`) },
			func(i int) int { return i%7 + len(strconv.Itoa(i)) })
		buf.WriteString(`}`)
	}
	for _, n := range []int{0, 1, 2, 100, 1000} {
		var plain bytes.Buffer
		write(context.Background(), &plain, n)

		ctx, l := Lend(context.Background())
		var lent bytes.Buffer
		write(ctx, &lent, n)
		if lent.String() != plain.String() {
			t.Fatalf("n=%d: lent %q, plain %q", n, lent.String(), plain.String())
		}
		if n < 100 {
			// Room the buffer has already is used as it is.
			l.Return()
			continue
		}
		if len(l.lent) != 1 {
			t.Fatalf("n=%d: %d buffers lent, want 1", n, len(l.lent))
		}
		if b := lent.Bytes(); &(*l.lent[0])[:1][0] != &b[:1][0] {
			t.Errorf("n=%d: the response is not written in the lent buffer", n)
		}
		l.Return()
		if len(l.lent) != 0 {
			t.Errorf("n=%d: Return kept %d buffers", n, len(l.lent))
		}
	}
}

// TestMakeRoom: room already there is used as it is; a lender's buffer
// holds what was written before; without a lender the buffer grows itself.
func TestMakeRoom(t *testing.T) {
	ctx, l := Lend(context.Background())
	buf := bytes.NewBuffer(make([]byte, 0, 64))
	buf.WriteString("head")
	makeRoom(ctx, buf, 10)
	if len(l.lent) != 0 || buf.String() != "head" {
		t.Fatalf("room there: lent %d, %q", len(l.lent), buf.String())
	}
	makeRoom(ctx, buf, 4096)
	if len(l.lent) != 1 || buf.String() != "head" || buf.Available() < 4096 {
		t.Fatalf("room lent: lent %d, %q, %d available", len(l.lent), buf.String(), buf.Available())
	}
	var own bytes.Buffer
	own.WriteString("head")
	makeRoom(context.Background(), &own, 4096)
	if own.String() != "head" || own.Available() < 4096 {
		t.Fatalf("no lender: %q, %d available", own.String(), own.Available())
	}
	l.Return()
}
