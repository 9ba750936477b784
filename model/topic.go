package model

// Topic is one topic as its topic, entity and custom_fee rows describe it. The Has*
// flags say which rows exist: the details route answers 404 with a different
// detail for each missing one (docs/reference/behavior.md §5.2).
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
	Amount              int64
	CollectorAccountID  *EntityID
	DenominatingTokenID *EntityID
}
