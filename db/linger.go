package db

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// lingerTimeout bounds how long closing a connection waits for the server's
// backend to go.
const lingerTimeout = time.Second

// lingerDial wraps a driver's dial function so that closing a connection
// waits until the server has ended its backend (it closes its end of the
// socket), up to lingerTimeout.
//
// database/sql counts a connection as closed, and may open a replacement,
// once the driver's Close returns. pgx closes without waiting, while the
// backend, maybe blocked on a lock, notices the closed socket only
// at its next read or connection check (setConnectionCheck): meanwhile the
// server would count the old backend and the new one, more than the pool's
// size. Waiting here keeps the backends within the pool.
func lingerDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lingerConn{Conn: c}, nil
	}
}

type lingerConn struct {
	net.Conn
	heard atomic.Bool // the server has sent something: a backend serves this connection
}

func (c *lingerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

// Close half-closes the socket, reads (and drops) whatever the server still
// sends until it closes its end, then closes. A connection the server never
// answered (a connect that timed out against a server that accepts and says
// nothing) has no backend to wait for and closes at once.
func (c *lingerConn) Close() error {
	if !c.heard.Load() {
		return c.Conn.Close()
	}
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
		if c.Conn.SetReadDeadline(time.Now().Add(lingerTimeout)) == nil {
			_, _ = io.Copy(io.Discard, c.Conn)
		}
	}
	return c.Conn.Close()
}
