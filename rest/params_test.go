package rest

import (
	"testing"

	"mirrorql/app"
	"mirrorql/model"
)

func TestParseValues(t *testing.T) {
	longs := []struct {
		in   string
		min  int64
		want int64
		ok   bool
	}{
		{"1", 1, 1, true}, {"0", 1, 0, false}, {"0", 0, 0, true}, {"007", 1, 7, true},
		{"9223372036854775807", 1, 9223372036854775807, true}, {"9223372036854775808", 1, 0, false},
		{"-1", 0, 0, false}, {"2_2", 0, 0, false}, {"", 0, 0, false}, {"12345678901234567890", 0, 0, false},
		{" 1", 0, 0, false}, {"1.0", 0, 0, false},
	}
	for _, tt := range longs {
		t.Run("long/"+tt.in, func(t *testing.T) {
			got, ok := parseLong(tt.in, tt.min)
			if ok != tt.ok || got != tt.want {
				t.Errorf("parseLong(%q, %d) = %d, %v", tt.in, tt.min, got, ok)
			}
		})
	}
	limits := []struct {
		in   string
		want int
		ok   bool
	}{{"1", 1, true}, {"100", 100, true}, {"1000", 100, true}, {"9223372036854775807", 100, true}, {"0", 0, false}, {"-1", 0, false}}
	for _, tt := range limits {
		t.Run("limit/"+tt.in, func(t *testing.T) {
			if got, ok := parseLimit(tt.in, app.PageSizes{Default: 25, Max: 100}); ok != tt.ok || got != tt.want {
				t.Errorf("parseLimit(%q) = %d, %v", tt.in, got, ok)
			}
		})
	}
	encodings := []struct {
		op   model.Operator
		in   string
		utf8 bool
		ok   bool
	}{
		{model.OpEq, "base64", false, true}, {model.OpEq, "UTF-8", true, true}, {model.OpEq, "utf8", true, true},
		{model.OpNe, "utf-8", true, false}, {model.OpGt, "base64", false, false}, {model.OpEq, "hex", false, false},
	}
	for _, tt := range encodings {
		t.Run("encoding/"+string(tt.op)+":"+tt.in, func(t *testing.T) {
			u, ok := parseEncoding(tt.op, tt.in)
			if ok != tt.ok || (ok && u != tt.utf8) {
				t.Errorf("parseEncoding(%s, %q) = %v, %v", tt.op, tt.in, u, ok)
			}
		})
	}
	for in, want := range map[string]model.Order{"asc": model.Asc, "DESC": model.Desc, "Desc": model.Desc, "d": "", "": ""} {
		t.Run("order/"+in, func(t *testing.T) {
			got, ok := parseOrder(in)
			if got != want || ok != (want != "") {
				t.Errorf("parseOrder(%q) = %q, %v", in, got, ok)
			}
		})
	}
}

func FuzzParseLong(f *testing.F) {
	for _, s := range []string{"0", "1", "9223372036854775807", "9223372036854775808", "-1", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseLong(s, 0)
		if ok && v < 0 {
			t.Fatalf("%q parsed to negative %d", s, v)
		}
	})
}
