package model_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"mirrorql/model"
)

const (
	longZero7   = "0000000000000000000000000000000000000007"
	longZeroMax = "0000000000000000000000000000003fffffffff" // num 2^38-1
	longZeroBig = "0000000000000000000000000000004000000000" // num 2^38: not a num alias
	opaqueEVM   = "71eaa748d5252be68c1185588beca495459fdba4"
)

func TestEntityIDBits(t *testing.T) {
	tests := []struct {
		name              string
		id                model.EntityID
		shard, realm, num int64
		want              string
	}{
		{"zero", 0, 0, 0, 0, "0.0.0"},
		{"shard 0 realm 0 is the num", 7, 0, 0, 7, "0.0.7"},
		{"max num", model.MaxNum, 0, 0, 274877906943, "0.0.274877906943"},
		{"all limits encode to -1", -1, 1023, 65535, 274877906943, "1023.65535.274877906943"},
		{"274877906951 is 0.1.7", 274877906951, 0, 1, 7, "0.1.7"},
		{"max int64", math.MaxInt64, 511, 65535, 274877906943, "511.65535.274877906943"},
		{"min int64", math.MinInt64, 512, 0, 0, "512.0.0"},
		{"realm 1 num 0", 1 << 38, 0, 1, 0, "0.1.0"},
		{"shard 1", 1 << 54, 1, 0, 0, "1.0.0"},
		{"shard 1023 sets the sign bit", model.EntityID(-1 << 54), 1023, 0, 0, "1023.0.0"},
		{"mixed", model.EntityID(5<<54 | 300<<38 | 123456), 5, 300, 123456, "5.300.123456"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := model.NewEntityID(tt.shard, tt.realm, tt.num); got != tt.id {
				t.Errorf("NewEntityID(%d, %d, %d) = %d, want %d", tt.shard, tt.realm, tt.num, got, tt.id)
			}
			if s, r, n := tt.id.Shard(), tt.id.Realm(), tt.id.Num(); s != tt.shard || r != tt.realm || n != tt.num {
				t.Errorf("decode %d = %d.%d.%d, want %d.%d.%d", tt.id, s, r, n, tt.shard, tt.realm, tt.num)
			}
			if got := tt.id.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := string(tt.id.Append([]byte("id="))); got != "id="+tt.want {
				t.Errorf("Append = %q, want %q", got, "id="+tt.want)
			}
		})
	}
}

func TestEntityIDNull(t *testing.T) {
	tests := []struct {
		name string
		id   model.EntityID
		want *string // nil: renders as JSON null
	}{
		{"encoded 0", 0, nil},
		{"min int64 has num 0", math.MinInt64, nil},
		{"realm set, num 0", 1 << 38, nil},
		{"shard set, num 0", 1 << 54, nil},
		{"num 1", 1, ptr("0.0.1")},
		{"0.1.7", 274877906951, ptr("0.1.7")},
		{"-1", -1, ptr("1023.65535.274877906943")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.IsNull(); got != (tt.want == nil) {
				t.Errorf("IsNull() = %v, want %v", got, tt.want == nil)
			}
			if got := tt.id.StringPtr(); !equalPtr(got, tt.want) {
				t.Errorf("StringPtr() = %s, want %s", showPtr(got), showPtr(tt.want))
			}
		})
	}
}

