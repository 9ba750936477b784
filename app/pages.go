package app

import "mirrorql/model"

// The page sizes both faces use when the configuration says nothing.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// PageSizes is the page-size rule of every list: REST's `limit` and
// GraphQL's `first` (docs/reference/behavior.md §1.5).
type PageSizes struct{ Default, Max int }

// WithDefaults fills in the sizes left at zero.
func (s PageSizes) WithDefaults() PageSizes {
	if s.Max < 1 {
		s.Max = MaxPageSize
	}
	if s.Default < 1 {
		s.Default = min(DefaultPageSize, s.Max)
	}
	return s
}

// Size is the page size for a requested n: less than 1 is invalid (`Invalid
// parameter: limit`), more than Max is Max.
func (s PageSizes) Size(n int64) (int, bool) {
	if n < 1 {
		return 0, false
	}
	return int(min(n, int64(s.Max))), true
}

// Requested is Size for an optional request: none is Default.
func (s PageSizes) Requested(n *int64) (int, bool) {
	if n == nil {
		return s.Default, true
	}
	return s.Size(*n)
}

// Estimate is the page size a request will get, for a cost estimate made
// before validation: an invalid size counts as 1 (it will be refused).
func (s PageSizes) Estimate(n *int64) int {
	if n != nil && *n < 1 {
		return 1
	}
	size, _ := s.Requested(n)
	return size
}

// LimitParameter is the parameter the page size is reported as.
const LimitParameter = "limit"

// After is the condition that selects what follows key in order: the next
// page of a list starts after its last row's paging key (REST's links.next
// and GraphQL's cursors, docs/reference/DECISIONS.md #7). A list pages on the key it is
// ordered by: a message's consensus timestamp, a topic's or a schedule's id.
func After[T any](order model.Order, key T) model.Condition[T] {
	if order == model.Desc {
		return model.Condition[T]{Op: model.OpLt, Value: key}
	}
	return model.Condition[T]{Op: model.OpGt, Value: key}
}

// MessageKey is the paging key of a message.
func MessageKey(m *model.TopicMessage) model.Timestamp { return m.ConsensusTimestamp }

// ScheduleKey is the paging key of a schedule.
func ScheduleKey(s *model.Schedule) model.EntityID { return s.ScheduleID }

// TopicKey is the paging key of a topic.
func TopicKey(t *model.Topic) model.EntityID { return t.ID }
