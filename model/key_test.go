package model_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"mirrorql/model"
)

var (
	ed25519Raw = strings.Repeat("0123456789abcdef", 4)        // 64 hex
	ecdsaRaw   = "02" + strings.Repeat("fedcba9876543210", 4) // 66 hex
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// Protobuf Key builders, so the wrapped shapes below are real encodings.
func keyField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

func keyList(keys ...[]byte) []byte {
	var b []byte
	for _, k := range keys {
		b = append(b, keyField(1, k)...)
	}
	return b
}

func thresholdKey(threshold uint64, keys ...[]byte) []byte {
	b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), threshold)
	return append(b, keyField(2, keyList(keys...))...)
}

func TestEncodeKey(t *testing.T) {
	ed := keyField(2, mustHex(t, ed25519Raw)) // Key{ed25519}
	ec := keyField(7, mustHex(t, ecdsaRaw))   // Key{ECDSA_secp256k1}
	rsa := keyField(3, []byte{1, 2, 3})       // Key{RSA_3072}
	tests := []struct {
		name string
		in   []byte
		want *model.Key
	}{
		{"NULL", nil, nil},
		{"immutable sentinel 0x3200", []byte{0x32, 0x00}, nil},
		{"empty bytes", []byte{}, &model.Key{Type: "ProtobufEncoded", Key: ""}},
		{"ED25519 primitive", mustHex(t, "1220"+ed25519Raw), &model.Key{Type: "ED25519", Key: ed25519Raw}},
		{"ED25519 in a KeyList", mustHex(t, "32240a221220"+ed25519Raw), &model.Key{Type: "ED25519", Key: ed25519Raw}},
		{"ED25519 in a 1/1 ThresholdKey", mustHex(t, "2a28080112240a221220"+ed25519Raw), &model.Key{Type: "ED25519", Key: ed25519Raw}},
		{"ECDSA primitive", mustHex(t, "3a21"+ecdsaRaw), &model.Key{Type: "ECDSA_SECP256K1", Key: ecdsaRaw}},
		{"ECDSA in a KeyList", mustHex(t, "32250a233a21"+ecdsaRaw), &model.Key{Type: "ECDSA_SECP256K1", Key: ecdsaRaw}},
		{"ECDSA in a 1/1 ThresholdKey", mustHex(t, "2a29080112250a233a21"+ecdsaRaw), &model.Key{Type: "ECDSA_SECP256K1", Key: ecdsaRaw}},
		{"built KeyList wrapping", keyField(6, keyList(ed)), &model.Key{Type: "ED25519", Key: ed25519Raw}},
		{"built ThresholdKey wrapping", keyField(5, thresholdKey(1, ec)), &model.Key{Type: "ECDSA_SECP256K1", Key: ecdsaRaw}},
		{"2/2 ThresholdKey", keyField(5, thresholdKey(2, ed, ec)), protobufKey(keyField(5, thresholdKey(2, ed, ec)))},
		{"2-element KeyList", keyField(6, keyList(ed, ed)), protobufKey(keyField(6, keyList(ed, ed)))},
		{"2/1 ThresholdKey", keyField(5, thresholdKey(2, ed)), protobufKey(keyField(5, thresholdKey(2, ed)))},
		{"nested KeyList", keyField(6, keyList(keyField(6, keyList(ed)))), protobufKey(keyField(6, keyList(keyField(6, keyList(ed)))))},
		{"RSA key", rsa, protobufKey(rsa)},
		{"ED25519 key of 31 bytes", mustHex(t, "121f"+ed25519Raw[:62]), protobufKey(mustHex(t, "121f"+ed25519Raw[:62]))},
		{"ED25519 prefix with a trailing byte", mustHex(t, "1220"+ed25519Raw+"00"), protobufKey(mustHex(t, "1220"+ed25519Raw+"00"))},
		{"ED25519 prefix with 33 bytes", mustHex(t, "1220"+ecdsaRaw), protobufKey(mustHex(t, "1220"+ecdsaRaw))},
		{"ECDSA prefix with 32 bytes", mustHex(t, "3a21"+ed25519Raw), protobufKey(mustHex(t, "3a21"+ed25519Raw))},
		{"sentinel with a trailing byte", []byte{0x32, 0x00, 0x00}, &model.Key{Type: "ProtobufEncoded", Key: "320000"}},
		{"lone 0x32", []byte{0x32}, &model.Key{Type: "ProtobufEncoded", Key: "32"}},
		{"hex is lower-case", []byte{0xAB, 0xCD}, &model.Key{Type: "ProtobufEncoded", Key: "abcd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.EncodeKey(tt.in)
			if !equalPtr(got, tt.want) {
				t.Errorf("EncodeKey(%x) = %s, want %s", tt.in, showPtr(got), showPtr(tt.want))
			}
		})
	}
}

