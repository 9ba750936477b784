package model

// TopicMessage is one message of a topic, as the topic_message table holds it.
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
// rows carry no version; docs/reference/behavior.md §2.4).
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
	// Total is nil where chunk_total is NULL: both faces render null.
	Total *int32
}

// Chunk derives chunk_info: the protobuf initial transaction id when present,
// else the legacy payer and valid-start columns.
func (m *TopicMessage) Chunk() *ChunkInfo {
	if m.ChunkNum == nil {
		return nil
	}
	c := &ChunkInfo{Number: *m.ChunkNum, Total: m.ChunkTotal}
	if m.InitialTransactionID != nil {
		c.InitialTransactionID = DecodeTransactionID(m.InitialTransactionID)
	} else {
		c.InitialTransactionID = LegacyTransactionID(m.PayerAccountID, m.ValidStartTimestamp)
	}
	return c
}
