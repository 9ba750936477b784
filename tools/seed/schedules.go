package seed

import (
	"strconv"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protowire"
)

// scheduleColumns and signatureColumns: a schedule is a row of schedule and
// its signatures rows of transaction_signature besides its entity row.
var scheduleColumns = []string{
	"schedule_id", "consensus_timestamp", "creator_account_id", "payer_account_id", "executed_timestamp",
	"expiration_time", "wait_for_expiry", "transaction_body",
}

var signatureColumns = []string{"consensus_timestamp", "entity_id", "public_key_prefix", "signature", "type"}

var scheduleMemos = []string{"", "Payroll run", "Treasury transfer – Q4 ✓", "multisig approval 承認", "Scheduled topic message"}

// Schedule states, cycled by schedule index.
const (
	schedulePending  = iota // expiration far in the future
	scheduleExecuted        // executed_timestamp set
	scheduleWaiting         // pending, wait_for_expiry
	scheduleExpired         // expiration_time before T0, never executed
	scheduleDeleted         // entity.deleted
	scheduleLegacy          // expiration_time NULL (created before expiries existed)
	scheduleStates
)

type schedule struct {
	ts, creator, payer int64
	executed, expires  any // int64 or nil
	wait               bool
	state              int
	signatures         int
	memo               string
	key                []byte
}

func (g gen) schedule(o *Options, j int) schedule {
	s := schedule{
		ts:         o.ScheduleTimestamp(j),
		creator:    o.AccountID(j*7 + 3),
		state:      j % scheduleStates,
		signatures: (j + 3) % 5, // 0–4; the first schedule has 3
	}
	s.payer = s.creator
	if j%3 != 0 {
		s.payer = o.AccountID(j*11 + 5)
	}
	r := g.rng(tagScheduleKey, uint64(j), 0)
	s.key = makeKey(scheduleKeys[j%len(scheduleKeys)], &r)
	s.memo = scheduleMemos[j%len(scheduleMemos)]
	if j%len(scheduleMemos) == 1 {
		s.memo += " #" + strconv.Itoa(j)
	}
	farFuture := o.base() + 100*year + int64(j)*second
	switch s.state {
	case schedulePending:
		s.expires = farFuture
	case scheduleWaiting:
		s.expires, s.wait = farFuture, true
	case scheduleExecuted:
		s.executed = g.signatureTimestamp(s.ts, j, s.signatures) + second
		if j%12 != 7 {
			s.expires = s.ts + 30*minute
		}
	case scheduleExpired, scheduleDeleted:
		s.expires = s.ts + 30*minute
	}
	return s
}

// signatureTimestamp is the instant of signature k of schedule j: the create
// transaction for k = 0, then one ScheduleSign every ~2 s, so that the
// signatures of a schedule never share a timestamp (their order is stable).
func (g gen) signatureTimestamp(ts int64, j, k int) int64 {
	if k == 0 {
		return ts
	}
	return ts + int64(k)*2*second + int64(g.hash(tagSignature, uint64(j), uint64(k))%uint64(second))
}

// transactionBody is a SchedulableTransactionBody: a crypto transfer or a
// topic message.
func (g gen) transactionBody(o *Options, j int, s *schedule) []byte {
	r := g.rng(tagSchedule, uint64(j), 1)
	b := protowire.AppendTag(nil, 1, protowire.VarintType) // transactionFee
	b = protowire.AppendVarint(b, 100_000_000+uint64(r.intn(100))*1_000_000)
	if s.memo != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType) // memo
		b = protowire.AppendString(b, s.memo)
	}
	if j%2 == 0 || o.Topics == 0 {
		amount := uint64(1+r.intn(10_000)) * 100_000
		aa := func(id int64, amount int64) []byte {
			a := protowire.AppendTag(nil, 1, protowire.BytesType) // AccountAmount.accountID
			a = protowire.AppendBytes(a, appendAccountID(nil, id))
			a = protowire.AppendTag(a, 2, protowire.VarintType) // AccountAmount.amount (sint64)
			return protowire.AppendVarint(a, protowire.EncodeZigZag(amount))
		}
		var tl []byte // TransferList
		tl = protowire.AppendTag(tl, 1, protowire.BytesType)
		tl = protowire.AppendBytes(tl, aa(s.payer, -int64(amount)))
		tl = protowire.AppendTag(tl, 1, protowire.BytesType)
		tl = protowire.AppendBytes(tl, aa(o.AccountID(j*13+1), int64(amount)))
		ct := protowire.AppendTag(nil, 1, protowire.BytesType) // CryptoTransferTransactionBody.transfers
		ct = protowire.AppendBytes(ct, tl)
		b = protowire.AppendTag(b, 9, protowire.BytesType) // cryptoTransfer
		return protowire.AppendBytes(b, ct)
	}
	sm := protowire.AppendTag(nil, 1, protowire.BytesType) // ConsensusSubmitMessageTransactionBody.topicID
	sm = protowire.AppendBytes(sm, appendAccountID(nil, o.TopicID(j%o.Topics)))
	sm = protowire.AppendTag(sm, 2, protowire.BytesType) // message
	sm = protowire.AppendString(sm, "scheduled message #"+strconv.Itoa(j))
	b = protowire.AppendTag(b, 21, protowire.BytesType) // consensusSubmitMessage
	return protowire.AppendBytes(b, sm)
}

func (g gen) schedules(o *Options) pgx.CopyFromSource {
	return pgx.CopyFromSlice(o.Schedules, func(j int) ([]any, error) {
		s := g.schedule(o, j)
		return []any{o.ScheduleID(j), s.ts, s.creator, s.payer, s.executed, s.expires, s.wait,
			g.transactionBody(o, j, &s)}, nil
	})
}

// signatureTypes cycles through every SignaturePair case (2 CONTRACT,
// 3 ED25519, 4 RSA_3072, 5 ECDSA_384, 6 ECDSA_SECP256K1) and NULL (-1).
var signatureTypes = []int16{3, 6, 3, 2, 6, 4, 3, 5, -1, 6}

func (g gen) signatures(o *Options) pgx.CopyFromSource {
	j, k, c := 0, 0, 0 // schedule, its signature, signatures so far
	var s schedule
	if o.Schedules > 0 {
		s = g.schedule(o, 0)
	}
	return pgx.CopyFromFunc(func() ([]any, error) {
		for k >= s.signatures {
			if j++; j >= o.Schedules {
				return nil, nil
			}
			s, k = g.schedule(o, j), 0
		}
		r := g.rng(tagSignature, uint64(j), uint64(k)+1000)
		typ := signatureTypes[c%len(signatureTypes)]
		var prefix, sig []byte
		switch typ {
		case 3:
			prefix, sig = r.appendBytes(nil, 32), r.appendBytes(nil, 64)
		case 6:
			prefix = r.appendBytes([]byte{0x02 | byte(r.next()&1)}, 32)
			sig = r.appendBytes(nil, 64)
		case 4, 5:
			prefix, sig = r.appendBytes(nil, 1+r.intn(6)), r.appendBytes(nil, 64)
		default: // CONTRACT and NULL
			prefix, sig = r.appendBytes(nil, 1+r.intn(6)), r.appendBytes(nil, 32)
		}
		var t any = typ
		if typ < 0 {
			t = nil
		}
		row := []any{g.signatureTimestamp(s.ts, j, k), o.ScheduleID(j), prefix, sig, t}
		k++
		c++
		return row, nil
	})
}
