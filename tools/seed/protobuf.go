package seed

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Key kinds, as protobuf Key bytes (docs/reference/behavior.md §5.3).
const (
	keyNull       = iota // NULL column
	keyED25519           // 0x1220 + 32 bytes
	keyECDSA             // 0x3a21 + 33 bytes (compressed secp256k1)
	keyList1ED           // KeyList of one ED25519 key: renders as ED25519
	keyThreshold1        // 1-of-1 ThresholdKey of an ECDSA key: renders as ECDSA_SECP256K1
	keyThreshold2        // 2-of-3 ThresholdKey: ProtobufEncoded
	keyList2             // KeyList of ED25519 + ECDSA: ProtobufEncoded
	keyContract          // contractID key: ProtobufEncoded
	keyImmutable         // 0x3200, an empty KeyList: renders as null
)

func appendED25519(b []byte, r *rng) []byte {
	b = append(b, 0x12, 0x20)
	return r.appendBytes(b, 32)
}

func appendECDSA(b []byte, r *rng) []byte {
	b = append(b, 0x3a, 0x21, 0x02|byte(r.next()&1))
	return r.appendBytes(b, 32)
}

// keyListBody is a KeyList message: repeated Key keys = 1.
func keyListBody(keys ...[]byte) []byte {
	var b []byte
	for _, k := range keys {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, k)
	}
	return b
}

func makeKey(kind int, r *rng) []byte {
	switch kind {
	case keyED25519:
		return appendED25519(nil, r)
	case keyECDSA:
		return appendECDSA(nil, r)
	case keyList1ED:
		b := protowire.AppendTag(nil, 6, protowire.BytesType) // Key.keyList
		return protowire.AppendBytes(b, keyListBody(appendED25519(nil, r)))
	case keyThreshold1, keyThreshold2:
		threshold, keys := uint64(1), [][]byte{appendECDSA(nil, r)}
		if kind == keyThreshold2 {
			threshold, keys = 2, [][]byte{appendED25519(nil, r), appendECDSA(nil, r), appendED25519(nil, r)}
		}
		t := protowire.AppendTag(nil, 1, protowire.VarintType) // ThresholdKey.threshold
		t = protowire.AppendVarint(t, threshold)
		t = protowire.AppendTag(t, 2, protowire.BytesType) // ThresholdKey.keys
		t = protowire.AppendBytes(t, keyListBody(keys...))
		b := protowire.AppendTag(nil, 5, protowire.BytesType) // Key.thresholdKey
		return protowire.AppendBytes(b, t)
	case keyList2:
		b := protowire.AppendTag(nil, 6, protowire.BytesType)
		return protowire.AppendBytes(b, keyListBody(appendED25519(nil, r), appendECDSA(nil, r)))
	case keyContract:
		c := protowire.AppendTag(nil, 3, protowire.VarintType) // ContractID.contractNum
		c = protowire.AppendVarint(c, 5000+uint64(r.intn(1000)))
		b := protowire.AppendTag(nil, 1, protowire.BytesType) // Key.contractID
		return protowire.AppendBytes(b, c)
	case keyImmutable:
		return []byte{0x32, 0x00}
	}
	return nil
}

// appendAccountID appends the fields of an AccountID (or TopicID: same
// numbers) message for an encoded id; proto3 leaves zero fields out.
func appendAccountID(b []byte, id int64) []byte {
	shard, realm, num := uint64(id)>>54&0x3ff, uint64(id)>>38&0xffff, uint64(id)&(1<<38-1)
	for f, v := range [...]uint64{shard, realm, num} {
		if v != 0 {
			b = protowire.AppendTag(b, protowire.Number(f+1), protowire.VarintType)
			b = protowire.AppendVarint(b, v)
		}
	}
	return b
}

// appendTransactionID appends a TransactionID message (docs/reference/behavior.md §2.4).
func appendTransactionID(b []byte, validStart, payer int64, scheduled bool, nonce int32) []byte {
	var ts [24]byte
	t := protowire.AppendTag(ts[:0], 1, protowire.VarintType) // Timestamp.seconds
	t = protowire.AppendVarint(t, uint64(validStart/second))
	if n := validStart % second; n != 0 {
		t = protowire.AppendTag(t, 2, protowire.VarintType) // Timestamp.nanos
		t = protowire.AppendVarint(t, uint64(n))
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType) // transactionValidStart
	b = protowire.AppendBytes(b, t)
	var as [32]byte
	b = protowire.AppendTag(b, 2, protowire.BytesType) // accountID
	b = protowire.AppendBytes(b, appendAccountID(as[:0], payer))
	if scheduled {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	if nonce != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(nonce))
	}
	return b
}
