package config

import (
	"strings"
	"testing"
)

func TestLimitsDefaults(t *testing.T) {
	clearEnv(t)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxURLLength != 16384 || c.MaxHeaderBytes != 32768 || c.MaxBodyBytes != 1<<20 || c.RateLimit != 0 || c.RateBurst != 50 {
		t.Errorf("limits defaults: url %d, header %d, body %d, rate %v, burst %d",
			c.MaxURLLength, c.MaxHeaderBytes, c.MaxBodyBytes, c.RateLimit, c.RateBurst)
	}
}

func TestLimitsValidated(t *testing.T) {
	for _, c := range []struct{ name, value, complaint string }{
		{"MAX_URL_LENGTH", "10", "MIRRORQL_MAX_URL_LENGTH must be between 256 and 65536"},
		{"MAX_URL_LENGTH", "70000", "MIRRORQL_MAX_URL_LENGTH must be between 256 and 65536"},
		{"MAX_HEADER_BYTES", "100", "MIRRORQL_MAX_HEADER_BYTES must be between 1024 and 65536"},
		{"MAX_HEADER_BYTES", "1000000", "MIRRORQL_MAX_HEADER_BYTES must be between 1024 and 65536"},
		{"MAX_BODY_BYTES", "0", "MIRRORQL_MAX_BODY_BYTES must be at least 1024"},
		{"RATE_LIMIT", "-1", "MIRRORQL_RATE_LIMIT must be"},
		{"RATE_LIMIT", "NaN", "MIRRORQL_RATE_LIMIT must be"},
		{"RATE_LIMIT", "x", "RateLimit"}, // the env library names the field
		{"RATE_BURST", "0", "MIRRORQL_RATE_BURST must be at least 1"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(Prefix+c.name, c.value)
			_, err := Load()
			if err == nil || !strings.Contains(err.Error(), c.complaint) {
				t.Errorf("err = %v, want one saying %q", err, c.complaint)
			}
		})
	}
	clearEnv(t)
	t.Setenv(Prefix+"RATE_LIMIT", "2.5")
	t.Setenv(Prefix+"RATE_BURST", "5")
	if c, err := Load(); err != nil || c.RateLimit != 2.5 || c.RateBurst != 5 {
		t.Errorf("rate 2.5 burst 5: %+v, %v", c.RateLimit, err)
	}
}

func TestRedact(t *testing.T) {
	got := Redact("postgres://mirror:s3cr3t@db:5432/mirror_node?sslmode=disable")
	if got != "postgres://mirror:xxxxx@db:5432/mirror_node?sslmode=disable" {
		t.Errorf("Redact: %q", got)
	}
}
