package driver

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"mirrorql/app"
	"mirrorql/model"
)

func TestComparison(t *testing.T) {
	tests := []struct {
		op   model.Operator
		want string
	}{
		{model.OpEq, "="},
		{model.OpNe, "!="},
		{model.OpLt, "<"},
		{model.OpLte, "<="},
		{model.OpGt, ">"},
		{model.OpGte, ">="},
		{"", "="},
		{"bogus", "="},
	}
	for _, tt := range tests {
		t.Run(string(tt.op), func(t *testing.T) {
			if got := Comparison(tt.op); got != tt.want {
				t.Errorf("Comparison(%q) = %q, want %q", tt.op, got, tt.want)
			}
		})
	}
}

func TestFilterRanges(t *testing.T) {
	all := model.Range{Lo: math.MinInt64, Hi: math.MaxInt64}
	seq := &model.Range{Lo: 3, Hi: 9, Not: []int64{5}}
	ts := &model.Range{Lo: 100, Hi: math.MaxInt64}
	tests := []struct {
		name        string
		f           app.MessageFilter
		seq, ts     model.Range
		bySeq, byTs bool
	}{
		{"none", app.MessageFilter{}, all, all, false, true},
		{"sequence numbers alone", app.MessageFilter{SequenceNumber: seq}, *seq, all, true, false},
		{"timestamps alone", app.MessageFilter{Timestamp: ts}, all, *ts, false, true},
		{"both", app.MessageFilter{SequenceNumber: seq, Timestamp: ts}, *seq, *ts, false, false},
	}
	for _, tt := range tests {
		gotSeq, gotTs := FilterRanges(&tt.f)
		if gotSeq.Lo != tt.seq.Lo || gotSeq.Hi != tt.seq.Hi || len(gotSeq.Not) != len(tt.seq.Not) ||
			gotTs.Lo != tt.ts.Lo || gotTs.Hi != tt.ts.Hi || len(gotTs.Not) != len(tt.ts.Not) {
			t.Errorf("%s: FilterRanges = %+v, %+v; want %+v, %+v", tt.name, gotSeq, gotTs, tt.seq, tt.ts)
		}
		if FilterBySequence(&tt.f) != tt.bySeq || FilterByTimestamp(&tt.f) != tt.byTs {
			t.Errorf("%s: by sequence %v, by timestamp %v; want %v, %v", tt.name,
				FilterBySequence(&tt.f), FilterByTimestamp(&tt.f), tt.bySeq, tt.byTs)
		}
	}
}

func TestInt64Array(t *testing.T) {
	tests := []struct {
		in   []int64
		want string
	}{
		{nil, "{}"},
		{[]int64{}, "{}"},
		{[]int64{7}, "{7}"},
		{[]int64{1, -2}, "{1,-2}"},
		{[]int64{math.MinInt64, 0, math.MaxInt64}, "{-9223372036854775808,0,9223372036854775807}"},
	}
	for _, tt := range tests {
		if got := Int64Array(tt.in); got != tt.want {
			t.Errorf("Int64Array(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := NotArray(model.Range{Not: []int64{3, 4}}); got != "{3,4}" {
		t.Errorf("NotArray = %q", got)
	}
	if got := Int64Array([]model.EntityID{5, 6}); got != "{5,6}" {
		t.Errorf("Int64Array of entity ids = %q", got)
	}
}

// FuzzInt64Array: the literal lists the values, in order, as PostgreSQL's
// bigint[] input reads them.
func FuzzInt64Array(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var vs []int64
		for i := 0; i+8 <= len(b); i += 8 {
			var v uint64
			for _, c := range b[i : i+8] {
				v = v<<8 | uint64(c)
			}
			vs = append(vs, int64(v))
		}
		got := Int64Array(vs)
		inner, ok := strings.CutPrefix(got, "{")
		inner, ok2 := strings.CutSuffix(inner, "}")
		if !ok || !ok2 {
			t.Fatalf("Int64Array(%v) = %q: not braced", vs, got)
		}
		if len(vs) == 0 {
			if inner != "" {
				t.Fatalf("Int64Array(nil) = %q", got)
			}
			return
		}
		parts := strings.Split(inner, ",")
		if len(parts) != len(vs) {
			t.Fatalf("Int64Array(%v) = %q: %d elements", vs, got, len(parts))
		}
		for i, p := range parts {
			if v, err := strconv.ParseInt(p, 10, 64); err != nil || v != vs[i] {
				t.Fatalf("Int64Array(%v) = %q: element %d is %q", vs, got, i, p)
			}
		}
	})
}
