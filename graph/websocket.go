package graph

import (
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// gorillaSockets accepts the subscription WebSockets with gorilla/websocket,
// whose upgrade hijacks the connection through the ResponseWriter: the
// hijacker of Streams.upgrading then holds the socket (a write deadline on
// every write, 1001 at shutdown), which gqlgen's default implementation would
// not let it do.
type gorillaSockets struct{ upgrader websocket.Upgrader }

var _ transport.WebsocketImplementation = gorillaSockets{}

func (g gorillaSockets) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	u := g.upgrader
	for _, p := range o.Subprotocols {
		if !slices.Contains(u.Subprotocols, p) {
			u.Subprotocols = append(u.Subprotocols, p)
		}
	}
	c, err := u.Upgrade(w, r, o.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return gorillaSocket{c}, nil
}

// gorillaSocket is one accepted WebSocket as gqlgen's transport drives it.
type gorillaSocket struct{ c *websocket.Conn }

var _ interface {
	transport.WebsocketConn
	transport.WebsocketReadLimiter
	transport.WebsocketReadDeadliner
} = gorillaSocket{}

func (s gorillaSocket) Close() error          { return s.c.Close() }
func (s gorillaSocket) WriteJSON(v any) error { return s.c.WriteJSON(v) }
func (s gorillaSocket) Subprotocol() string   { return s.c.Subprotocol() }
func (s gorillaSocket) SetReadLimit(n int64)  { s.c.SetReadLimit(n) }

func (s gorillaSocket) SetReadDeadline(t time.Time) error { return s.c.SetReadDeadline(t) }

// NextReader reports the peer's orderly close as the transport's
// ErrWebsocketClosed, which it does not log as a failure.
func (s gorillaSocket) NextReader() (int, io.Reader, error) {
	kind, r, err := s.c.NextReader()
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
		err = transport.ErrWebsocketClosed
	}
	return kind, r, err
}

func (s gorillaSocket) WriteClose(code int, reason string) error {
	return s.c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
}
