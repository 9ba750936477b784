package model

import (
	"encoding/hex"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Key types as the REST face names them (`_type`).
const (
	KeyTypeED25519         = "ED25519"
	KeyTypeECDSASecp256k1  = "ECDSA_SECP256K1"
	KeyTypeProtobufEncoded = "ProtobufEncoded"
)

// Key is a protobuf Key reduced to the mirror node's {_type, key} form.
type Key struct {
	Type string
	Key  string
}

// immutableKey is a Key holding an empty KeyList: the ledger's way of saying
// "no key, immutable", rendered as null.
var immutableKey = []byte{0x32, 0x00}

var (
	ed25519Prefixes = []string{"1220", "32240a221220", "2a28080112240a221220"}
	ecdsaPrefixes   = []string{"3a21", "32250a233a21", "2a29080112250a233a21"}
)

// EncodeKey is mapKey / encodeKey (docs/reference/behavior.md §5.3): a primitive key, a
// one-element KeyList or a 1-of-1 ThresholdKey unwraps to its raw key; any other
// shape stays protobuf-encoded hex. nil bytes give nil.
func EncodeKey(b []byte) *Key {
	if b == nil || string(b) == string(immutableKey) {
		return nil
	}
	h := hex.EncodeToString(b)
	if k, ok := unwrapKey(h, ed25519Prefixes, 64); ok {
		return &Key{Type: KeyTypeED25519, Key: k}
	}
	if k, ok := unwrapKey(h, ecdsaPrefixes, 66); ok {
		return &Key{Type: KeyTypeECDSASecp256k1, Key: k}
	}
	return &Key{Type: KeyTypeProtobufEncoded, Key: h}
}

func unwrapKey(h string, prefixes []string, keyLen int) (string, bool) {
	for _, p := range prefixes {
		if len(h) == len(p)+keyLen && strings.HasPrefix(h, p) {
			return h[len(p):], true
		}
	}
	return "", false
}

// DecodeKeyList splits a protobuf KeyList into its keys, each re-serialised
// as Key bytes. Empty input is an empty list; bytes that are not a KeyList
// report ok=false.
func DecodeKeyList(b []byte) (keys [][]byte, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			keys = append(keys, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, false
		}
		b = b[m:]
	}
	return keys, true
}

// EncodeKeyList maps each key of a protobuf KeyList through EncodeKey, as
// rest-java does for a topic's fee_exempt_key_list; an element may be nil
// (the immutability sentinel). NULL, empty or malformed bytes give an empty list.
func EncodeKeyList(b []byte) []*Key {
	raw, ok := DecodeKeyList(b)
	if !ok {
		return []*Key{}
	}
	keys := make([]*Key, len(raw))
	for i, k := range raw {
		keys[i] = EncodeKey(k)
	}
	return keys
}