func TestValidEntityIDSyntax(t *testing.T) {
	tests := []struct {
		name          string
		in            string
		plain, withEV bool // result without and with allowEVM
	}{
		{"shard.realm.num", "0.0.7", true, true},
		{"realm.num", "0.7", true, true},
		{"num", "7", true, true},
		{"leading zeros", "00007", true, true},
		{"5-digit realm", "1.12345.1", true, true},
		{"12-digit num", "0.0.999999999999", true, true},
		{"negative encoded id", "-5", true, true},
		{"19 digits", "9223372036854775807", true, true},
		{"min encoded id", "-9223372036854775808", true, true},
		{"20 digits", "92233720368547758080", false, false},
		{"13-digit num", "0.0.1234567890123", false, false},
		{"5-digit shard", "12345.1.1", false, false},
		{"6-digit realm", "0.123456.7", false, false},
		{"negative num part", "0.0.-3", false, false},
		{"letters", "a.b.c", false, false},
		{"four parts", "0.0.0.1", false, false},
		{"empty", "", false, false},
		{"leading space", " 7", false, false},
		{"trailing newline", "0.0.7\n", false, false},
		{"plus sign", "+7", false, false},
		{"arabic-indic digits", "\u0667", false, false},
		{"0x long-zero address", "0x" + longZero7, false, true},
		{"bare address", opaqueEVM, false, true},
		{"upper-case address", strings.ToUpper(opaqueEVM), false, true},
		{"0X prefix", "0X" + longZero7, false, false},
		{"shard.realm.address", "0.0." + longZero7, false, true},
		{"realm.address", "0." + opaqueEVM, false, true},
		{"0x before shard.realm.address", "0x0.0." + longZero7, false, false},
		{"0x inside shard.realm.address", "0.0.0x" + longZero7, false, false},
		{"5-digit shard before address", "12345.0." + longZero7, false, false},
		{"39 hex digits", longZero7[1:], false, false},
		{"41 hex digits", longZero7 + "0", false, false},
		{"non-hex address", "0.0.00000000000000000000000000000000000000zz", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := model.ValidEntityIDSyntax(tt.in, false); got != tt.plain {
				t.Errorf("ValidEntityIDSyntax(%q, false) = %v, want %v", tt.in, got, tt.plain)
			}
			if got := model.ValidEntityIDSyntax(tt.in, true); got != tt.withEV {
				t.Errorf("ValidEntityIDSyntax(%q, true) = %v, want %v", tt.in, got, tt.withEV)
			}
			if isValidEntityIDRegex(tt.in, false) != tt.plain || isValidEntityIDRegex(tt.in, true) != tt.withEV {
				t.Errorf("the mirror node regexes disagree with this row")
			}
		})
	}
}

// parseResult renders a ParseEntityID outcome as one comparable string.
func parseResult(t *testing.T, id model.EntityID, err error) string {
	t.Helper()
	var invalid *model.InvalidEntityIDError
	switch {
	case err == nil:
		return "id " + id.String()
	case errors.Is(err, model.ErrOpaqueEVMAddress):
		return "opaque"
	case errors.As(err, &invalid):
		if want := `Invalid entity ID "` + invalid.Rebuilt + `"`; err.Error() != want {
			t.Errorf("Error() = %q, want %q", err.Error(), want)
		}
		return "err " + err.Error()
	}
	t.Fatalf("unexpected error type %T: %v", err, err)
	return ""
}

