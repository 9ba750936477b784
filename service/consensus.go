package service

import (
	"log/slog"
	"net/http"

	"mirrorql/config"
	"mirrorql/consensus"
	"mirrorql/db"
)

// Consensus is the SDKs' face (gRPC, gRPC-Web and Connect) over d, fed by
// the live hub of ops, whose caps and shutdown it shares with the GraphQL
// subscriptions.
func Consensus(cfg config.Config, d *db.DB, log *slog.Logger, ops *Operations) http.Handler {
	return consensus.New(ops.ledger, consensus.Options{
		Hub:              ops.hub,
		Origins:          cfg.WSOrigins(),
		WriteTimeout:     cfg.LiveWriteTimeout,
		MaxPerConnection: cfg.LiveMaxPerConnection,
		// The health service says what /health/readiness says.
		Ready:    d.Ping,
		Stopping: ops.stopping,
		Log:      log,
		Metrics:  ops.grpc,
	})
}

// WithConsensus is the main listener's handler: the consensus face's
// requests go to grpc straight, past the REST and GraphQL middleware (the
// response cache, compression into one buffer and the request deadline
// would cut a stream), every other one to rest.
func WithConsensus(rest, grpc http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if consensus.Is(r) {
			grpc.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}
