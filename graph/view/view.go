package view

import (
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"mirrorql/model"
)

// MessageEncoding is the MessageEncoding enum.
type MessageEncoding string

const (
	EncodingBase64 MessageEncoding = "BASE64"
	EncodingUTF8   MessageEncoding = "UTF8"
)

// Encode renders message bytes as REST does for the encoding (nil is the
// default, base64).
func (e *MessageEncoding) Encode(b []byte) string {
	if e != nil && *e == EncodingUTF8 {
		return model.DecodeUTF8(b)
	}
	return model.Base64(b)
}

// KeyType is the KeyType enum.
type KeyType string

const (
	KeyED25519         KeyType = "ED25519"
	KeyECDSASecp256k1  KeyType = "ECDSA_SECP256K1"
	KeyProtobufEncoded KeyType = "PROTOBUF_ENCODED"
)

// Key is REST's {_type, key}.
type Key struct {
	typ KeyType
	key String
}

func (k *Key) Type() *KeyType { return &k.typ }
func (k *Key) Key() *String   { return &k.key }

// NewKey maps model.EncodeKey's result; nil stays nil.
func NewKey(k *model.Key) *Key {
	if k == nil {
		return nil
	}
	t := KeyProtobufEncoded
	switch k.Type {
	case model.KeyTypeED25519:
		t = KeyED25519
	case model.KeyTypeECDSASecp256k1:
		t = KeyECDSASecp256k1
	}
	return &Key{typ: t, key: String(k.Key)}
}

func keyOf(b []byte) *Key { return NewKey(model.EncodeKey(b)) }

// Page is the list a node came in (nil for a single lookup). The first
// resolver of a nested field to run on one node of the page starts that
// field's loads for every node at once, so that they join one batch however
// the executor schedules the nodes' resolvers.
type Page[T any] struct {
	Rows   []T
	primed sync.Map // keys already started on this page
}

// FirstTime reports whether this is the first call with key on the page (a
// nil page has no siblings to start loads for).
func (p *Page[T]) FirstTime(key string) bool {
	if p == nil {
		return false
	}
	_, seen := p.primed.LoadOrStore(key, struct{}{})
	return !seen
}

// TopicMessage shows the topic_message row Row (an element of Page.Rows
// when it came in a page). Topic, Chunks and FullMessage need the request's loaders
// and are resolvers.
type TopicMessage struct {
	Row  *model.TopicMessage
	Page *Page[model.TopicMessage]
	// Selection is what to write of it when it is not written as the value
	// of a field (a subscription's events; render.go).
	Selection ast.SelectionSet
}

// defaultVersion is what RunningHashVersion points to for a row without one.
var defaultVersion = Short(model.DefaultRunningHashVersion)

func (m TopicMessage) TopicID() *EntityID             { return (*EntityID)(&m.Row.TopicID) }
func (m TopicMessage) SequenceNumber() *Long          { return (*Long)(&m.Row.SequenceNumber) }
func (m TopicMessage) ConsensusTimestamp() *Timestamp { return (*Timestamp)(&m.Row.ConsensusTimestamp) }
func (m TopicMessage) Message(encoding *MessageEncoding) *Text {
	return &Text{Bytes: m.Row.Message, Encoding: encoding}
}
func (m TopicMessage) PayerAccountID() *EntityID { return entityIDOf(m.Row.PayerAccountID) }
func (m TopicMessage) RunningHash() *Base64      { return (*Base64)(&m.Row.RunningHash) }
func (m TopicMessage) RunningHashVersion() *Short {
	if m.Row.RunningHashVersion == nil {
		return &defaultVersion
	}
	return (*Short)(m.Row.RunningHashVersion)
}

// ChunkInfo is model.TopicMessage.Chunk.
func (m TopicMessage) ChunkInfo() *ChunkInfo {
	c := m.Row.Chunk()
	if c == nil {
		return nil
	}
	return &ChunkInfo{number: Int(c.Number), total: c.Total, initial: TransactionID{c.InitialTransactionID}}
}

// ChunkInfo is REST's chunk_info.
type ChunkInfo struct {
	number  Int
	total   *int32
	initial TransactionID
}

