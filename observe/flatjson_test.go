package observe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"
)

var flatJSONTime = time.Date(2026, 11, 21, 11, 30, 0, 123456789, time.UTC)

// linesOf formats r with flatJSON and with slog's JSON handler.
func linesOf(t testing.TB, r slog.Record) (flat, full string, fast bool) {
	t.Helper()
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	var fb, sb bytes.Buffer
	if err := newFlatJSON(&fb, opts).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := slog.NewJSONHandler(&sb, opts).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	_, fast = appendFlatRecord(nil, r)
	return fb.String(), sb.String(), fast
}

func TestFlatJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
		fast  bool // written by flatJSON itself, not handed to slog's handler
	}{
		{"access line", flatJSONTime, slog.LevelInfo, accessMessage, []slog.Attr{
			slog.String("method", "GET"), slog.String("route", "/api/v1/topics/:topicId/messages/:sequenceNumber"),
			slog.String("path", "/api/v1/topics/0.0.2001/messages/7"), slog.Int("status", 200),
			slog.Float64("duration_ms", 1.234), slog.Int64("bytes", 512), slog.String("face", "rest"),
			slog.String("request_id", "8f41c0de"),
		}, true},
		{"no time", time.Time{}, slog.LevelDebug, "m", nil, true},
		{"other zone", flatJSONTime.In(time.FixedZone("x", 3600)), slog.LevelWarn + 2, "m", nil, true},
		{"zero and whole floats", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{
			slog.Float64("a", 0), slog.Float64("b", -0.0), slog.Float64("c", 12), slog.Float64("d", 1e20),
			slog.Float64("e", 0.000001), slog.Float64("f", -123.456),
		}, true},
		{"bools, unsigned, durations", flatJSONTime, slog.LevelError, "m", []slog.Attr{
			slog.Bool("t", true), slog.Uint64("u", math.MaxUint64), slog.Duration("d", 1500*time.Millisecond),
			slog.Int64("min", math.MinInt64),
		}, true},
		{"float with exponent", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Float64("a", 1e-7)}, false},
		{"large float", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Float64("a", 1e21)}, false},
		{"NaN", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Float64("a", math.NaN())}, false},
		{"escaped value", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.String("path", "/a\"b\\c\n")}, false},
		{"non-ASCII value", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.String("path", "/日本")}, false},
		{"invalid UTF-8", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.String("path", "\xff")}, false},
		{"HTML characters", flatJSONTime, slog.LevelInfo, "<&>", []slog.Attr{slog.String("q", "a<b>&c")}, true},
		{"escaped message", flatJSONTime, slog.LevelInfo, "tab\there", nil, false},
		{"escaped key", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Int("a\"", 1)}, false},
		{"empty attribute", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{{}}, false},
		{"group", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Group("g", slog.Int("a", 1))}, false},
		{"error", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Any("err", errors.New("boom"))}, false},
		{"time attribute", flatJSONTime, slog.LevelInfo, "m", []slog.Attr{slog.Time("at", flatJSONTime)}, false},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := slog.NewRecord(tc.time, tc.level, tc.msg, 0)
			r.AddAttrs(tc.attrs...)
			flat, full, fast := linesOf(t, r)
			if flat != full {
				t.Errorf("flatJSON wrote\n%s\nslog's JSON handler\n%s", flat, full)
			}
			if fast != tc.fast {
				t.Errorf("written by flatJSON itself: %v, want %v", fast, tc.fast)
			}
		})
	}
}

func TestFlatJSONDerivedHandlers(t *testing.T) {
	var fb, sb bytes.Buffer
	opts := &slog.HandlerOptions{}
	flat := slog.New(newFlatJSON(&fb, opts)).With("a", 1).WithGroup("g")
	full := slog.New(slog.NewJSONHandler(&sb, opts)).With("a", 1).WithGroup("g")
	r := slog.NewRecord(flatJSONTime, slog.LevelInfo, "m", 0)
	r.AddAttrs(slog.Int("b", 2))
	_ = flat.Handler().Handle(context.Background(), r)
	_ = full.Handler().Handle(context.Background(), r)
	if fb.String() != sb.String() {
		t.Errorf("derived flatJSON wrote\n%s\nslog's JSON handler\n%s", fb.String(), sb.String())
	}
	if slog.New(newFlatJSON(&fb, opts)).Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug enabled at the default level")
	}
}

// FuzzFlatJSON holds flatJSON to slog's JSON handler: the same bytes for
// any record, whether flatJSON writes it or hands it on.
func FuzzFlatJSON(f *testing.F) {
	f.Add(int64(1763724600123456789), 0, "request", "path", "/api/v1/topics/0.0.2001/messages", int64(200), 1.234, true)
	f.Add(int64(0), -4, "m\n", "k\"", "\xff\u2028", int64(-1), 1e-9, false)
	f.Add(int64(-62135596800000000), 8, "<&>", "", "", int64(0), math.Inf(1), false)
	f.Fuzz(func(t *testing.T, nanos int64, level int, msg, key, str string, n int64, fl float64, b bool) {
		r := slog.NewRecord(time.Unix(0, nanos).UTC(), slog.Level(level), msg, 0)
		r.AddAttrs(slog.String(key, str), slog.Int64("n", n), slog.Float64("f", fl), slog.Bool("b", b),
			slog.String("s", str))
		if flat, full, _ := linesOf(t, r); flat != full {
			t.Errorf("flatJSON wrote\n%s\nslog's JSON handler\n%s", flat, full)
		}
	})
}

// BenchmarkAccessLine compares the access log's line written by flatJSON
// with slog's JSON handler writing the same record.
func BenchmarkAccessLine(b *testing.B) {
	r := slog.NewRecord(flatJSONTime, slog.LevelInfo, accessMessage, 0)
	r.AddAttrs(slog.String("method", "GET"), slog.String("route", "/api/v1/topics/:topicId/messages/:sequenceNumber"),
		slog.String("path", "/api/v1/topics/0.0.2001/messages/123456"), slog.Int("status", 200),
		slog.Float64("duration_ms", 1.234), slog.Int64("bytes", 412), slog.String("face", "rest"),
		slog.String("request_id", "3f9a1c0e5b7d2a4f"))
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog", slog.NewJSONHandler(io.Discard, nil)},
		{"flat", newFlatJSON(io.Discard, nil)},
	} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = h.h.Handle(context.Background(), r)
			}
		})
	}
}
