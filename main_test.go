package main

import (
	"os"
	"sync"
	"testing"
)

// asMain, set to 1 in a test process's environment, has the test binary run
// as mirrorql itself (its main, os.Args its command line): tests see what
// main does with settings, its exit code and what it writes, without
// building the binary.
const asMain = "MIRRORQL_TEST_AS_MAIN"

// cleanups run after the package's tests (the clusters they share).
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}