func TestParseEntityID(t *testing.T) {
	zero := model.EntityDefaults{}
	sr := model.EntityDefaults{Shard: 1, Realm: 2}
	tests := []struct {
		name string
		def  model.EntityDefaults
		in   string
		evm  bool
		want string // "id s.r.n", "opaque" or "err <message>"
	}{
		{"shard.realm.num", zero, "0.0.7", false, "id 0.0.7"},
		{"realm.num", zero, "0.7", false, "id 0.0.7"},
		{"num", zero, "7", false, "id 0.0.7"},
		{"leading zeros", zero, "00007", false, "id 0.0.7"},
		{"leading zeros everywhere", zero, "0000.00000.000000000007", false, "id 0.0.7"},
		{"num 0", zero, "0", false, "id 0.0.0"},
		{"max num", zero, "274877906943", false, "id 0.0.274877906943"},
		{"limits", zero, "1023.65535.274877906943", false, "id 1023.65535.274877906943"},
		{"5-digit realm", zero, "12345.7", false, "id 0.12345.7"},
		{"defaults fill num", sr, "7", false, "id 1.2.7"},
		{"defaults fill shard", sr, "3.7", false, "id 1.3.7"},
		{"explicit parts beat defaults", sr, "0.0.7", false, "id 0.0.7"},
		{"0x prefix is stripped", zero, "0x7", false, "id 0.0.7"},
		{"negative", zero, "-5", false, `err Invalid entity ID "0.0.-5"`},
		{"negative with defaults", sr, "-5", false, `err Invalid entity ID "1.2.-5"`},
		{"bare encoded id is a num", zero, "274877906951", false, `err Invalid entity ID "0.0.274877906951"`},
		{"13 digits", zero, "1234567890123", false, `err Invalid entity ID "0.0.1234567890123"`},
		{"19 digits", zero, "9223372036854775807", false, `err Invalid entity ID "0.0.9223372036854775807"`},
		{"num over limit", zero, "0.0.274877906944", false, `err Invalid entity ID "0.0.274877906944"`},
		{"shard 1024", zero, "1024.0.1", false, `err Invalid entity ID "1024.0.1"`},
		{"realm 65536", zero, "0.65536.1", false, `err Invalid entity ID "0.65536.1"`},
		{"realm 65536 short form", sr, "65536.1", false, `err Invalid entity ID "1.65536.1"`},
		{"letters", zero, "a.b.c", false, `err Invalid entity ID "a.b.c"`},
		{"empty", zero, "", false, `err Invalid entity ID "0.0."`},
		{"four parts get the shard prefixed", sr, "0.0.0.1", false, `err Invalid entity ID "1.0.0.0.1"`},
		{"five parts", zero, "1.2.3.4.5", false, `err Invalid entity ID "1.2.3.4.5"`},
		{"quote is not escaped", zero, `7"`, false, `err Invalid entity ID "0.0.7""`},
		{"long-zero address", zero, "0x" + longZero7, true, "id 0.0.7"},
		{"long-zero address without 0x", zero, longZero7, true, "id 0.0.7"},
		{"long-zero address takes the defaults", sr, "0x" + longZero7, true, "id 1.2.7"},
		{"upper-case long-zero address", zero, "0x00000000000000000000000000000000000000FF", true, "id 0.0.255"},
		{"long-zero address of the max num", zero, "0x" + longZeroMax, true, "id 0.0.274877906943"},
		{"long-zero address over the max num", zero, "0x" + longZeroBig, true, "opaque"},
		{"opaque address", zero, "0x" + opaqueEVM, true, "opaque"},
		{"opaque address without 0x", zero, opaqueEVM, true, "opaque"},
		{"zero address is num 0", zero, "0x0000000000000000000000000000000000000000", true, "id 0.0.0"},
		{"long-zero address not allowed", zero, "0x" + longZero7, false, `err Invalid entity ID "0.0.` + longZero7 + `"`},
		{"opaque address not allowed", zero, "0x" + opaqueEVM, false, `err Invalid entity ID "` + opaqueEVM + `"`},
		{"shard.realm.address", zero, "0.0." + longZero7, true, "id 0.0.7"},
		{"shard.realm.address with defaults", sr, "1.2." + longZero7, true, "id 1.2.7"},
		{"shard.realm differ from defaults", zero, "1.2." + longZero7, true, `err Invalid entity ID "1.2.` + longZero7 + `"`},
		{"shard differs from defaults", sr, "0.2." + longZero7, true, `err Invalid entity ID "0.2.` + longZero7 + `"`},
		{"shard.realm.opaque", sr, "1.2." + opaqueEVM, true, "opaque"},
		{"shard.realm.opaque differ from defaults", zero, "1.2." + opaqueEVM, true, `err Invalid entity ID "1.2.` + opaqueEVM + `"`},
		{"realm.address", zero, "0." + longZero7, true, "id 0.0.7"},
		{"realm.address differs from defaults", zero, "5." + longZero7, true, `err Invalid entity ID "0.5.` + longZero7 + `"`},
		{"realm.opaque", zero, "0." + opaqueEVM, true, "opaque"},
		{"realm.opaque differs from defaults", zero, "5." + opaqueEVM, true, `err Invalid entity ID "5.` + opaqueEVM + `"`},
		{"0x0x opaque", zero, "0x0x" + opaqueEVM, true, "opaque"},
		{"0x0x long-zero", zero, "0x0x" + longZero7, true, `err Invalid entity ID "0.0.0x` + longZero7 + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := tt.def.ParseEntityID(tt.in, tt.evm)
			if got := parseResult(t, id, err); got != tt.want {
				t.Errorf("%+v.ParseEntityID(%q, %v) = %s, want %s", tt.def, tt.in, tt.evm, got, tt.want)
			}
		})
	}
}