func protobufKey(b []byte) *model.Key {
	return &model.Key{Type: model.KeyTypeProtobufEncoded, Key: hex.EncodeToString(b)}
}

func TestDecodeKeyList(t *testing.T) {
	ed := keyField(2, mustHex(t, ed25519Raw))
	ec := keyField(7, mustHex(t, ecdsaRaw))
	tests := []struct {
		name string
		in   []byte
		want [][]byte
		ok   bool
	}{
		{"NULL", nil, nil, true},
		{"empty", []byte{}, nil, true},
		{"one key", keyList(ed), [][]byte{ed}, true},
		{"two keys in order", keyList(ec, ed), [][]byte{ec, ed}, true},
		{"empty key", keyList([]byte{}), [][]byte{{}}, true},
		{"unknown varint field skipped", append(protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1), keyList(ed)...), [][]byte{ed}, true},
		{"unknown bytes field skipped", append(keyField(9, []byte("x")), keyList(ed)...), [][]byte{ed}, true},
		{"field 1 as varint is unknown", mustHex(t, "0805"), nil, true},
		{"group skipped", append(mustHex(t, "1b0801"+"1c"), keyList(ed)...), [][]byte{ed}, true},
		{"truncated length", mustHex(t, "0a0512"), nil, false},
		{"truncated tag varint", []byte{0x8a}, nil, false},
		{"field number 0", []byte{0x02, 0x00}, nil, false},
		{"lone end group", []byte{0x0c}, nil, false},
		{"varint too long", mustHex(t, "08ffffffffffffffffffff01"), nil, false},
		{"key then garbage", append(keyList(ed), 0xff), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := model.DecodeKeyList(tt.in)
			if ok != tt.ok || len(got) != len(tt.want) {
				t.Fatalf("DecodeKeyList(%x) = %x, %v; want %x, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			for i := range got {
				if !bytes.Equal(got[i], tt.want[i]) {
					t.Errorf("key %d = %x, want %x", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestDecodeKeyListThenEncodeKey is the fee_exempt_key_list path: each key of
// the list goes through mapKey.
func TestDecodeKeyListThenEncodeKey(t *testing.T) {
	ed := keyField(2, mustHex(t, ed25519Raw))
	ec := keyField(7, mustHex(t, ecdsaRaw))
	two := keyField(6, keyList(ed, ec))
	keys, ok := model.DecodeKeyList(keyList(ed, ec, two))
	if !ok || len(keys) != 3 {
		t.Fatalf("DecodeKeyList: %x, %v", keys, ok)
	}
	want := []model.Key{
		{Type: "ED25519", Key: ed25519Raw},
		{Type: "ECDSA_SECP256K1", Key: ecdsaRaw},
		{Type: "ProtobufEncoded", Key: hex.EncodeToString(two)},
	}
	for i, k := range keys {
		if got := model.EncodeKey(k); got == nil || *got != want[i] {
			t.Errorf("key %d: EncodeKey = %s, want %s", i, showPtr(got), showPtr(&want[i]))
		}
	}
}

func TestEncodeKeyList(t *testing.T) {
	ed := keyField(2, mustHex(t, ed25519Raw))
	ec := keyField(7, mustHex(t, ecdsaRaw))
	two := keyField(6, keyList(ed, ec))
	edKey := &model.Key{Type: "ED25519", Key: ed25519Raw}
	tests := []struct {
		name string
		in   []byte
		want []*model.Key
	}{
		{"NULL", nil, []*model.Key{}},
		{"empty", []byte{}, []*model.Key{}},
		{"one key", keyList(ed), []*model.Key{edKey}},
		{"mixed keys in order", keyList(ec, ed, two), []*model.Key{{Type: "ECDSA_SECP256K1", Key: ecdsaRaw}, edKey, protobufKey(two)}},
		{"sentinel element is null", keyList([]byte{0x32, 0x00}, ed), []*model.Key{nil, edKey}},
		{"empty element", keyList([]byte{}), []*model.Key{{Type: "ProtobufEncoded", Key: ""}}},
		{"malformed", []byte{0x0a, 0x05, 0x12}, []*model.Key{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.EncodeKeyList(tt.in)
			if got == nil {
				t.Fatalf("EncodeKeyList(%x) = nil, want a (possibly empty) list", tt.in)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("EncodeKeyList(%x) = %s, want %s", tt.in, showPtr(&got), showPtr(&tt.want))
			}
			for i := range got {
				if !equalPtr(got[i], tt.want[i]) {
					t.Errorf("key %d = %s, want %s", i, showPtr(got[i]), showPtr(tt.want[i]))
				}
			}
		})
	}
}

func FuzzEncodeKey(f *testing.F) {
	for _, s := range []string{
		"", "3200", "320000", "1220" + ed25519Raw, "32240a221220" + ed25519Raw, "2a28080112240a221220" + ed25519Raw,
		"3a21" + ecdsaRaw, "32250a233a21" + ecdsaRaw, "2a29080112250a233a21" + ecdsaRaw, "1220" + ed25519Raw + "00",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	prefixes := map[string][]string{
		model.KeyTypeED25519:        {"1220", "32240a221220", "2a28080112240a221220"},
		model.KeyTypeECDSASecp256k1: {"3a21", "32250a233a21", "2a29080112250a233a21"},
	}
	keyLen := map[string]int{model.KeyTypeED25519: 64, model.KeyTypeECDSASecp256k1: 66}
	f.Fuzz(func(t *testing.T, b []byte) {
		k := model.EncodeKey(b)
		h := hex.EncodeToString(b)
		if k == nil {
			if h != "3200" {
				t.Fatalf("EncodeKey(%s) = nil", h)
			}
			return
		}
		switch k.Type {
		case model.KeyTypeProtobufEncoded:
			if k.Key != h {
				t.Fatalf("EncodeKey(%s) = ProtobufEncoded %s", h, k.Key)
			}
			for typ, ps := range prefixes {
				for _, p := range ps {
					if len(h) == len(p)+keyLen[typ] && strings.HasPrefix(h, p) {
						t.Fatalf("EncodeKey(%s) missed the %s shape %s", h, typ, p)
					}
				}
			}
		case model.KeyTypeED25519, model.KeyTypeECDSASecp256k1:
			if len(k.Key) != keyLen[k.Type] {
				t.Fatalf("EncodeKey(%s) = %s key of %d hex", h, k.Type, len(k.Key))
			}
			found := false
			for _, p := range prefixes[k.Type] {
				found = found || h == p+k.Key
			}
			if !found {
				t.Fatalf("EncodeKey(%s) = %s %s, not a known wrapping", h, k.Type, k.Key)
			}
		default:
			t.Fatalf("EncodeKey(%s): type %q", h, k.Type)
		}
	})
}

func FuzzDecodeKeyList(f *testing.F) {
	ed, _ := hex.DecodeString("1220" + ed25519Raw)
	for _, b := range [][]byte{
		nil, keyList(ed), keyList(ed, ed), keyList([]byte{}), {0x0a, 0x05, 0x12}, {0x0c}, {0x1b, 0x08, 0x01, 0x1c},
		append(keyField(9, []byte("x")), keyList(ed)...),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, ok := model.DecodeKeyList(b)
		if !ok {
			if keys != nil {
				t.Fatalf("DecodeKeyList(%x) failed but returned %x", b, keys)
			}
			return
		}
		// the canonical KeyList of the keys found decodes to the same keys
		again, ok := model.DecodeKeyList(keyList(keys...))
		if !ok || len(again) != len(keys) {
			t.Fatalf("DecodeKeyList(%x) = %x; re-encoded gives %x, %v", b, keys, again, ok)
		}
		for i := range keys {
			if !bytes.Equal(keys[i], again[i]) {
				t.Fatalf("key %d: %x then %x", i, keys[i], again[i])
			}
			_ = model.EncodeKey(keys[i])
		}
	})
}

func BenchmarkEncodeKey(b *testing.B) {
	for _, in := range []struct{ name, hex string }{
		{"ED25519", "1220" + ed25519Raw},
		{"ECDSA in a ThresholdKey", "2a29080112250a233a21" + ecdsaRaw},
		{"ProtobufEncoded", "2a4c080212480a221220" + ed25519Raw + "0a221220" + ed25519Raw},
	} {
		key := mustHex(b, in.hex)
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = model.EncodeKey(key)
			}
		})
	}
}
