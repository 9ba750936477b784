package view

import (
	"sync"

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
	Type KeyType
	Key  string
}

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
	return &Key{Type: t, Key: k.Key}
}

func keyOf(b []byte) *Key { return NewKey(model.EncodeKey(b)) }

// entityIDPtr is REST's entityIDPtr: null for NULL and for num 0.
func entityIDPtr(id *model.EntityID) *string {
	if id == nil {
		return nil
	}
	return id.Ptr()
}

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

// TopicMessage is a topic_message row, M (an element of Page.Rows when it
// came in a page). Topic, Chunks and FullMessage need the request's loaders
// and are resolvers.
type TopicMessage struct {
	M    *model.TopicMessage
	Page *Page[model.TopicMessage]
}

func (m TopicMessage) TopicID() string            { return m.M.TopicID.String() }
func (m TopicMessage) SequenceNumber() int64      { return m.M.SequenceNumber }
func (m TopicMessage) ConsensusTimestamp() string { return m.M.ConsensusTimestamp.String() }
func (m TopicMessage) Message(encoding *MessageEncoding) string {
	return encoding.Encode(m.M.Message)
}
func (m TopicMessage) PayerAccountID() *string { return entityIDPtr(m.M.PayerAccountID) }
func (m TopicMessage) RunningHash() string     { return model.Base64(m.M.RunningHash) }
func (m TopicMessage) RunningHashVersion() int { return int(m.M.Version()) }

// ChunkInfo is model.TopicMessage.Chunk.
func (m TopicMessage) ChunkInfo() *ChunkInfo {
	c := m.M.Chunk()
	if c == nil {
		return nil
	}
	t := c.InitialTransactionID
	return &ChunkInfo{
		InitialTransactionID: &TransactionID{
			AccountID: t.AccountID, Nonce: t.Nonce, Scheduled: t.Scheduled, TransactionValidStart: t.ValidStart,
		},
		Number: c.Number,
		Total:  c.Total,
	}
}

// ChunkInfo is REST's chunk_info.
type ChunkInfo struct {
	InitialTransactionID *TransactionID
	Number               int32
	Total                int32
}

// TransactionID is REST's initial_transaction_id.
type TransactionID struct {
	AccountID             *string
	Nonce                 *int32
	Scheduled             *bool
	TransactionValidStart *string
}

// Topic is a topic's topic, entity and custom_fee rows, T (an element of
// Page.Rows when it came in a page). Message and Messages are resolvers.
type Topic struct {
	T    *model.Topic
	Page *Page[model.Topic]
}

func (t Topic) ID() string                  { return t.T.ID.String() }
func (t Topic) Memo() string                { return t.T.Memo }
func (t Topic) Deleted() *bool              { return t.T.Deleted }
func (t Topic) CreatedTimestamp() *string   { return t.T.CreatedTimestamp.Ptr() }
func (t Topic) AdminKey() *Key              { return keyOf(t.T.AdminKey) }
func (t Topic) SubmitKey() *Key             { return keyOf(t.T.SubmitKey) }
func (t Topic) FeeScheduleKey() *Key        { return keyOf(t.T.FeeScheduleKey) }
func (t Topic) AutoRenewAccountID() *string { return entityIDPtr(t.T.AutoRenewAccountID) }
func (t Topic) AutoRenewPeriod() *int64     { return t.T.AutoRenewPeriod }

func (t Topic) Timestamp() *TimestampRange {
	return &TimestampRange{From: t.T.TimestampFrom.Ptr(), To: t.T.TimestampTo.Ptr()}
}

// FeeExemptKeyList is model.EncodeKeyList without the elements REST renders
// as null (the list's elements are non-null here).
func (t Topic) FeeExemptKeyList() []*Key {
	keys := model.EncodeKeyList(t.T.FeeExemptKeyList)
	out := make([]*Key, 0, len(keys))
	for _, k := range keys {
		if k != nil {
			out = append(out, NewKey(k))
		}
	}
	return out
}

func (t Topic) CustomFees() *CustomFees {
	fees := make([]*FixedFee, len(t.T.FixedFees))
	for i := range t.T.FixedFees {
		f := &t.T.FixedFees[i]
		fees[i] = &FixedFee{
			Amount:              f.Amount,
			CollectorAccountID:  entityIDPtr(f.CollectorAccountID),
			DenominatingTokenID: entityIDPtr(f.DenominatingTokenID),
		}
	}
	return &CustomFees{CreatedTimestamp: t.T.CustomFeeFrom.Ptr(), FixedFees: fees}
}

// TimestampRange is a validity range.
type TimestampRange struct {
	From *string
	To   *string
}

// CustomFees is REST's custom_fees.
type CustomFees struct {
	CreatedTimestamp *string
	FixedFees        []*FixedFee
}

// FixedFee is one element of REST's fixed_fees.
type FixedFee struct {
	Amount              int64
	CollectorAccountID  *string
	DenominatingTokenID *string
}

// Schedule is a schedule row with its entity fields and signatures. Status
// needs the clock and is a resolver.
type Schedule struct{ S *model.Schedule }

func (s Schedule) ID() string                 { return s.S.ScheduleID.String() }
func (s Schedule) AdminKey() *Key             { return keyOf(s.S.Key) }
func (s Schedule) ConsensusTimestamp() string { return s.S.ConsensusTimestamp.String() }
func (s Schedule) CreatorAccountID() string   { return s.S.CreatorAccountID.String() }
func (s Schedule) PayerAccountID() string     { return s.S.PayerAccountID.String() }
func (s Schedule) Deleted() *bool             { return s.S.Deleted }
func (s Schedule) ExecutedTimestamp() *string { return s.S.ExecutedTimestamp.Ptr() }
func (s Schedule) ExpirationTime() *string    { return s.S.ExpirationTime.Ptr() }
func (s Schedule) Memo() *string              { return s.S.Memo }
func (s Schedule) TransactionBody() string    { return model.Base64(s.S.TransactionBody) }
func (s Schedule) WaitForExpiry() bool        { return s.S.WaitForExpiry }

// Signatures are REST's signatures: PostgreSQL-style base64 and type names.
func (s Schedule) Signatures() []*ScheduleSignature {
	out := make([]*ScheduleSignature, len(s.S.Signatures))
	for i := range s.S.Signatures {
		sig := &s.S.Signatures[i]
		out[i] = &ScheduleSignature{
			ConsensusTimestamp: sig.ConsensusTimestamp.String(),
			PublicKeyPrefix:    model.PostgresBase64(sig.PublicKeyPrefix),
			Signature:          model.PostgresBase64(sig.Signature),
			Type:               sig.TypeName(),
		}
	}
	return out
}

// ScheduleSignature is one of REST's signatures.
type ScheduleSignature struct {
	ConsensusTimestamp string
	PublicKeyPrefix    string
	Signature          string
	Type               string
}

// ActivityBucket is one interval of Topic.activity.
type ActivityBucket struct {
	Start, End model.Timestamp
	Count      int64
}

func (b ActivityBucket) From() string    { return b.Start.String() }
func (b ActivityBucket) To() string      { return b.End.String() }
func (b ActivityBucket) Messages() int64 { return b.Count }
