package graph

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/live"
)

// IsStream tells the requests that open a subscription stream: a WebSocket
// upgrade or a server-sent events POST of the GraphQL endpoint. They live
// for hours, so what bounds a request (its deadline, compression into one
// buffer) must leave them alone; each of their writes is bounded instead.
func IsStream(r *http.Request) bool {
	return r.URL.Path == Endpoint && (r.Header.Get("Upgrade") != "" || wantsEventStream(r))
}

func wantsEventStream(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// stream is a subscription transport's connection as a resolver sees it.
type stream struct {
	// subscriptions open on it, against the per-connection cap
	active atomic.Int32
	// fail reports the error that ends an operation after its first
	// message: the WebSocket transport sends it as an `error` message, the
	// SSE transport as a last `next` event.
	fail func(ctx context.Context, err *gqlerror.Error)
}

type streamKey struct{}

func withStream(ctx context.Context, s *stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

func streamOf(ctx context.Context) *stream {
	s, _ := ctx.Value(streamKey{}).(*stream)
	return s
}

// Streams are the subscription connections of the GraphQL face and the
// hub that feeds them; Shutdown completes them all.
type Streams struct {
	hub *live.Hub

	mu      sync.Mutex
	conns   map[*wsConn]struct{}
	closing bool
	gone    chan struct{} // closed when the last connection closes after closing
}

// NewStreams is the registry of a face whose subscriptions hub feeds (nil:
// subscriptions are off).
func NewStreams(hub *live.Hub) *Streams {
	return &Streams{hub: hub, conns: map[*wsConn]struct{}{}}
}

// Hub is the live hub, nil when subscriptions are off.
func (s *Streams) Hub() *live.Hub { return s.hub }

// Shutdown completes every subscription (each stream gets its `complete`),
// then closes every WebSocket with 1001 (going away); it returns when all
// are closed, or when ctx ends.
func (s *Streams) Shutdown(ctx context.Context) error {
	if s.hub != nil {
		if err := s.hub.Shutdown(ctx); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.closing = true
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	if len(s.conns) > 0 {
		s.gone = make(chan struct{})
	}
	gone := s.gone
	s.mu.Unlock()
	for _, c := range conns {
		c.goAway()
	}
	if gone == nil {
		return nil
	}
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Streams) add(c *wsConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Streams) remove(c *wsConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.closing && len(s.conns) == 0 && s.gone != nil {
		close(s.gone)
		s.gone = nil
	}
}

func (s *Streams) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// StreamOptions are the settings of the subscription transports.
type StreamOptions struct {
	// KeepAlive is the interval of pings on idle streams (15 s): WebSocket
	// pings (graphql-transport-ws; a client that answers none in two
	// intervals is dropped), `ka` messages (legacy graphql-ws) and SSE
	// comments.
	KeepAlive time.Duration
	// WriteTimeout bounds every write to a stream (10 s): a client that
	// stops reading is disconnected, not waited on.
	WriteTimeout time.Duration
	// InitTimeout is how long a WebSocket may take to send connection_init
	// (10 s).
	InitTimeout time.Duration
	// Origins are the allowed Origin headers of WebSocket upgrades; empty or
	// "*" allows all (the data is public, and REST answers CORS *).
	Origins []string
	// MaxPerConnection caps the subscriptions of one WebSocket (10).
	MaxPerConnection int
}

func (o StreamOptions) withDefaults() StreamOptions {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = 10 * time.Second
	}
	if o.MaxPerConnection <= 0 {
		o.MaxPerConnection = 10
	}
	return o
}

// websocketTransport is gqlgen's WebSocket transport (graphql-transport-ws
// and legacy graphql-ws) on connections that bound every write and can be
// closed as going away.
func (s *Streams) websocketTransport(o StreamOptions) transport.Websocket {
	return transport.Websocket{
		Implementation: gorillaSockets{websocket.Upgrader{
			CheckOrigin: originCheck(o.Origins),
			// Small buffers, the write buffer shared between messages: an
			// idle subscription should cost little memory.
			ReadBufferSize:  1024,
			WriteBufferSize: 1024,
			WriteBufferPool: &sync.Pool{},
		}},
		InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			if s.isClosing() {
				return ctx, nil, errors.New("the server is shutting down")
			}
			if c := connOf(ctx); c != nil {
				ctx = c.cancelable(ctx)
			}
			st := &stream{fail: func(ctx context.Context, err *gqlerror.Error) { transport.AddSubscriptionError(ctx, err) }}
			return withStream(ctx, st), nil, nil
		},
		InitTimeout:           o.InitTimeout,
		KeepAlivePingInterval: o.KeepAlive,
		PingPongInterval:      o.KeepAlive,
	}
}

func originCheck(origins []string) func(*http.Request) bool {
	allowed := map[string]bool{}
	for _, o := range origins {
		if o = strings.TrimSpace(o); o == "*" {
			return func(*http.Request) bool { return true }
		} else if o != "" {
			allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
		}
	}
	if len(allowed) == 0 {
		return func(*http.Request) bool { return true }
	}
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		return origin == "" || allowed[strings.ToLower(origin)] || sameHost(origin, r.Host)
	}
}