func TestParseEntityIDEncoded(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want model.EntityID
	}{
		{"0.0.7", "0.0.7", 7},
		{"0.1.7", "0.1.7", 274877906951},
		{"limits", "1023.65535.274877906943", -1},
		{"511 shard", "511.65535.274877906943", math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := model.EntityDefaults{}.ParseEntityID(tt.in, false)
			if err != nil || got != tt.want {
				t.Errorf("ParseEntityID(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestParseEntityIDMirrorNodeVectors replays outcomes recorded from the mirror
// node's own parser (testdata/README.md).
func TestParseEntityIDMirrorNodeVectors(t *testing.T) {
	f, err := os.Open("testdata/entityid_mirror_node.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var v struct {
			S      string `json:"s"`
			EVM    bool   `json:"evm"`
			Shard  int64  `json:"shard"`
			Realm  int64  `json:"realm"`
			Valid  bool   `json:"valid"`
			ID     string `json:"id"`
			Opaque bool   `json:"opaque"`
			Err    string `json:"err"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		want := "id " + v.ID
		if v.Opaque {
			want = "opaque"
		} else if v.Err != "" {
			want = "err " + v.Err
		}
		d := model.EntityDefaults{Shard: v.Shard, Realm: v.Realm}
		id, err := d.ParseEntityID(v.S, v.EVM)
		if got := parseResult(t, id, err); got != want {
			t.Errorf("%+v.ParseEntityID(%q, %v) = %s, want %s", d, v.S, v.EVM, got, want)
		}
		if got := model.ValidEntityIDSyntax(v.S, v.EVM); got != v.Valid {
			t.Errorf("ValidEntityIDSyntax(%q, %v) = %v, want %v", v.S, v.EVM, got, v.Valid)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 600 {
		t.Fatalf("only %d vectors read", n)
	}
}

func TestParseEntityIDNum(t *testing.T) {
	zero := model.EntityDefaults{}
	sr := model.EntityDefaults{Shard: 1, Realm: 2}
	tests := []struct {
		name string
		def  model.EntityDefaults
		in   string
		want string // "" when the id must be rejected
	}{
		{"shard.realm.num", zero, "0.0.7", "0.0.7"},
		{"all parts", zero, "1.2.3", "1.2.3"},
		{"limits", zero, "1023.65535.274877906943", "1023.65535.274877906943"},
		{"num", zero, "7", "0.0.7"},
		{"num is never an encoded id", zero, "274877906943", "0.0.274877906943"},
		{"leading zeros", zero, "00007", "0.0.7"},
		{"realm.num", zero, "3.7", "0.3.7"},
		{"4-digit realm.num", zero, "1234.7", "0.1234.7"},
		{"5-digit realm.num", zero, "12345.7", "0.12345.7"},
		{"max realm.num", zero, "65535.7", "0.65535.7"},
		{"defaults fill num", sr, "7", "1.2.7"},
		{"defaults fill shard of realm.num", sr, "3.7", "1.3.7"},
		{"5-digit realm with defaults", sr, "12345.7", "1.12345.7"},
		{"explicit parts beat defaults", sr, "0.0.7", "0.0.7"},
		{"realm.num over realm limit", zero, "65536.7", ""},
		{"shard over limit", zero, "1024.0.1", ""},
		{"num over limit", zero, "0.0.274877906944", ""},
		{"bare num over limit", zero, "274877906944", ""},
		{"AABBCC22", zero, "AABBCC22", ""},
		{"spaces", zero, " 0.0.1 ", ""},
		{"four parts", zero, "0.0.0.2", ""},
		{"letters", zero, "a.b.c", ""},
		{"letter shard", zero, "a.0.1000", ""},
		{"leading dot", zero, ".0.1000", ""},
		{"negative", zero, "-1", ""},
		{"EVM address", zero, "000000000000000000000000000000000186Fb1b", ""},
		{"max int64", zero, "9223372036854775807", ""},
		{"13-digit num", zero, "1234567890123", ""},
		{"5-digit shard", zero, "12345.1.1", ""},
		{"6-digit realm", zero, "123456.7", ""},
		{"6-digit realm with shard", zero, "1.123456.1", ""},
		{"empty", zero, "", ""},
		{"trailing dot", zero, "0.0.", ""},
		{"0x prefix", zero, "0x7", ""},
		{"trailing newline", zero, "0.0.7\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := tt.def.ParseEntityIDNum(tt.in)
			got := ""
			if ok {
				got = id.String()
			}
			if got != tt.want {
				t.Errorf("%+v.ParseEntityIDNum(%q) = %q, %v; want %q", tt.def, tt.in, got, ok, tt.want)
			}
		})
	}
}

// The mirror node's own regexes (entityId.js), as an oracle for the
// hand-written matchers behind ValidEntityIDSyntax.
var (
	entityIDRegex        = regexp.MustCompile(`^(\d{1,4}\.)?\d{1,5}\.\d{1,12}$`)
	encodedEntityIDRegex = regexp.MustCompile(`^-?\d{1,19}$`)
	evmAddressRegex      = regexp.MustCompile(`^(0x)?[A-Fa-f0-9]{40}$`)
	evmShardRealmRegex   = regexp.MustCompile(`^(\d{1,4}\.)?(\d{1,5}\.)?[A-Fa-f0-9]{40}$`)
)

func isValidEntityIDRegex(s string, allowEVM bool) bool {
	return entityIDRegex.MatchString(s) || encodedEntityIDRegex.MatchString(s) ||
		allowEVM && (evmAddressRegex.MatchString(s) || evmShardRealmRegex.MatchString(s))
}

func FuzzParseEntityID(f *testing.F) {
	for _, s := range []string{
		"0.0.7", "0.7", "7", "00007", "-5", "274877906951", "1024.0.1", "0.65536.1", "1023.65535.274877906943",
		"0.0.0.1", "a.b.c", "", ".", "0x7", "0x" + longZero7, longZero7, "0x" + opaqueEVM, "0.0." + longZero7,
		"1.2." + opaqueEVM, "5." + longZero7, "0x0x" + opaqueEVM, "0x" + longZeroBig, "0.0.7\n", "9223372036854775807",
		"12345." + longZero7, "1234.12345." + opaqueEVM, "--5", "-", "0.", ".0.1", "1.12345.1",
	} {
		f.Add(s, int64(0), int64(0), true, int64(7))
		f.Add(s, int64(1), int64(2), false, int64(-1))
	}
	f.Add("0.0.7", int64(1023), int64(65535), true, int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, s string, shard, realm int64, evm bool, encoded int64) {
		// bit layout: every int64 decodes to parts within the limits and encodes back
		e := model.EntityID(encoded)
		if e.Shard() < 0 || e.Shard() > model.MaxShard || e.Realm() < 0 || e.Realm() > model.MaxRealm ||
			e.Num() < 0 || e.Num() > model.MaxNum {
			t.Fatalf("%d decodes out of range: %d.%d.%d", encoded, e.Shard(), e.Realm(), e.Num())
		}
		if back := model.NewEntityID(e.Shard(), e.Realm(), e.Num()); back != e {
			t.Fatalf("%d -> %s -> %d", encoded, e, back)
		}
		if e.IsNull() != (e.StringPtr() == nil) || (e.StringPtr() != nil && *e.StringPtr() != e.String()) {
			t.Fatalf("%d: IsNull %v, StringPtr %s", encoded, e.IsNull(), showPtr(e.StringPtr()))
		}

		if got, want := model.ValidEntityIDSyntax(s, evm), isValidEntityIDRegex(s, evm); got != want {
			t.Fatalf("ValidEntityIDSyntax(%q, %v) = %v, the regexes say %v", s, evm, got, want)
		}

		d := model.EntityDefaults{Shard: abs(shard) % (model.MaxShard + 1), Realm: abs(realm) % (model.MaxRealm + 1)}
		id, err := d.ParseEntityID(s, evm)
		var invalid *model.InvalidEntityIDError
		switch {
		case err == nil:
			// parse -> String round-trips, whatever form the input had
			back, err := d.ParseEntityID(id.String(), false)
			if err != nil || back != id {
				t.Fatalf("%q -> %s -> %d, %v", s, id, back, err)
			}
			if !model.ValidEntityIDSyntax(id.String(), false) {
				t.Fatalf("%q -> %s, which fails the syntax check", s, id)
			}
			if n, ok := d.ParseEntityIDNum(id.String()); !ok || n != id {
				t.Fatalf("%q -> %s, ParseEntityIDNum gives %d, %v", s, id, n, ok)
			}
		case errors.Is(err, model.ErrOpaqueEVMAddress):
			if !evm {
				t.Fatalf("%q: opaque EVM address without allowEVM", s)
			}
		case errors.As(err, &invalid):
			if err.Error() != `Invalid entity ID "`+invalid.Rebuilt+`"` {
				t.Fatalf("%q: message %q for rebuilt %q", s, err.Error(), invalid.Rebuilt)
			}
		default:
			t.Fatalf("%q: unexpected error %T %v", s, err, err)
		}
	})
}

func FuzzParseEntityIDNum(f *testing.F) {
	for _, s := range []string{
		"0.0.7", "7", "3.7", "12345.7", "65536.7", "1024.0.1", "0.0.274877906944", "AABBCC22", " 0.0.1 ",
		"0.0.0.2", "a.b.c", "a.0.1000", ".0.1000", "-1", "000000000000000000000000000000000186Fb1b",
		"9223372036854775807", "1023.65535.274877906943", "",
	} {
		f.Add(s, int64(0), int64(0))
		f.Add(s, int64(1), int64(2))
	}
	f.Fuzz(func(t *testing.T, s string, shard, realm int64) {
		d := model.EntityDefaults{Shard: abs(shard) % (model.MaxShard + 1), Realm: abs(realm) % (model.MaxRealm + 1)}
		id, ok := d.ParseEntityIDNum(s)
		if !ok {
			return
		}
		if strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 2 {
			t.Fatalf("%q accepted", s)
		}
		back, ok := d.ParseEntityIDNum(id.String())
		if !ok || back != id {
			t.Fatalf("%q -> %s -> %d, %v", s, id, back, ok)
		}
		// the Node parser agrees on every id the Java one accepts
		if n, err := d.ParseEntityID(s, false); err != nil || n != id {
			t.Fatalf("%q: ParseEntityIDNum %s, ParseEntityID %d, %v", s, id, n, err)
		}
	})
}

func BenchmarkParseEntityID(b *testing.B) {
	d := model.EntityDefaults{}
	for _, in := range []struct {
		name string
		s    string
		evm  bool
	}{
		{"shard.realm.num", "0.0.1234567", false},
		{"num", "1234567", false},
		{"invalid", "-5", false},
		{"long-zero EVM", "0x" + longZero7, true},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = d.ParseEntityID(in.s, in.evm)
			}
		})
	}
}

func abs(v int64) int64 {
	if v < 0 {
		if v == math.MinInt64 {
			return 0
		}
		return -v
	}
	return v
}

func ptr[T any](v T) *T { return &v }

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func showPtr[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}
