package model_test

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"mirrorql/model"
)

func TestParseLong(t *testing.T) {
	tests := []struct {
		name string
		in   string
		min  int64
		want int64
		ok   bool
	}{
		{"one", "1", 1, 1, true},
		{"leading zeros", "007", 1, 7, true},
		{"max int64", "9223372036854775807", 1, math.MaxInt64, true},
		{"19 zeros then too long", "00000000000000000001", 1, 0, false},
		{"past int64", "9223372036854775808", 1, 0, false},
		{"19 nines", "9999999999999999999", 1, 0, false},
		{"20 digits", "92233720368547758070", 1, 0, false},
		{"zero below min 1", "0", 1, 0, false},
		{"zero with min 0", "0", 0, 0, true},
		{"below a larger min", "4", 5, 0, false},
		{"at a larger min", "5", 5, 5, true},
		{"negative", "-1", 0, 0, false},
		{"plus", "+1", 0, 0, false},
		{"underscore", "2_2", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"space", " 1", 0, 0, false},
		{"trailing newline", "1\n", 0, 0, false},
		{"decimal", "1.0", 0, 0, false},
		{"operator left in", "gt:1", 0, 0, false},
		{"arabic-indic digit", "\u0661", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := model.ParseLong(tt.in, tt.min)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseLong(%q, %d) = %d, %v; want %d, %v", tt.in, tt.min, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseSequenceNumber(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
		ok   bool
	}{
		{"zero is valid (DECISIONS 1)", "0", 0, true},
		{"one", "1", 1, true},
		{"max int64", "9223372036854775807", math.MaxInt64, true},
		{"past int64", "9223372036854775808", 0, false},
		{"negative", "-1", 0, false},
		{"underscore", "2_2", 0, false},
		{"letters", "a", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := model.ParseSequenceNumber(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseSequenceNumber(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParseLong holds ParseLong to the rule's own wording: the mirror node's
// regular expression, then the int64 range and the minimum.
func FuzzParseLong(f *testing.F) {
	for _, s := range []string{"0", "1", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"", "-1", "+1", "1.0", " 1", "1 ", "１", "0x10", "00000000000000000001"} {
		f.Add(s, int64(0))
	}
	rule := regexp.MustCompile(`^\d{1,19}$`)
	f.Fuzz(func(t *testing.T, s string, min int64) {
		got, ok := model.ParseLong(s, min)
		want, err := strconv.ParseInt(s, 10, 64)
		wantOK := rule.MatchString(s) && err == nil && want >= min
		if ok != wantOK || ok && got != want {
			t.Errorf("ParseLong(%q, %d) = %d, %v; the rule says %d, %v", s, min, got, ok, want, wantOK)
		}
	})
}
