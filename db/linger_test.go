package db

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestLingerClose: Close returns once the server has closed its end, and no
// later than lingerTimeout when it never does.
func TestLingerClose(t *testing.T) {
	for _, tt := range []struct {
		name        string
		silent      bool          // the server never sends a byte
		serverDelay time.Duration // after the client's end closes; <0: never closes
		min, max    time.Duration
	}{
		{"server closes at once", false, 0, 0, lingerTimeout / 2},
		{"server closes late", false, 300 * time.Millisecond, 250 * time.Millisecond, lingerTimeout},
		{"server never closes", false, -1, lingerTimeout - 50*time.Millisecond, lingerTimeout + time.Second},
		{"server never answered", true, -1, 0, lingerTimeout / 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			release := make(chan struct{})
			defer close(release)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if !tt.silent {
					_, _ = c.Write([]byte("R"))
				}
				_, _ = io.Copy(io.Discard, c) // until the client's half-close
				if tt.serverDelay < 0 {
					<-release
					return
				}
				time.Sleep(tt.serverDelay) // the scenario: a server slow to close its side
			}()
			var d net.Dialer
			c, err := lingerDial(d.DialContext)(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if !tt.silent {
				if _, err := c.Read(make([]byte, 1)); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tt.min || took > tt.max {
				t.Errorf("Close took %s, want %s to %s", took, tt.min, tt.max)
			}
		})
	}
}