// sameHost: the page that opens the WebSocket is this service's own (the
// explorer, the dashboard), which a list of other origins must not lock out.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// upgrading hands gqlgen's upgrader a writer whose hijacked connection is a
// wsConn, registered in s, and finds it again from the request's context.
func (s *Streams) upgrading(next http.Handler, writeTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			next.ServeHTTP(w, r)
			return
		}
		if s.isClosing() {
			http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
			return
		}
		h := &connHolder{}
		r = r.WithContext(context.WithValue(r.Context(), connKey{}, h))
		next.ServeHTTP(hijacker{ResponseWriter: w, streams: s, holder: h, writeTimeout: writeTimeout}, r)
	})
}

type connKey struct{}

type connHolder struct{ c *wsConn }

func connOf(ctx context.Context) *wsConn {
	if h, ok := ctx.Value(connKey{}).(*connHolder); ok {
		return h.c
	}
	return nil
}

type hijacker struct {
	http.ResponseWriter
	streams      *Streams
	holder       *connHolder
	writeTimeout time.Duration
}

func (h hijacker) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	raw, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The server's read timeout bounds a request; this socket lives on.
	_ = raw.SetReadDeadline(time.Time{})
	c := &wsConn{Conn: raw, writeTimeout: h.writeTimeout, streams: h.streams}
	if !h.streams.add(c) {
		_ = raw.Close()
		return nil, nil, errors.New("the server is shutting down")
	}
	h.holder.c = c
	return c, brw, nil
}

// wsConn is a hijacked WebSocket connection: every write gets its own
// deadline (gorilla's writes have none unless asked, and gqlgen asks for
// none, so a client that stopped reading would block its writer forever),
// a failed write closes the connection so that its reader and every
// subscription on it end, and at shutdown its close frame says 1001.
type wsConn struct {
	net.Conn
	writeTimeout time.Duration
	streams      *Streams
	goingAway    atomic.Bool
	closed       atomic.Bool

	mu     sync.Mutex
	cancel context.CancelFunc
}

// cancelable is ctx, ended by goAway: gqlgen then closes the connection.
func (c *wsConn) cancelable(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	return ctx
}

// SetWriteDeadline is ignored: Write sets one for every write.
func (c *wsConn) SetWriteDeadline(time.Time) error { return nil }

func (c *wsConn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

func (c *wsConn) Write(b []byte) (int, error) {
	out := b
	if c.goingAway.Load() {
		out = goingAwayFrame(b)
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	if _, err := c.Conn.Write(out); err != nil {
		_ = c.Close()
		return 0, err
	}
	return len(b), nil
}

func (c *wsConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	err := c.Conn.Close()
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.streams.remove(c)
	return err
}

// goAway ends the connection as the server shuts down: gqlgen closes it when
// its context ends, with a close frame that Write turns into 1001.
func (c *wsConn) goAway() {
	c.goingAway.Store(true)
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel == nil { // not initialised: nothing of gqlgen's to end
		_ = c.Close()
		return
	}
	cancel()
}

// goingAwayFrame is b with its status code replaced by 1001 when b is a
// server's close frame (FIN and opcode 8, unmasked, its whole payload in
// b), which gqlgen always sends as 1000.
func goingAwayFrame(b []byte) []byte {
	if len(b) < 4 || b[0] != 0x88 || b[1]&0x80 != 0 || int(b[1]&0x7f) != len(b)-2 {
		return b
	}
	const reason = "server shutting down"
	out := make([]byte, 0, 4+len(reason))
	out = append(out, 0x88, byte(2+len(reason)), byte(websocket.CloseGoingAway>>8), byte(websocket.CloseGoingAway&0xff))
	return append(out, reason...)
}

// streamLoaders gives every response of a subscription dataloaders of its
// own: the request's would cache rows for the hours a stream lives.
type streamLoaders struct {
	fresh func(context.Context) context.Context
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = streamLoaders{}

func (streamLoaders) ExtensionName() string                   { return "StreamLoaders" }
func (streamLoaders) Validate(graphql.ExecutableSchema) error { return nil }

func (l streamLoaders) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if streamOf(ctx) != nil {
		ctx = l.fresh(ctx)
	}
	return next(ctx)
}
