package graph

import (
	"github.com/99designs/gqlgen/graphql"
	"log/slog"
	"net/http"
	"time"

	"mirrorql/app"
	"mirrorql/model"
)

// Options are the GraphQL face's own settings; zero values take the
// defaults noted on each field. Page sizes and the shard and realm of short
// ids are app's (app.Rules), read from the reader.
type Options struct {
	// ScheduleLifetime is the network's schedule lifetime (1800 s).
	ScheduleLifetime time.Duration
	// Now is the clock of Schedule.status and of subscriptions (time.Now).
	Now func() time.Time
	// Log receives database errors and panics (slog.Default()).
	Log *slog.Logger
	// LoaderWait is how long a dataloader collects keys before it asks (2 ms).
	LoaderWait time.Duration
	// Guards: MaxDepth (10), MaxComplexity (200), MaxTokens (1000) and
	// MaxBodyBytes (64 KiB).
	MaxDepth      int
	MaxComplexity int
	MaxTokens     int
	MaxBodyBytes  int64
	// NoIntrospection refuses __schema and __type queries (the explorer's
	// docs then stay empty); introspection is allowed by default.
	NoIntrospection bool
	// NoCompiledOperations answers every operation with gqlgen's executor;
	// by default the message lookups it has validated once are answered from
	// compiled plans (plans.go).
	NoCompiledOperations bool
	// FieldByField writes every topic message and schedule through gqlgen's executor,
	// field by field, rather than by its view in one pass (view/render.go):
	// the reference the views are tested against.
	FieldByField bool
	// OnPlanPanic counts a panic on the compiled operations' path (gqlgen
	// then answers the request).
	OnPlanPanic func()
	// Streams feeds subscriptions and completes them at shutdown (none:
	// subscriptions answer that they are off).
	Streams *Streams
	// Stream: the subscription transports' settings.
	Stream StreamOptions
	// NotFound answers a request for an explorer asset that does not exist,
	// so it gets the service's own 404 (http.NotFoundHandler when nil).
	NotFound http.Handler
}

func (o Options) withDefaults() Options {
	if o.ScheduleLifetime <= 0 {
		o.ScheduleLifetime = time.Duration(model.DefaultScheduleLifetime)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Streams == nil {
		o.Streams = NewStreams(nil)
	}
	o.Stream = o.Stream.withDefaults()
	if o.NotFound == nil {
		o.NotFound = http.NotFoundHandler()
	}
	if o.LoaderWait <= 0 {
		o.LoaderWait = 2 * time.Millisecond
	}
	if o.MaxDepth < 1 {
		o.MaxDepth = 10
	}
	if o.MaxComplexity < 1 {
		o.MaxComplexity = 200
	}
	if o.MaxTokens < 1 {
		o.MaxTokens = 1000
	}
	if o.MaxBodyBytes < 1 {
		o.MaxBodyBytes = 64 << 10
	}
	return o
}

// Resolver holds the dependencies of every resolver; per-request state (the
// dataloaders) travels in the context.
type Resolver struct {
	opts Options
	// app answers the root fields, and the loaders' batches of nested
	// ones; store, the reads app adds nothing to.
	app   *app.Ledger
	store app.Store
	rules app.Rules
	// presentError is the server's error presenter (errors.go), which the
	// compiled operations use too.
	presentError graphql.ErrorPresenterFunc
}

// newResolver is the Resolver over r; o has its defaults.
func newResolver(r *app.Ledger, o Options) *Resolver {
	return &Resolver{opts: o, app: r, store: r.Store(), rules: r.Rules(), presentError: presentError(o.Log)}
}

// now is the request's clock, a schedule's status's time.
func (r *Resolver) now() model.Timestamp { return model.Timestamp(r.opts.Now().UnixNano()) }

func (r *Resolver) scheduleLifetime() model.Timestamp {
	return model.Timestamp(r.opts.ScheduleLifetime.Nanoseconds())
}
