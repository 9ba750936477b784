package rest

import (
	"encoding/base64"

	"mirrorql/model"
)

// message writes a TopicMessage object (docs/reference/behavior.md §2.4).
func (j *jsonBuf) message(m *model.TopicMessage, utf8 bool) {
	j.raw(`{"chunk_info":`)
	if c := m.Chunk(); c == nil {
		j.null()
	} else {
		t := &c.InitialTransactionID
		j.raw(`{"initial_transaction_id":{"account_id":`)
		j.strPtr(t.AccountID)
		j.raw(`,"nonce":`)
		if t.Nonce == nil {
			j.null()
		} else {
			j.int(int64(*t.Nonce))
		}
		j.raw(`,"scheduled":`)
		j.boolPtr(t.Scheduled)
		j.raw(`,"transaction_valid_start":`)
		j.strPtr(t.ValidStart)
		j.raw(`},"number":`)
		j.int(int64(c.Number))
		j.raw(`,"total":`)
		if c.Total == nil {
			j.null()
		} else {
			j.int(int64(*c.Total))
		}
		j.b = append(j.b, '}')
	}
	j.raw(`,"consensus_timestamp":`)
	j.timestamp(m.ConsensusTimestamp)
	j.raw(`,"message":`)
	if utf8 {
		j.str(model.DecodeUTF8(m.Message))
	} else {
		j.base64(m.Message)
	}
	j.raw(`,"payer_account_id":`)
	j.entityIDPtr(m.PayerAccountID)
	j.raw(`,"running_hash":`)
	j.base64(m.RunningHash)
	j.raw(`,"running_hash_version":`)
	j.int(int64(m.Version()))
	j.raw(`,"sequence_number":`)
	j.int(m.SequenceNumber)
	j.raw(`,"topic_id":`)
	j.entityID(m.TopicID)
	j.b = append(j.b, '}')
}

// base64 appends standard padded base64 without an intermediate string;
// its alphabet needs no JSON escaping.
func (j *jsonBuf) base64(b []byte) {
	j.b = append(j.b, '"')
	j.b = base64.StdEncoding.AppendEncode(j.b, b)
	j.b = append(j.b, '"')
}

// schedule writes a Schedule object (docs/reference/behavior.md §6.3). On the list route a
// schedule without an entity row has no `deleted` and `memo` keys; the single
// lookup's left join gives them as null.
func (j *jsonBuf) schedule(s *model.Schedule, omitMissingEntity bool) {
	j.raw(`{"admin_key":`)
	j.keyObject(model.EncodeKey(s.Key))
	withEntity := s.HasEntity || !omitMissingEntity
	if withEntity {
		j.raw(`,"deleted":`)
		j.boolPtr(s.Deleted)
	}
	j.raw(`,"consensus_timestamp":`)
	j.timestamp(s.ConsensusTimestamp)
	j.raw(`,"creator_account_id":`)
	j.entityID(s.CreatorAccountID)
	j.raw(`,"executed_timestamp":`)
	j.timestampPtr(s.ExecutedTimestamp)
	j.raw(`,"expiration_time":`)
	j.timestampPtr(s.ExpirationTime)
	if withEntity {
		j.raw(`,"memo":`)
		j.strPtr(s.Memo)
	}
	j.raw(`,"payer_account_id":`)
	j.entityID(s.PayerAccountID)
	j.raw(`,"schedule_id":`)
	j.entityID(s.ScheduleID)
	j.raw(`,"signatures":[`)
	for i := range s.Signatures {
		sig := &s.Signatures[i]
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.raw(`{"consensus_timestamp":`)
		j.timestamp(sig.ConsensusTimestamp)
		j.raw(`,"public_key_prefix":`)
		j.str(model.PostgresBase64(sig.PublicKeyPrefix))
		j.raw(`,"signature":`)
		j.str(model.PostgresBase64(sig.Signature))
		j.raw(`,"type":`)
		j.str(sig.TypeName())
		j.b = append(j.b, '}')
	}
	j.raw(`],"transaction_body":`)
	j.base64(s.TransactionBody)
	j.raw(`,"wait_for_expiry":`)
	j.bool(s.WaitForExpiry)
	j.b = append(j.b, '}')
}

// topic writes the rest-java Topic object (docs/reference/behavior.md §5.3), which renders
// timestamp 0 as "0.0".
func (j *jsonBuf) topic(t *model.Topic) {
	javaTS := func(ts *model.Timestamp) {
		if ts == nil {
			j.null()
			return
		}
		j.str(ts.JavaString())
	}
	j.raw(`{"admin_key":`)
	j.keyObject(model.EncodeKey(t.AdminKey))
	j.raw(`,"auto_renew_account":`)
	j.entityIDPtr(t.AutoRenewAccountID)
	j.raw(`,"auto_renew_period":`)
	if t.AutoRenewPeriod == nil {
		j.null()
	} else {
		j.int(*t.AutoRenewPeriod)
	}
	j.raw(`,"created_timestamp":`)
	javaTS(t.CreatedTimestamp)
	j.raw(`,"custom_fees":{"created_timestamp":`)
	javaTS(t.CustomFeeFrom)
	j.raw(`,"fixed_fees":[`)
	for i, f := range t.FixedFees {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.raw(`{"amount":`)
		j.int(f.Amount)
		j.raw(`,"collector_account_id":`)
		j.entityIDPtr(f.CollectorAccountID)
		j.raw(`,"denominating_token_id":`)
		j.entityIDPtr(f.DenominatingTokenID)
		j.b = append(j.b, '}')
	}
	j.raw(`]},"deleted":`)
	j.boolPtr(t.Deleted)
	j.raw(`,"fee_exempt_key_list":[`)
	for i, k := range model.EncodeKeyList(t.FeeExemptKeyList) {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.keyObject(k)
	}
	j.raw(`],"fee_schedule_key":`)
	j.keyObject(model.EncodeKey(t.FeeScheduleKey))
	j.raw(`,"memo":`)
	j.str(t.Memo)
	j.raw(`,"submit_key":`)
	j.keyObject(model.EncodeKey(t.SubmitKey))
	j.raw(`,"timestamp":{"from":`)
	javaTS(t.TimestampFrom)
	j.raw(`,"to":`)
	javaTS(t.TimestampTo)
	j.raw(`},"topic_id":`)
	j.entityID(t.ID)
	j.b = append(j.b, '}')
}
