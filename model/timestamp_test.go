package model_test

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"mirrorql/model"
)

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want model.Timestamp
		ok   bool
	}{
		{"zero", "0", 0, true},
		{"seconds", "1234567890", 1234567890000000000, true},
		{"one fraction digit is right-padded", "1234567890.1", 1234567890100000000, true},
		{"nine fraction digits", "1234567890.000000002", 1234567890000000002, true},
		{"fraction padding keeps leading zeros", "1.05", 1050000000, true},
		{"leading zeros", "0000000001.000000001", 1000000001, true},
		{"one nanosecond", "0.000000001", 1, true},
		{"max int64", "9223372036.854775807", math.MaxInt64, true},
		{"ten-digit seconds that fit", "9223372036", 9223372036000000000, true},
		{"one ns past int64 (DECISIONS 5)", "9223372036.854775808", 0, false},
		{"seconds past int64", "9223372037", 0, false},
		{"largest syntactic value overflows", "9999999999.999999999", 0, false},
		{"ten nines", "9999999999", 0, false},
		{"empty", "", 0, false},
		{"dot", ".", 0, false},
		{"no fraction digits", "1.", 0, false},
		{"no seconds", ".1", 0, false},
		{"two dots", "1.2.3", 0, false},
		{"double dot", "1..2", 0, false},
		{"eleven-digit seconds", "12345678901", 0, false},
		{"ten fraction digits", "1.1234567890", 0, false},
		{"negative", "-1", 0, false},
		{"plus", "+1", 0, false},
		{"exponent", "1e9", 0, false},
		{"leading space", " 1", 0, false},
		{"trailing space", "1 ", 0, false},
		{"comma", "1,5", 0, false},
		{"hex", "0x10", 0, false},
		{"operator left in", "gt:1", 0, false},
		{"arabic-indic digit", "\u0661", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := model.ParseTimestamp(tt.in)
			if tt.ok {
				if err != nil || got != tt.want {
					t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, model.ErrInvalidTimestamp) {
				t.Errorf("ParseTimestamp(%q) = %d, %v; want ErrInvalidTimestamp", tt.in, got, err)
			}
		})
	}
}

func TestTimestampString(t *testing.T) {
	tests := []struct {
		name       string
		ts         model.Timestamp
		node, java string
	}{
		{"zero (Java prints 0.0)", 0, "0.000000000", "0.0"},
		{"one nanosecond", 1, "0.000000001", "0.000000001"},
		{"under a second", 999999999, "0.999999999", "0.999999999"},
		{"one second", 1_000_000_000, "1.000000000", "1.000000000"},
		{"typical", 1234567890000000002, "1234567890.000000002", "1234567890.000000002"},
		{"max int64", math.MaxInt64, "9223372036.854775807", "9223372036.854775807"},
		// Node cuts the decimal string, sign included (nsToSecNs)
		{"-5", -5, "0.0000000-5", "0.0000000-5"},
		{"-99999999", -99999999, "0.-99999999", "0.-99999999"},
		{"-999999999", -999999999, "-.999999999", "-.999999999"},
		{"-1 s", -1_000_000_000, "-1.000000000", "-1.000000000"},
		{"-1.5 s", -1_500_000_000, "-1.500000000", "-1.500000000"},
		{"min int64", math.MinInt64, "-9223372036.854775808", "-9223372036.854775808"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ts.String(); got != tt.node {
				t.Errorf("String() = %q, want %q", got, tt.node)
			}
			if got := string(tt.ts.Append([]byte("ts="))); got != "ts="+tt.node {
				t.Errorf("Append = %q, want %q", got, "ts="+tt.node)
			}
			if got := tt.ts.JavaString(); got != tt.java {
				t.Errorf("JavaString() = %q, want %q", got, tt.java)
			}
			if got := (&tt.ts).StringPtr(); got == nil || *got != tt.node {
				t.Errorf("StringPtr() = %s, want %q", showPtr(got), tt.node)
			}
		})
	}
}

func TestTimestampPtrNil(t *testing.T) {
	var ts *model.Timestamp
	if got := ts.StringPtr(); got != nil {
		t.Errorf("nil StringPtr() = %q, want nil", *got)
	}
}

var timestampSyntax = regexp.MustCompile(`^(\d{1,10})(?:\.(\d{1,9}))?$`)

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{
		"0", "1", "1234567890", "1234567890.1", "1234567890.000000001", "9223372036.854775807",
		"9223372036.854775808", "9999999999.999999999", "", ".", "1.", ".1", "1.2.3", "12345678901",
		"1.1234567890", "-1", "+1", " 1", "0000000000.000000000",
	} {
		f.Add(s)
	}
	maxInt64 := big.NewInt(math.MaxInt64)
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := model.ParseTimestamp(s)

		// independent oracle: the §1.5 regexes, then exact arithmetic against int64
		var want *big.Int
		if m := timestampSyntax.FindStringSubmatch(s); m != nil {
			frac := (m[2] + "000000000")[:9]
			want, _ = new(big.Int).SetString(m[1]+frac, 10)
			if want.Cmp(maxInt64) > 0 {
				want = nil
			}
		}
		if want == nil {
			if !errors.Is(err, model.ErrInvalidTimestamp) {
				t.Fatalf("ParseTimestamp(%q) = %d, %v; want ErrInvalidTimestamp", s, ts, err)
			}
			return
		}
		if err != nil || int64(ts) != want.Int64() {
			t.Fatalf("ParseTimestamp(%q) = %d, %v; want %s", s, ts, err, want)
		}

		// the result formats back to the canonical 9-digit form
		m := timestampSyntax.FindStringSubmatch(s)
		secs := strings.TrimLeft(m[1], "0")
		if secs == "" {
			secs = "0"
		}
		canonical := secs + "." + (m[2] + "000000000")[:9]
		if got := ts.String(); got != canonical {
			t.Fatalf("ParseTimestamp(%q).String() = %q, want %q", s, got, canonical)
		}
		if back, err := model.ParseTimestamp(ts.String()); err != nil || back != ts {
			t.Fatalf("%q -> %s -> %d, %v", s, ts, back, err)
		}
	})
}

func BenchmarkTimestampAppend(b *testing.B) {
	ts := model.Timestamp(1234567890000000002)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = ts.Append(buf[:0])
	}
}
