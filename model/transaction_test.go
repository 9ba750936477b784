package model_test

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"mirrorql/model"
)

// txID builds protobuf TransactionID bytes field by field.
type txID struct{ b []byte }

func (x txID) varint(num protowire.Number, v uint64) txID {
	b := protowire.AppendTag(append([]byte(nil), x.b...), num, protowire.VarintType)
	return txID{protowire.AppendVarint(b, v)}
}

func (x txID) msg(num protowire.Number, sub txID) txID {
	b := protowire.AppendTag(append([]byte(nil), x.b...), num, protowire.BytesType)
	return txID{protowire.AppendBytes(b, sub.b)}
}

func validStart(seconds int64, nanos int32) txID {
	return txID{}.msg(1, txID{}.varint(1, uint64(seconds)).varint(2, uint64(int64(nanos))))
}

func account(shard, realm, num int64) txID {
	return txID{}.varint(1, uint64(shard)).varint(2, uint64(realm)).varint(3, uint64(num))
}

func TestDecodeTransactionID(t *testing.T) {
	spec := "0a0608d285d8cc041202180318012001" // docs/reference/behavior.md §2.4
	tests := []struct {
		name      string
		in        []byte
		account   *string
		nonce     int32
		scheduled bool
		start     string
	}{
		{"spec example", mustHex(t, spec), ptr("0.0.3"), 1, true, "1234567890.000000000"},
		{"built like the spec example", validStart(1234567890, 0).msg(2, account(0, 0, 3)).varint(3, 1).varint(4, 1).b, ptr("0.0.3"), 1, true, "1234567890.000000000"},
		{"empty: proto defaults", nil, nil, 0, false, "0.000000000"},
		{"nanos padded", validStart(1234567890, 5).b, nil, 0, false, "1234567890.000000005"},
		{"shard and realm", validStart(1, 0).msg(2, account(1, 2, 3)).b, ptr("1.2.3"), 0, false, "1.000000000"},
		{"num 0 is null", txID{}.msg(2, account(1, 2, 0)).b, nil, 0, false, "0.000000000"},
		{"alias instead of num is null", txID{}.msg(2, account(0, 0, 3).msg(4, txID{[]byte{1, 2}})).b, nil, 0, false, "0.000000000"},
		{"num after alias wins", txID{}.msg(2, txID{}.msg(4, txID{[]byte{1}}).varint(3, 9)).b, ptr("0.0.9"), 0, false, "0.000000000"},
		{"scheduled false, nonce 0", validStart(7, 0).varint(3, 0).varint(4, 0).b, nil, 0, false, "7.000000000"},
		{"negative nonce", txID{}.varint(4, uint64(math.MaxUint64)).b, nil, -1, false, "0.000000000"},
		{"nonce keeps the low 32 bits", txID{}.varint(4, 1<<32+5).b, nil, 5, false, "0.000000000"},
		{"seconds beyond int64 nanoseconds", validStart(10_000_000_000, 1).b, nil, 0, false, "10000000000.000000001"},
		{"max seconds", validStart(math.MaxInt64, 999999999).b, nil, 0, false, "9223372036854775807.999999999"},
		{"negative seconds", validStart(-1, 5).b, nil, 0, false, "-1.000000005"},
		{"negative nanos are padded as text", validStart(0, -5).b, nil, 0, false, "0.0000000-5"},
		{"nanos of a full second", validStart(0, 1_000_000_000).b, nil, 0, false, "0.1000000000"},
		{"repeated valid start merges", validStart(1, 0).msg(1, txID{}.varint(2, 5)).b, nil, 0, false, "1.000000005"},
		{"last scalar wins", txID{}.varint(4, 1).varint(4, 2).b, nil, 2, false, "0.000000000"},
		{"unknown fields skipped", txID{}.varint(9, 1).msg(10, txID{[]byte("x")}).varint(4, 3).b, nil, 3, false, "0.000000000"},
		{"scalar sent as bytes is skipped", txID{}.varint(4, 3).msg(4, txID{[]byte{7}}).b, nil, 3, false, "0.000000000"},
		{"seconds sent as bytes are skipped", txID{}.msg(1, txID{}.msg(1, txID{[]byte{9}}).varint(2, 7)).b, nil, 0, false, "0.000000007"},
		{"message sent as varint is skipped", validStart(5, 0).varint(1, 9).b, nil, 0, false, "5.000000000"},
		{"truncated after the account", mustHex(t, spec)[:12], ptr("0.0.3"), 0, false, "1234567890.000000000"},
		{"truncated inside the account", mustHex(t, spec)[:11], nil, 0, false, "1234567890.000000000"},
		{"garbage", []byte{0xff, 0xff, 0xff}, nil, 0, false, "0.000000000"},
		{"varint cut short", []byte{0x20, 0xff}, nil, 0, false, "0.000000000"},
		{"length cut short", []byte{0x0a, 0x05, 0x08}, nil, 0, false, "0.000000000"},
		{"group skipped", append([]byte{0x2b, 0x08, 0x01, 0x2c}, txID{}.varint(4, 3).b...), nil, 3, false, "0.000000000"},
		{"unterminated group stops", append(txID{}.varint(4, 3).b, 0x2b, 0x08, 0x01), nil, 3, false, "0.000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.DecodeTransactionID(tt.in)
			if !equalPtr(got.AccountID, tt.account) {
				t.Errorf("account = %s, want %s", showPtr(got.AccountID), showPtr(tt.account))
			}
			if got.Nonce == nil || *got.Nonce != tt.nonce {
				t.Errorf("nonce = %s, want %d", showPtr(got.Nonce), tt.nonce)
			}
			if got.Scheduled == nil || *got.Scheduled != tt.scheduled {
				t.Errorf("scheduled = %s, want %v", showPtr(got.Scheduled), tt.scheduled)
			}
			if got.ValidStart == nil || *got.ValidStart != tt.start {
				t.Errorf("valid start = %s, want %q", showPtr(got.ValidStart), tt.start)
			}
		})
	}
}

