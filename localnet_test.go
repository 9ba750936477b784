package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestLocalNetworkFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		wantHelp bool
		wantErr  error
		wantOut  string // a part of what it says
	}{
		{name: "none", args: nil},
		{name: "help", args: []string{"-h"}, wantHelp: true, wantOut: "usage: mirrorql local-network"},
		{name: "an argument", args: []string{"postgres://x"}, wantErr: errUsage, wantOut: `unexpected argument "postgres://x"`},
		{name: "a flag it has not", args: []string{"--database-url", "postgres://x"}, wantErr: errUsage, wantOut: "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			help, err := localNetworkFlags(tc.args, &out)
			if help != tc.wantHelp || !errors.Is(err, tc.wantErr) || !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("help %v, err %v, said %q; want %v, %v, %q", help, err, out.String(), tc.wantHelp, tc.wantErr, tc.wantOut)
			}
		})
	}
}

// TestFindMirrorDatabaseNone: when no candidate answers, the error names
// each, without its password, and why it failed. (Candidates that answer:
// tests/localnet_test.go.)
func TestFindMirrorDatabaseNone(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = findMirrorDatabase(context.Background(), []localDatabase{
		{"postgres://mirror_api:secret-pass@" + closed + "/mirror_node?sslmode=disable", "a closed port"},
		{"postgres://mirror_api:secret-pass@127.0.0.1:5432/x?sslmode=nonsense", "a bad URL"},
	}, time.Second)
	if err == nil {
		t.Fatal("found a database")
	}
	for _, want := range []string{
		"no mirror node database to serve",
		"postgres://mirror_api:xxxxx@" + closed + "/mirror_node?sslmode=disable (a closed port): ",
		"connection refused",
		"(a bad URL): not a database URL",
		"set MIRRORQL_DATABASE_URL",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "secret-pass") {
		t.Errorf("the error shows the password:\n%v", err)
	}
}
