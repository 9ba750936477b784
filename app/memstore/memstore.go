// Package memstore is an app.Store over rows held in memory, for tests of
// the core and of the faces without a database. Each question is answered
// by the semantics the mirror node documents for it
// (docs/reference/behavior.md) and app.Store's own documentation, written as
// plainly as possible: every read walks every row. It is meant to be
// obviously right, not fast; package db answers the same questions with
// statements.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"

	"mirrorql/app"
	"mirrorql/model"
)

// The transaction codes the questions read (docs/reference/behavior.md §4).
const (
	TypeConsensusSubmitMessage int16 = 27
	ResultSuccess              int16 = 22
)

// Transaction is a row of the ledger's transaction table, as far as the
// questions read it.
type Transaction struct {
	ConsensusTimestamp model.Timestamp
	Type               int16
	Result             int16
	// EntityID is the topic of a submit.
	EntityID model.EntityID
}

// Store holds the rows. The zero value is empty and ready; it is safe for
// concurrent use (the GraphQL loaders ask from several goroutines).
type Store struct {
	mu           sync.Mutex
	messages     []model.TopicMessage
	transactions []Transaction
	topics       map[model.EntityID]model.Topic
	entities     map[model.EntityID]entity // the entity rows that are not topics'
	schedules    []model.Schedule
	reloads      int // of the schedules' tables: SchedulesVersion
	down         error
	calls        map[string]int
}

var _ app.Store = (*Store)(nil)

// entity is an entity row of another type than a topic's.
type entity struct {
	kind string
	row  model.Topic // its fields as the topic questions read them
}

// New is an empty Store.
func New() *Store { return &Store{} }

// AddMessages adds topic messages, each with the successful submit
// transaction that wrote it.
func (s *Store) AddMessages(msgs ...model.TopicMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		s.messages = append(s.messages, m)
		s.transactions = append(s.transactions, Transaction{
			ConsensusTimestamp: m.ConsensusTimestamp, Type: TypeConsensusSubmitMessage,
			Result: ResultSuccess, EntityID: m.TopicID,
		})
	}
}

// AddTransactions adds transactions without a message row: a failed
// submit, another type, the ledger's head.
func (s *Store) AddTransactions(txs ...Transaction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transactions = append(s.transactions, txs...)
}

// AddTopics adds topics as their Has* flags say: a topic row, an entity row
// (of type TOPIC), a custom_fee row.
func (s *Store) AddTopics(topics ...model.Topic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.topics == nil {
		s.topics = map[model.EntityID]model.Topic{}
	}
	for _, t := range topics {
		s.topics[t.ID] = t
	}
}

// AddEntity adds an entity row of another type than a topic's ("ACCOUNT",
// "SCHEDULE", …), row holding its fields as the topic questions read them
// (an id asked of Topic or TopicsByID answers with them).
func (s *Store) AddEntity(kind string, row model.Topic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entities == nil {
		s.entities = map[model.EntityID]entity{}
	}
	row.HasEntity = true
	s.entities[row.ID] = entity{kind, row}
}

// AddSchedules adds schedules, each with its entity's fields and its
// signatures, for the schedule questions; the entity questions know a
// schedule's entity row once it is added too (AddEntity).
func (s *Store) AddSchedules(schedules ...model.Schedule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedules = append(s.schedules, schedules...)
}

// TruncateSchedules empties the schedules, as a reload of their tables
// does: SchedulesVersion changes.
func (s *Store) TruncateSchedules() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedules = nil
	s.reloads++
}

// Fail makes every question answer that the database cannot be reached,
// caused by err; Fail(nil) answers again.
func (s *Store) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = err
}

// Calls is how many times each question (a Store method's name) was asked.
func (s *Store) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// ask counts the question, locks the store and answers the failure Fail
// set; the caller unlocks.
func (s *Store) ask(question string) error {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[question]++
	if s.down != nil {
		return &app.Unavailable{Cause: s.down, Down: true}
	}
	return nil
}

// page sorts rows by key in order and keeps the first limit.
func page[T any, K cmp.Ordered](rows []T, order model.Order, limit int, key func(*T) K) []T {
	slices.SortStableFunc(rows, func(a, b T) int {
		if order == model.Desc {
			return cmp.Compare(key(&b), key(&a))
		}
		return cmp.Compare(key(&a), key(&b))
	})
	return rows[:max(0, min(len(rows), limit))]
}

