// Package consensus is the SDKs' face: the mirror node's gRPC
// ConsensusService.subscribeTopic, which the Hedera/Hiero SDKs' topic message
// queries call, served over gRPC, gRPC-Web and Connect from one net/http
// handler (connect-go), beside NetworkService (answered UNIMPLEMENTED), the
// standard health service and server reflection. It reads the query, has app
// check it, has the live hub stream it (the engine of the GraphQL
// subscription) and renders each row as the mirror node's
// ConsensusTopicResponse.
package consensus

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	connectcors "connectrpc.com/cors"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/rs/cors"

	"mirrorql/consensus/mirrorpb"
	"mirrorql/consensus/mirrorpb/mirrorpbconnect"
	"mirrorql/live"
	"mirrorql/model"
	"mirrorql/observe"
)

// Options are the face's settings; zero values take the defaults noted.
type Options struct {
	// Hub feeds the streams; nil: live topic messages are off, and
	// subscribeTopic answers UNIMPLEMENTED.
	Hub *live.Hub
	// Origins are the origins allowed to call from a browser (gRPC-Web,
	// Connect); empty or "*" allows all. The same setting as the GraphQL
	// WebSocket's.
	Origins []string
	// WriteTimeout bounds every write to a stream (10 s): a client that
	// stops reading is disconnected, not waited on.
	WriteTimeout time.Duration
	// MaxPerConnection caps the streams of one connection (10), where the
	// server's ConnContext marks connections.
	MaxPerConnection int
	// MaxRequestBytes bounds a request message (64 KiB); a larger one
	// answers RESOURCE_EXHAUSTED.
	MaxRequestBytes int
	// Ready is the service's readiness (/health/readiness's: the database
	// answers); the health service answers NOT_SERVING while it fails. Nil:
	// SERVING always.
	Ready func(context.Context) error
	// HealthInterval is how often a health Watch stream checks readiness
	// again (2 s).
	HealthInterval time.Duration
	// Stopping closes when the server starts shutting down: health Watch
	// streams end then (subscribeTopic streams end through the hub).
	Stopping <-chan struct{}
	// Now is the wall clock (time.Now): a query without a start time starts
	// now.
	Now     func() time.Time
	Log     *slog.Logger
	Metrics Metrics
}

