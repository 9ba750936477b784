package model_test

import (
	"strings"
	"testing"

	"mirrorql/model"
)

func TestSplitOperator(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		op    model.Operator
		value string
		ok    bool
	}{
		{"no colon is eq", "5", model.OpEq, "5", true},
		{"empty is eq", "", model.OpEq, "", true},
		{"eq", "eq:5", model.OpEq, "5", true},
		{"ne", "ne:5", model.OpNe, "5", true},
		{"lt", "lt:5", model.OpLt, "5", true},
		{"lte", "lte:5", model.OpLte, "5", true},
		{"gt", "gt:5", model.OpGt, "5", true},
		{"gte", "gte:5", model.OpGte, "5", true},
		{"timestamp value", "gt:1234567890.000000001", model.OpGt, "1234567890.000000001", true},
		{"empty value", "gt:", model.OpGt, "", true},
		{"two colons: operator is the middle piece", "gt:1:2", "", "2", false},
		{"the last two pieces count", "ne:gt:5", model.OpGt, "5", true},
		{"trailing colon", "gt:5:", "", "", false},
		{"empty operator", ":5", "", "5", false},
		{"only colons", "::", "", "", false},
		{"upper case", "GT:5", "", "5", false},
		{"unknown operator", "gtx:5", "", "5", false},
		{"partial operator", "g:5", "", "5", false},
		{"space", " gt:5", "", "5", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, value, ok := model.SplitOperator(tt.in)
			if op != tt.op || value != tt.value || ok != tt.ok {
				t.Errorf("SplitOperator(%q) = %q, %q, %v; want %q, %q, %v", tt.in, op, value, ok, tt.op, tt.value, tt.ok)
			}
		})
	}
}

func FuzzSplitOperator(f *testing.F) {
	for _, s := range []string{"5", "gt:5", "gte:5", "gt:1:2", "ne:gt:5", ":", "::", "gt:", ":5", "GT:5", ""} {
		f.Add(s)
	}
	valid := map[model.Operator]bool{model.OpEq: true, model.OpNe: true, model.OpLt: true, model.OpLte: true, model.OpGt: true, model.OpGte: true}
	f.Fuzz(func(t *testing.T, s string) {
		op, value, ok := model.SplitOperator(s)
		// the mirror node: split on ':', pop the value, pop the operator (default eq)
		pieces := strings.Split(s, ":")
		if value != pieces[len(pieces)-1] {
			t.Fatalf("SplitOperator(%q) value %q, want %q", s, value, pieces[len(pieces)-1])
		}
		wantOp := model.OpEq
		if len(pieces) > 1 {
			wantOp = model.Operator(pieces[len(pieces)-2])
		}
		if ok != valid[wantOp] {
			t.Fatalf("SplitOperator(%q) ok %v for operator %q", s, ok, wantOp)
		}
		if ok && op != wantOp || !ok && op != "" {
			t.Fatalf("SplitOperator(%q) = %q, %v; want %q", s, op, ok, wantOp)
		}
	})
}