// messagesOfTopic is MessagesOfTopic under the lock (§2.3: in the filter's
// ranges, ordered by consensus time, at most the limit).
func (s *Store) messagesOfTopic(f app.MessageFilter) []model.TopicMessage {
	var rows []model.TopicMessage
	for _, m := range s.messages {
		if m.TopicID == f.TopicID && holds(f.SequenceNumber, m.SequenceNumber) && holds(f.Timestamp, int64(m.ConsensusTimestamp)) {
			rows = append(rows, m)
		}
	}
	return page(rows, f.Order, f.Limit, app.MessageKey)
}

// holds: r admits v, a nil range (no condition) admitting every value.
func holds(r *model.Range, v int64) bool { return r == nil || r.Holds(v) }

func (s *Store) MessagesOfTopic(_ context.Context, f app.MessageFilter) ([]model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("MessagesOfTopic"); err != nil {
		return nil, err
	}
	return s.messagesOfTopic(f), nil
}

// MessagesOfTopics: each topic gets MessagesOfTopic's page; topics without
// messages are absent.
func (s *Store) MessagesOfTopics(_ context.Context, topics []model.EntityID, f app.MessageFilter) (map[model.EntityID][]model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("MessagesOfTopics"); err != nil {
		return nil, err
	}
	out := map[model.EntityID][]model.TopicMessage{}
	for _, t := range topics {
		f.TopicID = t
		if rows := s.messagesOfTopic(f); len(rows) > 0 {
			out[t] = rows
		}
	}
	return out, nil
}

