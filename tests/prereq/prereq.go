// Package prereq ends a test that lacks something it needs from the machine
// (PostgreSQL binaries, Redis, Chromium, node, pgbouncer): in CI it fails,
// since nothing the tests need is optional there (.ci/run installs it all);
// elsewhere the test is skipped. It imports nothing of the project, so any
// package's tests may use it.
package prereq

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run in CI: CI is set, and not to false or 0.
func InCI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}

// Missing ends the test, saying why: it fails in CI and skips elsewhere.
func Missing(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatal(why + " (CI is set: a missing prerequisite fails the test)")
	}
	t.Skip(why)
}

// Missingf is Missing with a format.
func Missingf(t testing.TB, format string, args ...any) {
	t.Helper()
	Missing(t, fmt.Sprintf(format, args...))
}
