package consensus

import (
	"context"

	"connectrpc.com/connect"
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
