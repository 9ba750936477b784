package cache

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// MaxLifetime bounds the lifetime of any entry, whatever its max-age.
const MaxLifetime = 10 * time.Minute

// Memory is the in-process store: an LRU bounded both in entries and in
// bytes of stored bodies, whose entries expire at their own lifetime.
// Expired entries are dropped when the next entry is stored, so memory holds
// what is live rather than everything seen in the last MaxLifetime.
type Memory struct {
	lru      *expirable.LRU[string, memoryEntry]
	now      func() time.Time
	maxBytes int64

	mu    sync.Mutex // guards bytes
	bytes int64
}

type memoryEntry struct {
	Entry
	expires time.Time
}

func (e *memoryEntry) size() int64 { return int64(len(e.Body)) }

// NewMemory holds at most size entries and maxBytes bytes of bodies
// (maxBytes ≤ 0: no byte bound). now is the clock (nil: time.Now).
func NewMemory(size int, maxBytes int64, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	m := &Memory{now: now, maxBytes: maxBytes}
	m.lru = expirable.NewLRU[string, memoryEntry](max(size, 1), func(_ string, e memoryEntry) {
		m.mu.Lock()
		m.bytes -= e.size()
		m.mu.Unlock()
	}, MaxLifetime)
	return m
}

// Name is "memory".
func (m *Memory) Name() string { return "memory" }

// Get returns the live entry under key.
func (m *Memory) Get(_ context.Context, key string) (Entry, bool, error) {
	e, ok := m.lru.Get(key)
	if !ok {
		return Entry{}, false, nil
	}
	if !m.now().Before(e.expires) {
		m.lru.Remove(key)
		return Entry{}, false, nil
	}
	return e.Entry, true, nil
}

// Set stores e under key for ttl, after dropping expired entries and, past
// the byte bound, the least recently used ones. An entry larger than the
// whole bound is not stored.
func (m *Memory) Set(_ context.Context, key string, e Entry, ttl time.Duration) error {
	entry := memoryEntry{Entry: e, expires: m.now().Add(min(ttl, MaxLifetime))}
	if m.maxBytes > 0 && entry.size() > m.maxBytes {
		return nil
	}
	now := m.now()
	for _, k := range m.lru.Keys() {
		if old, ok := m.lru.Peek(k); ok && !now.Before(old.expires) {
			m.lru.Remove(k)
		}
	}
	m.lru.Add(key, entry)
	m.mu.Lock()
	m.bytes += entry.size()
	over := m.maxBytes > 0 && m.bytes > m.maxBytes
	m.mu.Unlock()
	for over {
		if _, _, ok := m.lru.RemoveOldest(); !ok {
			break
		}
		m.mu.Lock()
		over = m.bytes > m.maxBytes
		m.mu.Unlock()
	}
	return nil
}

// Len is the number of entries held.
func (m *Memory) Len() int { return m.lru.Len() }

// Bytes is the size of the bodies held.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// Close does nothing.
func (m *Memory) Close() error { return nil }
