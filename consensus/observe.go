package consensus

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	"mirrorql/observe"
)

// Metrics receives the face's calls (the service's Prometheus
// instruments); nil measures nothing.
type Metrics interface {
	CallStarted(procedure, protocol string)
	// CallEnded: code is the gRPC status in connect's spelling ("ok",
	// "invalid_argument", "unavailable", …).
	CallEnded(procedure, protocol, code string)
}

// observer counts every call of a method the face serves.
type observer struct{ m Metrics }

func codeOf(err error) string {
	if err == nil {
		return "ok"
	}
	return connect.CodeOf(err).String()
}

func (o observer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		p, proto := req.Spec().Procedure, req.Peer().Protocol
		o.m.CallStarted(p, proto)
		resp, err := next(ctx, req)
		o.m.CallEnded(p, proto, codeOf(err))
		return resp, err
	}
}

func (o observer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (o observer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		p, proto := conn.Spec().Procedure, conn.Peer().Protocol
		o.m.CallStarted(p, proto)
		err := next(ctx, conn)
		o.m.CallEnded(p, proto, codeOf(err))
		return err
	}
}

// logger writes the access log's line of each call at its end, as the
// service's middleware does for REST and GraphQL requests (which the
// face's requests bypass): the procedure as route and path, the gRPC
// status in connect's spelling as code, the protocol, the peer and the
// request id (the client's X-Request-Id, sanitised, or a new one, echoed in
// the response headers and carried by the call's context).
type logger struct{ log *slog.Logger }

func (l logger) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		id := requestID(req.Header())
		resp, err := next(observe.WithRequestID(ctx, id), req)
		var ce *connect.Error
		switch {
		case resp != nil:
			resp.Header().Set(observe.HeaderRequestID, id)
		case errors.As(err, &ce):
			ce.Meta().Set(observe.HeaderRequestID, id)
		}
		l.line(ctx, start, req.Spec().Procedure, req.Peer(), id, err)
		return resp, err
	}
}

func (l logger) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (l logger) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		id := requestID(conn.RequestHeader())
		conn.ResponseHeader().Set(observe.HeaderRequestID, id) // sent with the first message or the end
		err := next(observe.WithRequestID(ctx, id), conn)
		l.line(ctx, start, conn.Spec().Procedure, conn.Peer(), id, err)
		return err
	}
}

func requestID(h http.Header) string {
	if id := observe.SanitizeRequestID(h.Get(observe.HeaderRequestID)); id != "" {
		return id
	}
	return observe.NewRequestID()
}

// quietProcedures are logged at debug level when they succeed: load
// balancers' probes, like the REST health routes.
var quietProcedures = map[string]bool{
	"/" + grpchealth.HealthV1ServiceName + "/Check": true,
	"/" + grpchealth.HealthV1ServiceName + "/Watch": true,
}

func (l logger) line(ctx context.Context, start time.Time, procedure string, peer connect.Peer, id string, err error) {
	level := slog.LevelInfo
	if err == nil && quietProcedures[procedure] {
		level = slog.LevelDebug
	}
	h := l.log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	elapsed := time.Since(start)
	rec := slog.NewRecord(start.Add(elapsed), level, observe.AccessMessage, 0)
	rec.AddAttrs(
		slog.String("method", http.MethodPost),
		slog.String("route", procedure),
		slog.String("path", procedure),
		slog.String("code", codeOf(err)),
		slog.Float64("duration_ms", math.Round(float64(elapsed.Microseconds()))/1000),
		slog.String("face", "grpc"),
		slog.String("protocol", peer.Protocol),
		slog.String("peer", peer.Addr),
		slog.String("request_id", id),
	)
	_ = h.Handle(ctx, rec) // a log that cannot be written is not the call's failure
}
