package observe

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is the destination: written by the buffer's timer.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) read() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.writes
}

func TestLogBufferWritesBlocksAfterDelay(t *testing.T) {
	dst := &lockedBuffer{}
	b := NewLogBuffer(dst, 4096, 30*time.Millisecond)
	for i := 0; i < 10; i++ {
		b.Write([]byte("line\n")) //nolint:errcheck
	}
	if got, _ := dst.read(); got != "" {
		t.Fatalf("written before the delay: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, writes := dst.read()
		if got == strings.Repeat("line\n", 10) {
			if writes != 1 {
				t.Errorf("%d writes for one block", writes)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the delay: %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The next line starts a new block with a timer of its own.
	b.Write([]byte("again\n")) //nolint:errcheck
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got, _ := dst.read()
		if strings.HasSuffix(got, "again\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second block not written: %q", got)
		}
	}
}

func TestLogBufferFullBlockAndFlush(t *testing.T) {
	dst := &lockedBuffer{}
	b := NewLogBuffer(dst, 16, time.Hour)
	b.Write([]byte("0123456789\n")) //nolint:errcheck
	b.Write([]byte("abcdefghij\n")) //nolint:errcheck // does not fit: the first goes out
	if got, _ := dst.read(); got != "0123456789\n" {
		t.Errorf("when full: %q", got)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := dst.read(); got != "0123456789\nabcdefghij\n" {
		t.Errorf("after Flush: %q", got)
	}
}

func TestLogBufferWritesThroughWithoutDelay(t *testing.T) {
	dst := &lockedBuffer{}
	b := NewLogBuffer(dst, 4096, 0)
	b.Write([]byte("now\n")) //nolint:errcheck
	if got, _ := dst.read(); got != "now\n" {
		t.Errorf("%q", got)
	}
}

// Over a LogBuffer, access-log lines wait and every other line is written at
// once, after them, so the order holds.
func TestLoggerHoldsOnlyAccessLines(t *testing.T) {
	dst := &lockedBuffer{}
	b := NewLogBuffer(dst, 4096, time.Hour)
	log, err := NewLogger(b, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info(accessMessage, "n", 1)
	log.Info(accessMessage, "n", 2)
	if got, _ := dst.read(); got != "" {
		t.Fatalf("access lines written at once: %q", got)
	}
	log.Info("database available")
	got, _ := dst.read()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"n":1`) || !strings.Contains(lines[1], `"n":2`) ||
		!strings.Contains(lines[2], "database available") {
		t.Fatalf("after an operational line: %q", got)
	}
	log.With("k", "v").Warn(accessMessage, "n", 3) // a warning is not held
	if got, _ := dst.read(); !strings.Contains(got, `"n":3`) {
		t.Errorf("warning held: %q", got)
	}
	log.Info(accessMessage, "n", 4)
	b.Flush() //nolint:errcheck
	if got, _ := dst.read(); !strings.HasSuffix(got, "\"n\":4}\n") {
		t.Errorf("after Flush: %q", got)
	}
}
