// Package cache is the response cache of list endpoints: an Echo middleware
// that stores a route's successful answers (status, the headers that make
// them, body) for as long as their Cache-Control max-age allows, in process
// or in Redis, and replays them byte for byte.
package cache

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Entry is one stored response.
type Entry struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// Store keeps entries for a lifetime. Get reports a miss as (Entry{}, false,
// nil); an error means the store could not answer.
type Store interface {
	Name() string
	Get(ctx context.Context, key string) (Entry, bool, error)
	Set(ctx context.Context, key string, e Entry, ttl time.Duration) error
	Close() error
}

// ErrUnavailable is returned, without asking it, while a store that failed
// recently is left alone.
var ErrUnavailable = errors.New("cache: store unavailable")
