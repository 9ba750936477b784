package observe

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// flatJSON writes the lines slog's JSON handler writes, for records whose
// attributes are flat: keys and string values of printable ASCII without
// quotes or backslashes, integers, booleans, durations and floats that
// encoding/json prints without an exponent. That is every access-log line
// the middleware writes, and slog's own handler spent a share of the
// service's CPU on the by-sequence route formatting them that showed in its
// profile (bench/results/decisions-2026-11.md): its float path goes
// through encoding/json's reflection, and every record takes a fresh
// handler state. Any other record — and any handler made by WithAttrs or
// WithGroup — is slog's JSON handler's, so the two never disagree
// (FuzzFlatJSON holds them to it). Lines are written with one Write each
// to a writer that takes concurrent writes (a LogBuffer).
type flatJSON struct {
	w    io.Writer
	full slog.Handler
}

func newFlatJSON(w io.Writer, opts *slog.HandlerOptions) flatJSON {
	return flatJSON{w: w, full: slog.NewJSONHandler(w, opts)}
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (h flatJSON) Enabled(ctx context.Context, l slog.Level) bool { return h.full.Enabled(ctx, l) }

func (h flatJSON) WithAttrs(as []slog.Attr) slog.Handler { return h.full.WithAttrs(as) }

func (h flatJSON) WithGroup(name string) slog.Handler { return h.full.WithGroup(name) }

func (h flatJSON) Handle(ctx context.Context, r slog.Record) error {
	bp := lineBuffers.Get().(*[]byte)
	defer lineBuffers.Put(bp)
	b, ok := appendFlatRecord((*bp)[:0], r)
	*bp = b
	if !ok {
		return h.full.Handle(ctx, r)
	}
	_, err := h.w.Write(b)
	return err
}

// appendFlatRecord appends r's line, or reports false when r is not flat.
func appendFlatRecord(b []byte, r slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !r.Time.IsZero() {
		t := r.Time.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return b, false
		}
		b = append(b, `"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	level, msg := r.Level.String(), r.Message
	if !plainText(level) || !plainText(msg) {
		return b, false
	}
	b = append(b, `"level":"`...)
	b = append(b, level...)
	b = append(b, `","msg":"`...)
	b = append(b, msg...)
	b = append(b, '"')
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendFlatAttr(b, a)
		return ok
	})
	return append(b, "}\n"...), ok
}

func appendFlatAttr(b []byte, a slog.Attr) ([]byte, bool) {
	if a.Key == "" || !plainText(a.Key) {
		return b, false
	}
	b = append(b, ',', '"')
	b = append(b, a.Key...)
	b = append(b, '"', ':')
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if !plainText(s) {
			return b, false
		}
		b = append(append(append(b, '"'), s...), '"')
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindFloat64:
		// encoding/json's format, in the range where it has no exponent.
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			return b, false
		}
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	default:
		return b, false
	}
	return b, true
}

// plainText reports whether s is printable ASCII that JSON takes as it is.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// plainByte is plainText's rule as a table: one load a byte, where three
// comparisons were a quarter of the line's cost.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