// bySequence is the one message of the topic with that sequence number
// (§3: anything but exactly one row is not found).
func (s *Store) bySequence(topic model.EntityID, seq int64) *model.TopicMessage {
	var found []model.TopicMessage
	for _, m := range s.messages {
		if m.TopicID == topic && m.SequenceNumber == seq {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return nil
	}
	return &found[0]
}

func (s *Store) MessageBySequence(_ context.Context, topic model.EntityID, seq int64) (*model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("MessageBySequence"); err != nil {
		return nil, err
	}
	if m := s.bySequence(topic, seq); m != nil {
		return m, nil
	}
	return nil, app.ErrNotFound
}

// MessagesBySequence: the messages that exist among keys.
func (s *Store) MessagesBySequence(_ context.Context, keys []app.TopicSequence) (map[app.TopicSequence]*model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("MessagesBySequence"); err != nil {
		return nil, err
	}
	out := map[app.TopicSequence]*model.TopicMessage{}
	for _, k := range keys {
		if m := s.bySequence(k.TopicID, k.SequenceNumber); m != nil {
			out[k] = m
		}
	}
	return out, nil
}

// MessageByTimestamp follows §4: the one successful submit at ts, then the
// one message of its topic at ts.
func (s *Store) MessageByTimestamp(_ context.Context, ts model.Timestamp) (*model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("MessageByTimestamp"); err != nil {
		return nil, err
	}
	var submits []Transaction
	for _, tx := range s.transactions {
		if tx.ConsensusTimestamp == ts && tx.Result == ResultSuccess && tx.Type == TypeConsensusSubmitMessage {
			submits = append(submits, tx)
		}
	}
	if len(submits) != 1 {
		return nil, app.ErrNotFound
	}
	var found []model.TopicMessage
	for _, m := range s.messages {
		if m.TopicID == submits[0].EntityID && m.ConsensusTimestamp == ts {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return nil, app.ErrNotFound
	}
	return &found[0], nil
}

// LatestMessages: the message with the highest sequence number of each
// topic that has one (Topic.messageCount and latestMessage).
func (s *Store) LatestMessages(_ context.Context, topics []model.EntityID) (map[model.EntityID]*model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("LatestMessages"); err != nil {
		return nil, err
	}
	out := map[model.EntityID]*model.TopicMessage{}
	for _, t := range topics {
		for _, m := range s.messages {
			if m.TopicID == t && (out[t] == nil || m.SequenceNumber > out[t].SequenceNumber) {
				out[t] = &m // m is this iteration's copy
			}
		}
	}
	return out, nil
}

// The chunk window, as graph/schema.graphqls documents TopicMessage.chunks:
// siblings are looked for from the message's sequence number minus
// (number - 1) minus the slack to it plus (total - number) plus the slack,
// number and total clamped to [1, maxTotal].
const (
	chunkSlack    = 64
	chunkMaxTotal = 1024
)

// ChunksOf: for each chunked message, the chunks of its logical message in
// its window, in chunk order (then consensus order); the message alone when
// none is found; nil for an unchunked one.
func (s *Store) ChunksOf(_ context.Context, msgs []*model.TopicMessage) ([][]model.TopicMessage, error) {
	defer s.mu.Unlock()
	if err := s.ask("ChunksOf"); err != nil {
		return nil, err
	}
	out := make([][]model.TopicMessage, len(msgs))
	for i, m := range msgs {
		if m.ChunkNum == nil {
			continue
		}
		clamp := func(v int32) int64 { return min(max(int64(v), 1), chunkMaxTotal) }
		number := clamp(*m.ChunkNum)
		total := number
		if m.ChunkTotal != nil {
			total = max(clamp(*m.ChunkTotal), number)
		}
		lo, hi := m.SequenceNumber-(number-1)-chunkSlack, m.SequenceNumber+(total-number)+chunkSlack
		for _, c := range s.messages {
			if c.SequenceNumber >= lo && c.SequenceNumber <= hi && sameLogicalMessage(m, &c) {
				out[i] = append(out[i], c)
			}
		}
		slices.SortStableFunc(out[i], func(a, b model.TopicMessage) int {
			return cmp.Or(cmp.Compare(*a.ChunkNum, *b.ChunkNum), cmp.Compare(a.ConsensusTimestamp, b.ConsensusTimestamp))
		})
		if out[i] == nil {
			out[i] = []model.TopicMessage{*m}
		}
	}
	return out, nil
}

// sameLogicalMessage: a chunk of the same topic with the same initial
// transaction id, or, where neither has one, the same payer and valid start
// (a legacy row missing either is only itself).
func sameLogicalMessage(a, b *model.TopicMessage) bool {
	switch {
	case a.TopicID != b.TopicID || b.ChunkNum == nil:
		return false
	case a.InitialTransactionID != nil || b.InitialTransactionID != nil:
		return a.InitialTransactionID != nil && b.InitialTransactionID != nil &&
			bytes.Equal(a.InitialTransactionID, b.InitialTransactionID)
	case a.PayerAccountID == nil || b.PayerAccountID == nil || a.ValidStartTimestamp == nil || b.ValidStartTimestamp == nil:
		return a.SequenceNumber == b.SequenceNumber
	}
	return *a.PayerAccountID == *b.PayerAccountID && *a.ValidStartTimestamp == *b.ValidStartTimestamp
}

// Activity counts the topic's messages in [bounds[i], bounds[i+1]).
func (s *Store) Activity(_ context.Context, topic model.EntityID, bounds []model.Timestamp) ([]int64, error) {
	defer s.mu.Unlock()
	if err := s.ask("Activity"); err != nil {
		return nil, err
	}
	counts := make([]int64, max(0, len(bounds)-1))
	for i := range counts {
		for _, m := range s.messages {
			if m.TopicID == topic && m.ConsensusTimestamp >= bounds[i] && m.ConsensusTimestamp < bounds[i+1] {
				counts[i]++
			}
		}
	}
	return counts, nil
}

// TopicExists: an entity row with that id, or any message of the topic
// (docs/reference/DECISIONS.md #2).
func (s *Store) TopicExists(_ context.Context, topic model.EntityID) (bool, error) {
	defer s.mu.Unlock()
	if err := s.ask("TopicExists"); err != nil {
		return false, err
	}
	if _, ok := s.entity(topic); ok {
		return true, nil
	}
	return slices.ContainsFunc(s.messages, func(m model.TopicMessage) bool { return m.TopicID == topic }), nil
}

// entity is the type of the entity row with id, if there is one.
func (s *Store) entity(id model.EntityID) (string, bool) {
	if t, ok := s.topics[id]; ok && t.HasEntity {
		return "TOPIC", true
	}
	e, ok := s.entities[id]
	return e.kind, ok
}

// topicRows is what the topic, entity and custom_fee rows of id say, if
// any of them exists: an entity of another type is an entity row alone.
func (s *Store) topicRows(id model.EntityID) (model.Topic, bool) {
	if t, ok := s.topics[id]; ok && (t.HasTopic || t.HasEntity || t.HasCustomFee) {
		return t, true
	}
	if e, ok := s.entities[id]; ok {
		return e.row, true
	}
	return model.Topic{}, false
}

// Topic follows §5.2's rows: NotFound only when none exists.
func (s *Store) Topic(_ context.Context, id model.EntityID) (*model.Topic, error) {
	defer s.mu.Unlock()
	if err := s.ask("Topic"); err != nil {
		return nil, err
	}
	if t, ok := s.topicRows(id); ok {
		return &t, nil
	}
	return nil, app.ErrNotFound
}

// TopicsByID: the ids with an entity row, ordered by id.
func (s *Store) TopicsByID(_ context.Context, ids []model.EntityID) ([]model.Topic, error) {
	defer s.mu.Unlock()
	if err := s.ask("TopicsByID"); err != nil {
		return nil, err
	}
	var out []model.Topic
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if _, ok := s.entity(id); ok {
			t, _ := s.topicRows(id)
			out = append(out, t)
		}
	}
	return out, nil
}

// Topics: the entities of type TOPIC the id conditions select, ordered by
// id, at most the limit.
func (s *Store) Topics(_ context.Context, f app.TopicFilter) ([]model.Topic, error) {
	defer s.mu.Unlock()
	if err := s.ask("Topics"); err != nil {
		return nil, err
	}
	var rows []model.Topic
	for id, t := range s.topics {
		if t.HasEntity && model.AllHold(id, f.ID) {
			rows = append(rows, t)
		}
	}
	return page(rows, f.Order, f.Limit, app.TopicKey), nil
}

func (s *Store) EntityKind(_ context.Context, id model.EntityID) (string, error) {
	defer s.mu.Unlock()
	if err := s.ask("EntityKind"); err != nil {
		return "", err
	}
	if kind, ok := s.entity(id); ok {
		return kind, nil
	}
	return "", app.ErrNotFound
}

// withSignatures is sc with its signatures in consensus order (§6.3).
func withSignatures(sc model.Schedule) model.Schedule {
	sc.Signatures = slices.Clone(sc.Signatures)
	slices.SortStableFunc(sc.Signatures, func(a, b model.Signature) int {
		return cmp.Compare(a.ConsensusTimestamp, b.ConsensusTimestamp)
	})
	return sc
}

// Schedule follows §7: NotFound unless a schedule has that id.
func (s *Store) Schedule(_ context.Context, id model.EntityID) (*model.Schedule, error) {
	defer s.mu.Unlock()
	if err := s.ask("Schedule"); err != nil {
		return nil, err
	}
	for _, sc := range s.schedules {
		if sc.ScheduleID == id {
			sc = withSignatures(sc)
			return &sc, nil
		}
	}
	return nil, app.ErrNotFound
}

// Schedules follows §6.2: the conditions ANDed on the schedule id and the
// creator, ordered by schedule id, at most the limit; an opaque EVM address
// (NoMatch) matches nothing.
func (s *Store) Schedules(_ context.Context, f app.ScheduleFilter) ([]model.Schedule, error) {
	defer s.mu.Unlock()
	if err := s.ask("Schedules"); err != nil {
		return nil, err
	}
	if f.NoMatch {
		return nil, nil
	}
	var rows []model.Schedule
	for _, sc := range s.schedules {
		if model.AllHold(sc.ScheduleID, f.ScheduleID) && model.AllHold(sc.CreatorAccountID, f.CreatorAccountID) {
			rows = append(rows, withSignatures(sc))
		}
	}
	return page(rows, f.Order, f.Limit, app.ScheduleKey), nil
}

// SchedulesVersion changes with every TruncateSchedules.
func (s *Store) SchedulesVersion(context.Context) (string, error) {
	defer s.mu.Unlock()
	if err := s.ask("SchedulesVersion"); err != nil {
		return "", err
	}
	return strconv.Itoa(s.reloads), nil
}

// LivePoll follows app.Poll: the successful submits of topics after the
// watermark in consensus order, at most limit of them, with their messages;
// the newest of them (Scanned) and of every transaction (Head).
func (s *Store) LivePoll(_ context.Context, after model.Timestamp, topics []model.EntityID, limit int) (app.Poll, error) {
	defer s.mu.Unlock()
	if err := s.ask("LivePoll"); err != nil {
		return app.Poll{}, err
	}
	var p app.Poll
	var walked []Transaction
	for _, tx := range s.transactions {
		p.Head = max(p.Head, tx.ConsensusTimestamp)
		if tx.ConsensusTimestamp > after && tx.Type == TypeConsensusSubmitMessage && tx.Result == ResultSuccess &&
			slices.Contains(topics, tx.EntityID) {
			walked = append(walked, tx)
		}
	}
	walked = page(walked, model.Asc, limit, func(tx *Transaction) model.Timestamp { return tx.ConsensusTimestamp })
	for _, tx := range walked {
		p.Scanned = max(p.Scanned, tx.ConsensusTimestamp)
		for _, m := range s.messages {
			if m.TopicID == tx.EntityID && m.ConsensusTimestamp == tx.ConsensusTimestamp {
				p.Messages = append(p.Messages, m)
			}
		}
	}
	p.Full = limit > 0 && after != math.MaxInt64 && len(walked) >= limit
	return p, nil
}
