package seed

import (
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// entityColumns: the entity table holds a row for every account, token,
// topic and schedule.
var entityColumns = []string{
	"id", "num", "realm", "shard", "type", "memo", "key", "created_timestamp", "timestamp_range", "deleted",
	"auto_renew_account_id", "auto_renew_period", "expiration_timestamp", "balance", "balance_timestamp",
	"receiver_sig_required", "max_automatic_token_associations",
}

// since is the int8range [lower,).
func since(lower int64) pgtype.Range[int64] {
	return pgtype.Range[int64]{Lower: lower, LowerType: pgtype.Inclusive, UpperType: pgtype.Unbounded, Valid: true}
}

func nullable(v int64, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func (g gen) entities(o *Options) pgx.CopyFromSource {
	nTopics, nSchedules := o.Topics, o.Schedules
	n := Accounts + Tokens + nTopics + nSchedules
	t0 := o.base()
	return pgx.CopyFromSlice(n, func(k int) ([]any, error) {
		switch {
		case k < Accounts:
			a := k
			r := g.rng(tagAccount, uint64(a), 0)
			created := t0 - 90*day + int64(a)*hour + int64(r.next()%uint64(second))
			memo := ""
			if a%10 == 0 {
				memo = "account " + strconv.Itoa(a) + " – treasury"
			}
			return []any{o.AccountID(a), int64(FirstAccountNum + a), o.Realm, o.Shard, "ACCOUNT", memo,
				appendED25519(nil, &r), created, since(created), false,
				nil, int64(7776000), created + 7776000*second, int64(r.next()%1_000_000_000_000) + 10_000_000_000, t0,
				a%17 == 3, int32(a % 11)}, nil
		case k < Accounts+Tokens:
			t := k - Accounts
			r := g.rng(tagToken, uint64(t), 0)
			created := t0 - 60*day + int64(t)*hour + int64(r.next()%uint64(second))
			return []any{o.TokenID(t), int64(FirstTokenNum + t), o.Realm, o.Shard, "TOKEN", "",
				appendED25519(nil, &r), created, since(created), false,
				o.AccountID(t), int64(7776000), created + 7776000*second, nil, nil, nil, nil}, nil
		case k < Accounts+Tokens+nTopics:
			i := k - Accounts - Tokens
			created := o.TopicCreatedTimestamp(i)
			admin, _, _, _ := g.topicKeys(i)
			var renewAccount, renewPeriod any = o.AccountID(i * 7), int64(7776000)
			var expiration any = created + 7776000*second
			if i%4 == 2 {
				renewAccount = nil
			}
			if i%11 == 10 {
				renewPeriod, expiration = nil, nil
			}
			return []any{o.TopicID(i), FirstTopicNum + int64(i), o.Realm, o.Shard, "TOPIC",
				topicMemos[i%len(topicMemos)], admin, created, since(created), topicDeleted(i),
				renewAccount, renewPeriod, expiration, nil, nil, nil, nil}, nil
		default:
			j := k - Accounts - Tokens - nTopics
			s := g.schedule(o, j)
			return []any{o.ScheduleID(j), o.FirstScheduleNum() + int64(j), o.Realm, o.Shard, "SCHEDULE",
				s.memo, s.key, s.ts, since(s.ts), s.state == scheduleDeleted,
				nil, nil, nil, nil, nil, nil, nil}, nil
		}
	})
}