func (o Options) withDefaults() Options {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxPerConnection <= 0 {
		o.MaxPerConnection = 10
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 64 << 10
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// The services this face answers; their paths start with the name.
var services = []string{
	mirrorpbconnect.ConsensusServiceName,
	mirrorpbconnect.NetworkServiceName,
	grpchealth.HealthV1ServiceName,
	grpcreflect.ReflectV1ServiceName,
	grpcreflect.ReflectV1AlphaServiceName,
}

// Topics is what the face asks of app (*app.Ledger): whether a topic may be
// followed.
type Topics interface {
	FollowableTopic(ctx context.Context, id model.EntityID) error
}

// New is the face's handler over reader (app's questions) and o.Hub.
func New(reader Topics, o Options) http.Handler {
	o = o.withDefaults()
	opts := []connect.HandlerOption{
		connect.WithReadMaxBytes(o.MaxRequestBytes),
		// A message or two of a topic's are small: gzip pays only past
		// this size, when the client accepts it.
		connect.WithCompressMinBytes(1024),
		connect.WithRecover(func(ctx context.Context, spec connect.Spec, _ http.Header, p any) error {
			o.Log.ErrorContext(ctx, "consensus: panic", "procedure", spec.Procedure, "panic", p)
			return connect.NewError(connect.CodeInternal, errors.New("internal error"))
		}),
	}
	// The log line outermost: its duration covers the metrics' work too.
	opts = append(opts, connect.WithInterceptors(logger{o.Log}))
	if o.Metrics != nil {
		opts = append(opts, connect.WithInterceptors(observer{o.Metrics}))
	}
	// Each method at its own path: a service's handler answers a method it
	// lacks with a plain 404, where the client needs UNIMPLEMENTED.
	mux := http.NewServeMux()
	_, subscribe := mirrorpbconnect.NewConsensusServiceHandler(&subscriber{app: reader, o: o}, opts...)
	mux.Handle(mirrorpbconnect.ConsensusServiceSubscribeTopicProcedure, subscribe)
	_, nodes := mirrorpbconnect.NewNetworkServiceHandler(network{}, opts...)
	mux.Handle(mirrorpbconnect.NetworkServiceGetNodesProcedure, nodes)
	_, healthH := grpchealth.NewHandler(health{ready: o.Ready, interval: o.HealthInterval}, opts...)
	mux.Handle("/"+grpchealth.HealthV1ServiceName+"/Check", healthH)
	mux.Handle("/"+grpchealth.HealthV1ServiceName+"/Watch", endsAt(o.Stopping, healthH))
	reflector := grpcreflect.NewStaticReflector(services[:3]...)
	_, reflect := grpcreflect.NewHandlerV1(reflector, opts...)
	mux.Handle("/"+grpcreflect.ReflectV1ServiceName+"/ServerReflectionInfo", reflect)
	_, reflectAlpha := grpcreflect.NewHandlerV1Alpha(reflector, opts...)
	mux.Handle("/"+grpcreflect.ReflectV1AlphaServiceName+"/ServerReflectionInfo", reflectAlpha)
	mux.Handle("/", unknownMethod(logger{o.Log}))
	return corsOf(o.Origins).Handler(controlled(mux, o.WriteTimeout))
}

// Is tells the requests of this face on a listener shared with others: a
// path of one of its services, or any gRPC or gRPC-Web request (an unknown
// method then answers UNIMPLEMENTED in its protocol, not an HTML 404).
func Is(r *http.Request) bool {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		return true
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	for _, s := range services {
		if strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// unknownMethod answers a path no service serves: UNIMPLEMENTED in the
// request's protocol, or a plain 404 to what speaks none of them.
func unknownMethod(log logger) http.Handler {
	ew := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ew.IsSupported(r) {
			http.Error(w, "no such method: "+r.URL.Path, http.StatusNotFound)
			return
		}
		// Logged as the calls connect handles are (logger), the path as
		// the procedure.
		start, id := time.Now(), requestID(r.Header)
		w.Header().Set(observe.HeaderRequestID, id)
		err := connect.NewError(connect.CodeUnimplemented, errors.New("unknown method "+r.URL.Path))
		_ = ew.Write(w, r, err)
		log.line(r.Context(), start, r.URL.Path, connect.Peer{Addr: r.RemoteAddr, Protocol: protocolOf(r)}, id, err)
	})
}

// protocolOf is the protocol of a request connect's error writer supports,
// in connect's spelling (connect.Peer.Protocol).
func protocolOf(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/grpc-web"):
		return connect.ProtocolGRPCWeb
	case strings.HasPrefix(ct, "application/grpc"):
		return connect.ProtocolGRPC
	}
	return connect.ProtocolConnect
}

// corsOf lets browser pages of the allowed origins call the face: the
// request headers gRPC-Web and Connect clients send, and the trailers they
// must read (grpc-status, grpc-message) exposed.
func corsOf(origins []string) *cors.Cors {
	allowed := []string{}
	for _, o := range origins {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
			allowed = append(allowed, o)
		}
	}
	if len(allowed) == 0 {
		allowed = []string{"*"}
	}
	return cors.New(cors.Options{
		AllowedOrigins: allowed,
		AllowedMethods: connectcors.AllowedMethods(),
		AllowedHeaders: connectcors.AllowedHeaders(),
		ExposedHeaders: connectcors.ExposedHeaders(),
		MaxAge:         7200,
	})
}

// connStreams counts the streams open on one connection.
type connStreams struct{ n atomic.Int32 }

type connKey struct{}

// ConnContext marks a server's connections so that streams are capped per
// connection (http.Server.ConnContext).
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connStreams{})
}

func connOf(ctx context.Context) *connStreams {
	c, _ := ctx.Value(connKey{}).(*connStreams)
	return c
}

// network answers NetworkService: the address book is not served here.
type network struct{}

func (network) GetNodes(context.Context, *connect.Request[mirrorpb.AddressBookQuery], *connect.ServerStream[mirrorpb.NodeAddress]) error {
	return connect.NewError(connect.CodeUnimplemented,
		errors.New("NetworkService.getNodes is not served: this service answers topic queries only; ask a mirror node for the address book"))
}
