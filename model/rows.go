package model

// TopicMessage is a topic_message row.
type TopicMessage struct {
	ConsensusTimestamp   Timestamp
	Message              []byte
	RunningHash          []byte
	SequenceNumber       int64
	RunningHashVersion   *int16
	ChunkNum             *int32
	ChunkTotal           *int32
	PayerAccountID       *EntityID
	ValidStartTimestamp  *Timestamp
	TopicID              EntityID
	InitialTransactionID []byte
}

// DefaultRunningHashVersion is reported when the column is NULL (block-stream
// rows carry no version; behavior.md §2.4).
const DefaultRunningHashVersion = 3

// Version is the running hash version as both faces report it.
func (m *TopicMessage) Version() int16 {
	if m.RunningHashVersion == nil {
		return DefaultRunningHashVersion
	}
	return *m.RunningHashVersion
}

// ChunkInfo is nil for unchunked messages.
type ChunkInfo struct {
	InitialTransactionID TransactionID
	Number               int32
	Total                int32
}

// Chunk derives chunk_info: the protobuf initial transaction id when present,
// else the legacy payer and valid-start columns.
func (m *TopicMessage) Chunk() *ChunkInfo {
	if m.ChunkNum == nil {
		return nil
	}
	c := &ChunkInfo{Number: *m.ChunkNum}
	if m.ChunkTotal != nil {
		c.Total = *m.ChunkTotal
	}
	if m.InitialTransactionID != nil {
		c.InitialTransactionID = DecodeTransactionID(m.InitialTransactionID)
	} else {
		c.InitialTransactionID = LegacyTransactionID(m.PayerAccountID, m.ValidStartTimestamp)
	}
	return c
}

// Topic joins the topic, entity and custom_fee rows of one topic. The Has*
// flags say which rows exist: the details route answers 404 with a different
// detail for each missing one (behavior.md §5.2).
type Topic struct {
	ID                 EntityID
	HasTopic           bool
	HasEntity          bool
	HasCustomFee       bool
	AdminKey           []byte
	SubmitKey          []byte
	FeeScheduleKey     []byte
	FeeExemptKeyList   []byte
	AutoRenewAccountID *EntityID
	AutoRenewPeriod    *int64
	CreatedTimestamp   *Timestamp
	Deleted            *bool
	Memo               string
	TimestampFrom      *Timestamp
	TimestampTo        *Timestamp
	CustomFeeFrom      *Timestamp
	FixedFees          []FixedFee
}

// FixedFee is one element of custom_fee.fixed_fees.
type FixedFee struct {
	Amount              int64     `json:"amount"`
	CollectorAccountID  *EntityID `json:"collector_account_id"`
	DenominatingTokenID *EntityID `json:"denominating_token_id"`
}

// Schedule is a schedule row with its entity's admin key, memo and deleted
// flag; HasEntity is false when no entity row exists.
type Schedule struct {
	ScheduleID         EntityID
	ConsensusTimestamp Timestamp
	CreatorAccountID   EntityID
	PayerAccountID     EntityID
	ExecutedTimestamp  *Timestamp
	ExpirationTime     *Timestamp
	TransactionBody    []byte
	WaitForExpiry      bool
	HasEntity          bool
	Deleted            *bool
	Key                []byte
	Memo               *string
	Signatures         []Signature
}

// Signature is a transaction_signature row of a schedule.
type Signature struct {
	EntityID           EntityID
	ConsensusTimestamp Timestamp
	PublicKeyPrefix    []byte
	Signature          []byte
	Type               *int16
}

// TypeName maps the SignaturePair case code to its name.
func (s *Signature) TypeName() string {
	if s.Type == nil {
		return "UNKNOWN"
	}
	switch *s.Type {
	case 2:
		return "CONTRACT"
	case 3:
		return "ED25519"
	case 4:
		return "RSA_3072"
	case 5:
		return "ECDSA_384"
	case 6:
		return "ECDSA_SECP256K1"
	}
	return "UNKNOWN"
}
