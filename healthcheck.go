package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"mirrorql/config"
	"mirrorql/service"
)

// healthcheck asks the service listening on MIRRORQL_LISTEN whether it is
// ready: nil on 200 from /health/readiness. For container health checks on
// images without curl.
func healthcheck(ctx context.Context, cfg config.Config) error {
	url := "http://" + loopback(cfg.Listen) + service.RouteReadiness
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}

// loopback turns a listen address into one to connect to: an unspecified
// host (":8080", "0.0.0.0:8080", "[::]:8080") becomes 127.0.0.1.
func loopback(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