func TestLegacyTransactionID(t *testing.T) {
	tests := []struct {
		name    string
		payer   *model.EntityID
		start   *model.Timestamp
		account *string
		vstart  *string
	}{
		{"spec example", ptr(model.EntityID(10)), ptr(model.Timestamp(1234567890000000000)), ptr("0.0.10"), ptr("1234567890.000000000")},
		{"shard and realm", ptr(model.NewEntityID(1, 2, 3)), ptr(model.Timestamp(1)), ptr("1.2.3"), ptr("0.000000001")},
		{"no valid start", ptr(model.EntityID(10)), nil, ptr("0.0.10"), nil},
		{"no payer", nil, ptr(model.Timestamp(0)), nil, ptr("0.000000000")},
		{"payer with num 0", ptr(model.EntityID(1 << 38)), nil, nil, nil},
		{"nothing", nil, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.LegacyTransactionID(tt.payer, tt.start)
			if !equalPtr(got.AccountID, tt.account) {
				t.Errorf("account = %s, want %s", showPtr(got.AccountID), showPtr(tt.account))
			}
			if !equalPtr(got.ValidStart, tt.vstart) {
				t.Errorf("valid start = %s, want %s", showPtr(got.ValidStart), showPtr(tt.vstart))
			}
			if got.Nonce != nil || got.Scheduled != nil {
				t.Errorf("nonce %s, scheduled %s; legacy rows have neither", showPtr(got.Nonce), showPtr(got.Scheduled))
			}
		})
	}
}

func FuzzDecodeTransactionID(f *testing.F) {
	spec, _ := hex.DecodeString("0a0608d285d8cc041202180318012001")
	f.Add(spec, int64(1234567890), int32(0), int64(0), int64(0), int64(3), int32(1), true)
	f.Add([]byte{}, int64(-1), int32(-5), int64(1), int64(2), int64(0), int32(-1), false)
	f.Add([]byte{0x0a, 0xff}, int64(math.MaxInt64), int32(math.MaxInt32), int64(1023), int64(65535), int64(math.MaxInt64), int32(math.MinInt32), true)
	f.Fuzz(func(t *testing.T, b []byte, seconds int64, nanos int32, shard, realm, num int64, nonce int32, scheduled bool) {
		// arbitrary bytes: no panic, every field but the account present and well formed
		got := model.DecodeTransactionID(b)
		if got.Nonce == nil || got.Scheduled == nil || got.ValidStart == nil {
			t.Fatalf("DecodeTransactionID(%x) = %+v: missing fields", b, got)
		}
		if secs, frac, ok := strings.Cut(*got.ValidStart, "."); !ok || secs == "" || len(frac) < 9 {
			t.Fatalf("DecodeTransactionID(%x): valid start %q", b, *got.ValidStart)
		}
		if got.AccountID != nil && strings.Count(*got.AccountID, ".") != 2 {
			t.Fatalf("DecodeTransactionID(%x): account %q", b, *got.AccountID)
		}

		// canonical bytes of the given fields decode to exactly them
		in := validStart(seconds, nanos).msg(2, account(shard, realm, num))
		if scheduled {
			in = in.varint(3, 1)
		}
		if nonce != 0 {
			in = in.varint(4, uint64(int64(nonce)))
		}
		got = model.DecodeTransactionID(in.b)
		n := strconv.Itoa(int(nanos))
		if len(n) < 9 {
			n = strings.Repeat("0", 9-len(n)) + n
		}
		wantStart := strconv.FormatInt(seconds, 10) + "." + n
		var wantAccount *string
		if num != 0 {
			wantAccount = ptr(strconv.FormatInt(shard, 10) + "." + strconv.FormatInt(realm, 10) + "." + strconv.FormatInt(num, 10))
		}
		if *got.ValidStart != wantStart || *got.Nonce != nonce || *got.Scheduled != scheduled || !equalPtr(got.AccountID, wantAccount) {
			t.Fatalf("DecodeTransactionID(%x) = %s %d %v %s; want %s %d %v %s", in.b, *got.ValidStart, *got.Nonce,
				*got.Scheduled, showPtr(got.AccountID), wantStart, nonce, scheduled, showPtr(wantAccount))
		}
	})
}
