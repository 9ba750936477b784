package seed

import (
	"errors"
	"fmt"
)

// Options say how much to generate and where.
type Options struct {
	Topics           int   // topics 0.0.2001 …
	MessagesPerTopic int   // messages of every topic but a hot one
	HotTopicMessages int   // > 0: the first topic holds this many messages instead
	Schedules        int   // schedules 0.0.FirstScheduleNum() …
	Seed             int64 // same seed, same rows
	Shard, Realm     int64 // of every entity id
	BaseTimestamp    int64 // T0 in ns; 0 means DefaultBaseTimestamp
}

// DefaultOptions is a small data set for tests and demos: 20 topics of 200
// messages and 200 schedules.
func DefaultOptions() Options {
	return Options{
		Topics:           20,
		MessagesPerTopic: 200,
		Schedules:        200,
		Seed:             42,
		BaseTimestamp:    DefaultBaseTimestamp,
	}
}

// BenchmarkOptions is the benchmark data set: 100 topics, 1,000,049 messages,
// 500,000 of them in the first (hot) topic.
func BenchmarkOptions() Options {
	o := DefaultOptions()
	o.Topics = 100
	o.MessagesPerTopic = 5051
	o.HotTopicMessages = 500_000
	return o
}

func (o Options) validate() error {
	switch {
	case o.Topics < 0 || o.Topics > 100_000:
		return fmt.Errorf("seed: Topics %d out of range 0..100000", o.Topics)
	case o.MessagesPerTopic < 0 || o.HotTopicMessages < 0 || o.Schedules < 0:
		return errors.New("seed: negative count")
	case o.Schedules > 10_000_000:
		return fmt.Errorf("seed: Schedules %d out of range 0..10000000", o.Schedules)
	case o.Shard < 0 || o.Shard > 1023:
		return fmt.Errorf("seed: Shard %d out of range 0..1023", o.Shard)
	case o.Realm < 0 || o.Realm > 65535:
		return fmt.Errorf("seed: Realm %d out of range 0..65535", o.Realm)
	case o.base() < 100*day || o.base() > 4_000_000_000*second:
		return fmt.Errorf("seed: BaseTimestamp %d out of range", o.BaseTimestamp)
	}
	return nil
}

func (o Options) base() int64 {
	if o.BaseTimestamp == 0 {
		return DefaultBaseTimestamp
	}
	return o.BaseTimestamp
}

// EntityID encodes shard.realm.num with the options' shard and realm.
func (o Options) EntityID(num int64) int64 { return o.Shard<<54 | o.Realm<<38 | num }

// AccountID is the encoded id of account a (0 ≤ a < Accounts).
func (o Options) AccountID(a int) int64 { return o.EntityID(FirstAccountNum + int64(a%Accounts)) }

// TokenID is the encoded id of token k (0 ≤ k < Tokens).
func (o Options) TokenID(k int) int64 { return o.EntityID(FirstTokenNum + int64(k%Tokens)) }

// TopicID is the encoded id of topic i (0 ≤ i < Topics).
func (o Options) TopicID(i int) int64 { return o.EntityID(FirstTopicNum + int64(i)) }

// FirstScheduleNum is the num of the first schedule: 3001, or the next
// thousand + 1 past the topics when there are more than 1000.
func (o Options) FirstScheduleNum() int64 { return 3001 + int64((max(o.Topics, 1)-1)/1000)*1000 }

// ScheduleID is the encoded id of schedule j (0 ≤ j < Schedules).
func (o Options) ScheduleID(j int) int64 { return o.EntityID(o.FirstScheduleNum() + int64(j)) }

// TopicMessages is the number of messages of topic i.
func (o Options) TopicMessages(i int) int64 {
	if i == 0 && o.HotTopicMessages > 0 {
		return int64(o.HotTopicMessages)
	}
	return int64(o.MessagesPerTopic)
}

// TotalMessages is the number of topic_message rows.
func (o Options) TotalMessages() int64 {
	if o.Topics == 0 {
		return 0
	}
	return o.TopicMessages(0) + int64(o.Topics-1)*int64(o.MessagesPerTopic)
}

// FailedTransactions is the number of failed submissions (a transaction with
// a result other than 22 and no message): one per 250 messages, plus one.
func (o Options) FailedTransactions() int64 {
	if o.Topics == 0 {
		return 0
	}
	return o.TotalMessages()/250 + 1
}

// TopicCreatedTimestamp is topic i's created_timestamp, the lower bound of its
// timestamp_range and the instant of its CONSENSUSCREATETOPIC transaction.
func (o Options) TopicCreatedTimestamp(i int) int64 {
	g := newGen(o.Seed)
	return o.base() + int64(i)*minute + int64(g.hash(tagTopicCreated, uint64(i), 0)%uint64(second))
}

// MessagesStart is the earliest possible message timestamp.
func (o Options) MessagesStart() int64 { return o.base() + int64(o.Topics)*minute + hour }

// cell is the period of the timestamp classes: one slot per topic plus one
// for failed submissions.
func (o Options) cell() int64 { return int64(o.Topics+1) * slot }

// period is the distance between the timestamp cells of consecutive events of
// a stream of n events: a multiple of cell() spreading them over messageSpan.
func (o Options) period(n int64) int64 {
	c := o.cell()
	if n <= 0 {
		return c
	}
	return c * max(1, messageSpan/(n*c))
}

// MessageTimestamp is the consensus_timestamp of message seq (1-based) of topic i.
func (o Options) MessageTimestamp(i int, seq int64) int64 {
	g := newGen(o.Seed)
	return g.eventTimestamp(o.MessagesStart()+int64(i)*slot, o.period(o.TopicMessages(i)), o.cell(), i, seq)
}

// ScheduleTimestamp is schedule j's consensus_timestamp (its creation).
func (o Options) ScheduleTimestamp(j int) int64 {
	start, step := o.scheduleWindow()
	g := newGen(o.Seed)
	return start + int64(j)*step + int64(g.hash(tagSchedule, uint64(j), 0)%uint64(step/2+1))
}

func (o Options) scheduleWindow() (start, step int64) {
	start = o.base() - 30*day
	return start, max(1, (30*day-hour)/int64(max(o.Schedules, 1)))
}
