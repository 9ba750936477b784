package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// clearEnv unsets every MIRRORQL_ variable for the test.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, Prefix) {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

func TestOperationsDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		LogFormat: "json", LogLevel: "info", ShutdownGrace: 15 * time.Second,
		HTTPReadHeaderTimeout: 5 * time.Second, HTTPReadTimeout: 15 * time.Second,
		HTTPWriteTimeout: 30 * time.Second, HTTPIdleTimeout: 120 * time.Second, RequestTimeout: 10 * time.Second,
		CacheEnabled: true, CacheEntries: 1000, RedisURL: "", RedisTimeout: 250 * time.Millisecond, RedisKeyPrefix: "mirrorql:",
	}
	got := Config{
		LogFormat: c.LogFormat, LogLevel: c.LogLevel, ShutdownGrace: c.ShutdownGrace,
		HTTPReadHeaderTimeout: c.HTTPReadHeaderTimeout, HTTPReadTimeout: c.HTTPReadTimeout,
		HTTPWriteTimeout: c.HTTPWriteTimeout, HTTPIdleTimeout: c.HTTPIdleTimeout, RequestTimeout: c.RequestTimeout,
		CacheEnabled: c.CacheEnabled, CacheEntries: c.CacheEntries, RedisURL: c.RedisURL, RedisTimeout: c.RedisTimeout,
		RedisKeyPrefix: c.RedisKeyPrefix,
	}
	if got != want {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestOperationsVariables(t *testing.T) {
	clearEnv(t)
	t.Setenv("MIRRORQL_LOG_FORMAT", "text")
	t.Setenv("MIRRORQL_LOG_LEVEL", "debug")
	t.Setenv("MIRRORQL_REQUEST_TIMEOUT", "2s")
	t.Setenv("MIRRORQL_REDIS_URL", "redis://127.0.0.1:6379/2")
	t.Setenv("MIRRORQL_CACHE_ENABLED", "false")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "text" || c.LogLevel != "debug" || c.RequestTimeout != 2*time.Second ||
		c.RedisURL != "redis://127.0.0.1:6379/2" || c.CacheEnabled {
		t.Errorf("got %+v", c)
	}
}

func TestTestVariablesIgnored(t *testing.T) {
	clearEnv(t)
	t.Setenv("MIRRORQL_TEST_DATABASE_URL", "postgres://x")
	if _, err := Load(); err != nil {
		t.Errorf("a MIRRORQL_TEST_ variable was rejected: %v", err)
	}
	t.Setenv("MIRRORQL_REDIS_ULR", "redis://x")
	if _, err := Load(); err == nil || !strings.Contains(err.Error(), "MIRRORQL_REDIS_ULR") {
		t.Errorf("typo accepted: %v", err)
	}
}

func TestOperationsValidation(t *testing.T) {
	for name, kv := range map[string][2]string{
		"LOG_FORMAT":               {"MIRRORQL_LOG_FORMAT", "xml"},
		"LOG_LEVEL":                {"MIRRORQL_LOG_LEVEL", "loud"},
		"SHUTDOWN_GRACE":           {"MIRRORQL_SHUTDOWN_GRACE", "0s"},
		"HTTP_READ_HEADER_TIMEOUT": {"MIRRORQL_HTTP_READ_HEADER_TIMEOUT", "0s"},
		"HTTP_READ_TIMEOUT":        {"MIRRORQL_HTTP_READ_TIMEOUT", "1s"},
		"HTTP_WRITE_TIMEOUT":       {"MIRRORQL_HTTP_WRITE_TIMEOUT", "10s"},
		"HTTP_IDLE_TIMEOUT":        {"MIRRORQL_HTTP_IDLE_TIMEOUT", "-1s"},
		"REQUEST_TIMEOUT":          {"MIRRORQL_REQUEST_TIMEOUT", "0s"},
		"CACHE_ENTRIES":            {"MIRRORQL_CACHE_ENTRIES", "0"},
		"REDIS_TIMEOUT":            {"MIRRORQL_REDIS_TIMEOUT", "0s"},
		"REDIS_URL":                {"MIRRORQL_REDIS_URL", "http://127.0.0.1:6379"},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(kv[0], kv[1])
			if _, err := Load(); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", kv[0], kv[1], err)
			}
		})
	}
}

func TestLiveVariables(t *testing.T) {
	clearEnv(t)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if !c.LiveEnabled || c.LivePollInterval != 250*time.Millisecond || c.LiveMaxSubscriptions != 10000 ||
		c.LiveMaxPerConnection != 10 || c.LiveKeepAlive != 15*time.Second || len(c.WSOrigins()) != 0 {
		t.Errorf("defaults: %+v", c)
	}
	t.Setenv("MIRRORQL_GRAPHQL_WS_ORIGINS", " https://a.example, http://localhost:3000 ,")
	t.Setenv("MIRRORQL_LIVE_POLL_INTERVAL", "1s")
	if c, err = Load(); err != nil {
		t.Fatal(err)
	}
	if got := c.WSOrigins(); len(got) != 2 || got[0] != "https://a.example" || got[1] != "http://localhost:3000" {
		t.Errorf("origins %q", got)
	}
	for name, value := range map[string]string{
		"MIRRORQL_GRAPHQL_WS_ORIGINS":                    "a.example",
		"MIRRORQL_LIVE_POLL_INTERVAL":                    "1ms",
		"MIRRORQL_LIVE_MAX_SUBSCRIPTIONS":                "0",
		"MIRRORQL_LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION": "0",
		"MIRRORQL_LIVE_KEEPALIVE":                        "10ms",
		"MIRRORQL_LIVE_REDIS_URL":                        "http://x",
		"MIRRORQL_LIVE_BUFFER":                           "1",
		"MIRRORQL_LIVE_OUTAGE":                           "0s",
	} {
		clearEnv(t)
		t.Setenv(name, value)
		if _, err := Load(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
}
