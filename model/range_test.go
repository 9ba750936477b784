package model_test

import (
	"math"
	"slices"
	"testing"

	"mirrorql/model"
)

// admits is the meaning RangeOf must keep: every condition holds.
func admits(conds []model.Condition[int64], v int64) bool { return model.AllHold(v, conds) }

// inRange is what the reduced conditions say of v: the range holds it (an
// empty range, !ok, holds nothing), which FuzzRangeOf holds to admits.
func inRange(r model.Range, ok bool, v int64) bool { return ok && r.Holds(v) }

type cond = model.Condition[int64]

func TestRangeOf(t *testing.T) {
	const minI, maxI = math.MinInt64, math.MaxInt64
	tests := []struct {
		name   string
		conds  []cond
		lo, hi int64
		not    []int64
		ok     bool
	}{
		{"none", nil, minI, maxI, nil, true},
		{"gt", []cond{{model.OpGt, 5}}, 6, maxI, nil, true},
		{"gte lte", []cond{{model.OpGte, 5}, {model.OpLte, 9}}, 5, 9, nil, true},
		{"eq", []cond{{model.OpEq, 7}}, 7, 7, nil, true},
		{"two eqs", []cond{{model.OpEq, 7}, {model.OpEq, 8}}, 8, 7, nil, false},
		{"eq and ne of it", []cond{{model.OpEq, 7}, {model.OpNe, 7}}, 7, 7, []int64{7}, false},
		{"ne list", []cond{{model.OpNe, 1}, {model.OpNe, -2}}, minI, maxI, []int64{1, -2}, true},
		{"gt max", []cond{{model.OpGt, maxI}}, minI, maxI, nil, false},
		{"lt min", []cond{{model.OpLt, minI}}, minI, maxI, nil, false},
		{"lte min", []cond{{model.OpLte, minI}}, minI, minI, nil, true},
		{"gte max", []cond{{model.OpGte, maxI}}, maxI, maxI, nil, true},
		{"crossed", []cond{{model.OpGt, 5}, {model.OpLt, 3}}, 6, 2, nil, false},
		{"tightest wins", []cond{{model.OpGt, 1}, {model.OpGte, 4}, {model.OpLt, 10}, {model.OpLte, 8}}, 4, 8, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := model.RangeOf(tt.conds)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, r)
			}
			if !ok {
				return
			}
			if r.Lo != tt.lo || r.Hi != tt.hi || !slices.Equal(r.Not, tt.not) {
				t.Errorf("RangeOf = [%d, %d] not %v, want [%d, %d] not %v", r.Lo, r.Hi, r.Not, tt.lo, tt.hi, tt.not)
			}
		})
	}
}

// FuzzRangeOf: for up to four conditions drawn from the input, the range
// admits exactly the values the conditions do, checked at every value the
// conditions name, their neighbours and the extremes.
func FuzzRangeOf(f *testing.F) {
	f.Add([]byte{0, 5, 2, 9})
	f.Add([]byte{4, 255, 3, 0, 1, 7, 1, 7})
	f.Fuzz(func(t *testing.T, in []byte) {
		ops := []model.Operator{model.OpEq, model.OpNe, model.OpLt, model.OpLte, model.OpGt, model.OpGte}
		values := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, 2, 3, math.MaxInt64 - 1, math.MaxInt64}
		var conds []cond
		for i := 0; i+1 < len(in) && len(conds) < 4; i += 2 {
			v := int64(int8(in[i+1]))
			if in[i+1] >= 250 {
				v = values[int(in[i+1]-250)%len(values)]
			}
			conds = append(conds, cond{Op: ops[int(in[i])%len(ops)], Value: v})
		}
		r, ok := model.RangeOf(conds)
		probes := slices.Clone(values)
		for _, c := range conds {
			for _, d := range []int64{-1, 0, 1} {
				if v := c.Value + d; (d < 0) == (v < c.Value) && (d > 0) == (v > c.Value) {
					probes = append(probes, v)
				}
			}
		}
		for _, v := range probes {
			if got, want := inRange(r, ok, v), admits(conds, v); got != want {
				t.Fatalf("%v: value %d: range [%d, %d] not %v ok=%v says %v, conditions %v", conds, v, r.Lo, r.Hi, r.Not, ok, got, want)
			}
		}
	})
}
