package seed

import (
	"strconv"

	"github.com/jackc/pgx/v5"
)

// topicColumns and customFeeColumns: a topic is a row of topic and one of
// custom_fee besides its entity row.
var topicColumns = []string{
	"id", "admin_key", "submit_key", "fee_schedule_key", "fee_exempt_key_list", "created_timestamp", "timestamp_range",
}

var customFeeColumns = []string{"entity_id", "fixed_fees", "fractional_fees", "royalty_fees", "timestamp_range"}

var topicMemos = []string{
	"Supply chain events",
	"",
	"IoT sensor feed – building 7",
	"Carbon credit registry ✓",
	"DID document updates",
	"Payments audit log",
	"投票 / vote tallies",
	`memo with "quotes", a \ backslash and a tab	here`,
	"Oracle price feed HBAR/USD",
	"",
	"Shipping container tracking (MSCU)",
	"Game moves 🚀",
}

// topic key kinds, cycled by topic index; topic 0 has an ED25519 admin key
// and nothing else.
var (
	topicAdminKeys  = []int{keyED25519, keyECDSA, keyNull, keyList1ED, keyThreshold2, keyImmutable, keyThreshold1, keyED25519, keyList2, keyContract}
	topicSubmitKeys = []int{keyNull, keyED25519, keyECDSA, keyThreshold2, keyNull, keyList1ED, keyNull, keyED25519}
	scheduleKeys    = []int{keyED25519, keyECDSA, keyThreshold2, keyNull, keyList1ED, keyED25519, keyContract}
)

// topicDeleted is entity.deleted of topic i: true for every tenth, NULL for
// some, never for topic 0.
func topicDeleted(i int) any {
	switch {
	case i%10 == 9:
		return true
	case i%23 == 22:
		return nil
	}
	return false
}

func (g gen) topicKeys(i int) (admin, submit, feeSchedule, feeExempt []byte) {
	r := g.rng(tagTopic, uint64(i), 0)
	admin = makeKey(topicAdminKeys[i%len(topicAdminKeys)], &r)
	submit = makeKey(topicSubmitKeys[i%len(topicSubmitKeys)], &r)
	switch {
	case i%3 == 1:
		feeSchedule = makeKey(keyED25519, &r)
	case i%9 == 5:
		feeSchedule = makeKey(keyECDSA, &r)
	}
	switch {
	case i%13 == 12:
		feeExempt = []byte{} // empty KeyList: renders as []
	case i%5 == 1:
		feeExempt = keyListBody(makeKey(keyED25519, &r))
	case i%5 == 2:
		feeExempt = keyListBody(makeKey(keyED25519, &r), makeKey(keyECDSA, &r))
	case i%5 == 4:
		feeExempt = keyListBody(makeKey(keyThreshold2, &r), makeKey(keyECDSA, &r), makeKey(keyList1ED, &r))
	}
	return
}

func (g gen) topics(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Topics, func(i int) ([]any, error) {
		admin, submit, feeSchedule, feeExempt := g.topicKeys(i)
		created := o.TopicCreatedTimestamp(i)
		return []any{o.TopicID(i), admin, submit, feeSchedule, feeExempt, created, since(created)}, nil
	})
}

// fixedFees is custom_fee.fixed_fees of topic i: `[]` for half the topics,
// NULL for some, else one HBAR fee or an HBAR and a token fee.
func (g gen) fixedFees(o *Options, i int) []byte {
	if i%13 == 7 {
		return nil
	}
	r := g.rng(tagFee, uint64(i), 0)
	fee := func(b []byte, exempt bool, amount, collector int64, token int64) []byte {
		b = append(b, `{"all_collectors_are_exempt":`...)
		b = strconv.AppendBool(b, exempt)
		b = append(b, `,"amount":`...)
		b = strconv.AppendInt(b, amount, 10)
		b = append(b, `,"collector_account_id":`...)
		b = strconv.AppendInt(b, collector, 10)
		b = append(b, `,"denominating_token_id":`...)
		if token == 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, token, 10)
		}
		return append(b, '}')
	}
	b := []byte{'['}
	switch i % 4 {
	case 2:
		b = fee(b, false, int64(1+r.intn(50))*10_000_000, o.AccountID(r.intn(Accounts)), 0)
	case 3:
		b = fee(b, false, int64(1+r.intn(5))*100_000_000, o.AccountID(r.intn(Accounts)), 0)
		b = append(b, ',')
		b = fee(b, i%8 == 7, int64(1+r.intn(1000)), o.AccountID(r.intn(Accounts)), o.TokenID(r.intn(Tokens)))
	}
	return append(b, ']')
}

func (g gen) customFees(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Topics, func(i int) ([]any, error) {
		var fixed any // untyped nil: NULL
		if f := g.fixedFees(o, i); f != nil {
			fixed = f
		}
		return []any{o.TopicID(i), fixed, nil, nil, since(o.TopicCreatedTimestamp(i))}, nil
	})
}
