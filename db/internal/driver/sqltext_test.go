package driver

import (
	"testing"

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
