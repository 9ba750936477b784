package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configure NewRedis.
type RedisOptions struct {
	URL string // redis://[user:password@]host:port[/db]
	// Timeout bounds every command, and the dial.
	Timeout time.Duration
	// KeyPrefix starts every key, so deployments can share one Redis.
	KeyPrefix string
	// Backoff is how long the store is left alone after a failure (default 1s):
	// while Redis is down, requests go to the database without waiting for it.
	Backoff time.Duration
	Log     *slog.Logger
}

// Redis is the store shared by every instance through Redis.
type Redis struct {
	client    *redis.Client
	prefix    string
	backoff   time.Duration
	log       *slog.Logger
	downUntil atomic.Int64 // unix ns; 0 when healthy
}

// NewRedis connects lazily: an unreachable Redis is not an error here.
func NewRedis(o RedisOptions) (*Redis, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("cache: redis url: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	opt.MaxRetries = -1 // fail fast, the database answers instead
	opt.DisableIdentity = true
	return &Redis{client: redis.NewClient(opt), prefix: o.KeyPrefix, backoff: o.Backoff, log: o.Log}, nil
}

// Name is "redis".
func (r *Redis) Name() string { return "redis" }

// key hashes the request key: bounded length whatever the query string.
func (r *Redis) key(k string) string {
	sum := sha256.Sum256([]byte(k))
	return r.prefix + "response:" + hex.EncodeToString(sum[:])
}

func (r *Redis) available() bool {
	until := r.downUntil.Load()
	return until == 0 || time.Now().UnixNano() >= until
}

// result records the outcome of a command: a failure (other than a miss or
// the caller's own cancellation) starts a backoff, a success ends it.
func (r *Redis) result(err error) {
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		if r.downUntil.Swap(0) != 0 {
			r.log.Info("response cache: redis answers again")
		}
	case errors.Is(err, context.Canceled):
	default:
		if r.downUntil.Swap(time.Now().Add(r.backoff).UnixNano()) == 0 {
			r.log.Warn("response cache: redis failed; answering from the database", "err", err, "retry_after", r.backoff)
		}
	}
}

// Get reads the entry under key.
func (r *Redis) Get(ctx context.Context, key string) (Entry, bool, error) {
	if !r.available() {
		return Entry{}, false, ErrUnavailable
	}
	b, err := r.client.Get(ctx, r.key(key)).Bytes()
	r.result(err)
	if errors.Is(err, redis.Nil) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("cache: redis get: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Entry{}, false, fmt.Errorf("cache: redis entry: %w", err)
	}
	return e, true, nil
}

// Set stores e under key for ttl.
func (r *Redis) Set(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	if !r.available() {
		return ErrUnavailable
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	err = r.client.Set(ctx, r.key(key), b, min(ttl, MaxLifetime)).Err()
	r.result(err)
	if err != nil {
		return fmt.Errorf("cache: redis set: %w", err)
	}
	return nil
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }
