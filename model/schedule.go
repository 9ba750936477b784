package model

import "math"

// Schedule is a scheduled transaction with its entity's admin key, memo and
// deleted flag; HasEntity is false when no entity row exists.
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

// Signature is one signature given to a schedule (transaction_signature).
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

// ScheduleStatus is the lifecycle state the GraphQL face reports.
type ScheduleStatus string

const (
	SchedulePending  ScheduleStatus = "PENDING"
	ScheduleExecuted ScheduleStatus = "EXECUTED"
	ScheduleDeleted  ScheduleStatus = "DELETED"
	ScheduleExpired  ScheduleStatus = "EXPIRED"
)

// DefaultScheduleLifetime is the network's schedule lifetime (1800 s) used when
// a schedule has no explicit expiration time.
const DefaultScheduleLifetime = Timestamp(1800 * 1_000_000_000)

// Status: executed, else deleted, else expired once the expiration time (or
// consensus time plus the lifetime) has passed, else pending.
func (s *Schedule) Status(now, lifetime Timestamp) ScheduleStatus {
	switch {
	case s.ExecutedTimestamp != nil:
		return ScheduleExecuted
	case s.Deleted != nil && *s.Deleted:
		return ScheduleDeleted
	}
	base, delay := s.ConsensusTimestamp, lifetime
	if s.ExpirationTime != nil {
		base, delay = *s.ExpirationTime, 0
	}
	if reached(now, base, delay) {
		return ScheduleExpired
	}
	return SchedulePending
}

// IsFinal is the mirror node's rule for long-caching a schedule (docs/reference/behavior.md
// §7): executed or deleted, or past its expiry with a margin: 31 minutes after
// consensus without an expiration time, 60 s after an explicit one.
func (s *Schedule) IsFinal(now Timestamp) bool {
	if s.ExecutedTimestamp != nil || (s.Deleted != nil && *s.Deleted) {
		return true
	}
	if s.ExpirationTime == nil {
		return reached(now, s.ConsensusTimestamp, 1_860_000_000_000)
	}
	return reached(now, *s.ExpirationTime, 60_000_000_000)
}

// reached reports now >= t+d without wrapping around int64: the mirror node
// compares BigInts, so an expiry near the int64 limit stays in the future.
func reached(now, t, d Timestamp) bool {
	switch {
	case d > 0 && t > math.MaxInt64-d:
		return false
	case d < 0 && t < math.MinInt64-d:
		return true
	}
	return now >= t+d
}
