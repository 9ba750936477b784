package model

import "google.golang.org/protobuf/encoding/protowire"

// TransactionID is the chunk_info.initial_transaction_id object. Nonce and
// Scheduled are nil for legacy rows built from columns (docs/reference/behavior.md §2.4).
type TransactionID struct {
	AccountID  *string
	Nonce      *int32
	Scheduled  *bool
	ValidStart *string
}

// DecodeTransactionID reads protobuf TransactionID bytes: fields
// transactionValidStart(1){seconds(1), nanos(2)}, accountID(2){shard(1),
// realm(2), num(3) | alias(4)}, scheduled(3), nonce(4). Absent fields take proto
// defaults. Malformed bytes decode as far as they go: an API read must not fail
// on them. A field sent with an unexpected wire type is skipped, as protobuf
// parsers skip unknown fields.
//
// transaction_valid_start is the mirror node's `${seconds}.${nanos padded to 9}`
// of the two proto fields, not a nanosecond sum: it cannot overflow and keeps
// the sign of negative seconds (docs/reference/behavior.md §2.4).
func DecodeTransactionID(b []byte) TransactionID {
	var seconds, nanos, shard, realm, num int64
	var scheduled bool
	var nonce int32
	walkFields(b, func(f protowire.Number, typ protowire.Type, v uint64, sub []byte) {
		switch {
		case f == 1 && typ == protowire.BytesType:
			walkFields(sub, func(f protowire.Number, typ protowire.Type, v uint64, _ []byte) {
				if typ != protowire.VarintType {
					return
				}
				switch f {
				case 1:
					seconds = int64(v)
				case 2:
					nanos = int64(int32(v))
				}
			})
		case f == 2 && typ == protowire.BytesType:
			walkFields(sub, func(f protowire.Number, typ protowire.Type, v uint64, _ []byte) {
				switch {
				case f == 1 && typ == protowire.VarintType:
					shard = int64(v)
				case f == 2 && typ == protowire.VarintType:
					realm = int64(v)
				case f == 3 && typ == protowire.VarintType:
					num = int64(v)
				case f == 4 && typ == protowire.BytesType:
					// alias and accountNum are a oneof: the last one read wins
					num = 0
				}
			})
		case f == 3 && typ == protowire.VarintType:
			scheduled = v != 0
		case f == 4 && typ == protowire.VarintType:
			nonce = int32(v)
		}
	})
	var account *string
	if num != 0 {
		s := formatInts(shard, realm, num)
		account = &s
	}
	start := formatValidStart(seconds, nanos)
	return TransactionID{AccountID: account, Nonce: &nonce, Scheduled: &scheduled, ValidStart: &start}
}

// LegacyTransactionID is built from the payer and valid-start columns of rows
// written before initial_transaction_id existed.
func LegacyTransactionID(payer *EntityID, validStart *Timestamp) TransactionID {
	var account *string
	if payer != nil {
		account = payer.StringPtr()
	}
	return TransactionID{AccountID: account, ValidStart: validStart.StringPtr()}
}

func formatInts(a, b, c int64) string {
	buf := make([]byte, 0, 24)
	buf = appendInt(buf, a)
	buf = append(buf, '.')
	buf = appendInt(buf, b)
	buf = append(buf, '.')
	return string(appendInt(buf, c))
}

// formatValidStart is `${seconds}.${String(nanos).padStart(9, '0')}`.
func formatValidStart(seconds, nanos int64) string {
	buf := appendInt(make([]byte, 0, 24), seconds)
	buf = append(buf, '.')
	var tmp [20]byte
	n := appendInt(tmp[:0], nanos)
	for i := len(n); i < 9; i++ {
		buf = append(buf, '0')
	}
	return string(append(buf, n...))
}

// walkFields calls fn for each varint (v) or length-delimited (sub) field,
// with its wire type; other wire types are skipped.
func walkFields(b []byte, fn func(f protowire.Number, typ protowire.Type, v uint64, sub []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return
			}
			fn(num, typ, v, nil)
			b = b[m:]
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return
			}
			fn(num, typ, 0, v)
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return
			}
			b = b[m:]
		}
	}
}