func (c *ChunkInfo) Number() *Int                         { return &c.number }
func (c *ChunkInfo) Total() *Int                          { return (*Int)(c.total) }
func (c *ChunkInfo) InitialTransactionID() *TransactionID { return &c.initial }

// TransactionID is REST's initial_transaction_id.
type TransactionID struct{ id model.TransactionID }

func (t *TransactionID) AccountID() *String             { return stringOf(t.id.AccountID) }
func (t *TransactionID) Nonce() *Int                    { return (*Int)(t.id.Nonce) }
func (t *TransactionID) Scheduled() *Bool               { return boolOf(t.id.Scheduled) }
func (t *TransactionID) TransactionValidStart() *String { return stringOf(t.id.ValidStart) }

// Topic shows Row, a topic's topic, entity and custom_fee rows (an element
// of Page.Rows when it came in a page). Message and Messages are resolvers.
type Topic struct {
	Row  *model.Topic
	Page *Page[model.Topic]
}

func (t Topic) ID() *EntityID                 { return (*EntityID)(&t.Row.ID) }
func (t Topic) Memo() *String                 { return (*String)(&t.Row.Memo) }
func (t Topic) Deleted() *Bool                { return boolOf(t.Row.Deleted) }
func (t Topic) CreatedTimestamp() *Timestamp  { return timestampOf(t.Row.CreatedTimestamp) }
func (t Topic) AdminKey() *Key                { return keyOf(t.Row.AdminKey) }
func (t Topic) SubmitKey() *Key               { return keyOf(t.Row.SubmitKey) }
func (t Topic) FeeScheduleKey() *Key          { return keyOf(t.Row.FeeScheduleKey) }
func (t Topic) AutoRenewAccountID() *EntityID { return entityIDOf(t.Row.AutoRenewAccountID) }
func (t Topic) AutoRenewPeriod() *Long        { return longOf(t.Row.AutoRenewPeriod) }
func (t Topic) Timestamp() *TimestampRange    { return (*TimestampRange)(t.Row) }

// FeeExemptKeyList is model.EncodeKeyList without the elements REST renders
// as null (the list's elements are non-null here).
func (t Topic) FeeExemptKeyList() []*Key {
	keys := model.EncodeKeyList(t.Row.FeeExemptKeyList)
	out := make([]*Key, 0, len(keys))
	for _, k := range keys {
		if k != nil {
			out = append(out, NewKey(k))
		}
	}
	return out
}

func (t Topic) CustomFees() *CustomFees { return &CustomFees{t.Row} }

// TimestampRange is a topic's validity range, its TimestampFrom and
// TimestampTo.
type TimestampRange model.Topic

func (r *TimestampRange) From() *Timestamp { return timestampOf(r.TimestampFrom) }
func (r *TimestampRange) To() *Timestamp   { return timestampOf(r.TimestampTo) }

// CustomFees is REST's custom_fees: a topic's CustomFeeFrom and FixedFees.
type CustomFees struct{ topic *model.Topic }

func (c *CustomFees) CreatedTimestamp() *Timestamp { return timestampOf(c.topic.CustomFeeFrom) }

func (c *CustomFees) FixedFees() []*FixedFee {
	fees := make([]FixedFee, len(c.topic.FixedFees))
	out := make([]*FixedFee, len(fees))
	for i := range fees {
		fees[i] = FixedFee{&c.topic.FixedFees[i]}
		out[i] = &fees[i]
	}
	return out
}

// FixedFee is one element of REST's fixed_fees.
type FixedFee struct{ fee *model.FixedFee }

func (f *FixedFee) Amount() *Long                  { return (*Long)(&f.fee.Amount) }
func (f *FixedFee) CollectorAccountID() *EntityID  { return entityIDOf(f.fee.CollectorAccountID) }
func (f *FixedFee) DenominatingTokenID() *EntityID { return entityIDOf(f.fee.DenominatingTokenID) }

// ActivityBucket is one interval of Topic.activity.
type ActivityBucket struct {
	Start, End model.Timestamp
	Count      int64
}

func (b *ActivityBucket) From() *Timestamp { return (*Timestamp)(&b.Start) }
func (b *ActivityBucket) To() *Timestamp   { return (*Timestamp)(&b.End) }
func (b *ActivityBucket) Messages() *Long  { return (*Long)(&b.Count) }
