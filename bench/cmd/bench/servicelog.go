package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// logSummary is what a run keeps of the service's log. The whole log is a
// line per request (hundreds of MiB over a soak), too big to keep; what
// explains an error is in the other lines — start-up, "database
// unavailable", a failed request's own line — so those are kept verbatim,
// and the 200s only counted.
type logSummary struct {
	lines, bytes int64
	errorLines   int64         // level ERROR
	byStatus     map[int]int64 // request lines by status
	kept         []string      // every line but a 200's request line, up to keepLines
	dropped      int64         // lines that would have been kept beyond keepLines
}

// keepLines bounds the kept lines: a run that fails every request keeps the
// first ones, which say why, and counts the rest.
const keepLines = 2000

// summarizeLog reads the service's JSON log at path.
func summarizeLog(path string) (logSummary, error) {
	s := logSummary{byStatus: map[int]int64{}}
	fh, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		s.lines++
		s.bytes += int64(len(line)) + 1
		if bytes.Contains(line, []byte(`"level":"ERROR"`)) {
			s.errorLines++
		}
		var rec struct {
			Msg    string `json:"msg"`
			Status int    `json:"status"`
		}
		isRequest := false
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "request" && rec.Status != 0 {
			isRequest = true
			s.byStatus[rec.Status]++
		}
		if isRequest && rec.Status == 200 {
			continue
		}
		if len(s.kept) >= keepLines {
			s.dropped++
			continue
		}
		s.kept = append(s.kept, string(line))
	}
	return s, sc.Err()
}

// statuses is byStatus as "200: 1935796, 503: 3".
func (s logSummary) statuses() string {
	var codes []int
	for c := range s.byStatus {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d: %d", c, s.byStatus[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// write puts the kept lines into path under a header that says what they
// are and what was left out.
func (s logSummary) write(path, what string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# The service log of %s: every line but the request lines of 200s (generated; replaced by each run).\n", what)
	fmt.Fprintf(&b, "# %d lines (%.1f MiB) in all, %d at level ERROR; request lines by status: %s.\n",
		s.lines, float64(s.bytes)/(1<<20), s.errorLines, s.statuses())
	if s.dropped > 0 {
		fmt.Fprintf(&b, "# %d more lines beyond the first %d kept were left out.\n", s.dropped, keepLines)
	}
	for _, l := range s.kept {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
