package consensus

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	"mirrorql/consensus/mirrorpb/mirrorpbconnect"
)

// health answers grpc.health.v1 for the process ("") and ConsensusService:
// SERVING while the service is ready as /health/readiness says (its
// database answers), NOT_SERVING while it is not, so that a load balancer
// probing over gRPC takes the instance out as one probing over HTTP does.
// Without a readiness check, SERVING always.
type health struct {
	ready    func(context.Context) error
	interval time.Duration
}

// readyTimeout bounds one readiness check, as /health/readiness does.
const readyTimeout = 2 * time.Second

func known(req *grpchealth.CheckRequest) error {
	if req.Service != "" && req.Service != mirrorpbconnect.ConsensusServiceName {
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %s", req.Service))
	}
	return nil
}

func (h health) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if err := known(req); err != nil {
		return nil, err
	}
	if h.ready == nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if h.ready(ctx) != nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

// Watch has the stream checked again every interval (grpchealth sends only
// changes). The stream lives as long as its watcher: from here on the
// server's timeouts must not cut it, only a write that stalls.
func (h health) Watch(ctx context.Context, req *grpchealth.CheckRequest, onChange func()) (func(), error) {
	if err := known(req); err != nil {
		return nil, err
	}
	startStream(ctx)
	if h.ready == nil {
		return func() {}, nil // nothing ever changes
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(h.interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				onChange()
			}
		}
	}()
	return func() { close(done) }, nil
}

// endsAt ends the requests of next when stopping closes (a health watch
// would otherwise hold the server's graceful shutdown for its whole grace).
func endsAt(stopping <-chan struct{}, next http.Handler) http.Handler {
	if stopping == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
