package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mirrorql/tests/restdiff"
	"mirrorql/tests/testdb"
)

const restdiffDir = "testdata/restdiff"

// TestRESTDifferential replays the differential cases recorded against the
// mirror node's own REST API (tests/testdata/restdiff/README.md): every
// request target exactly as recorded, on the data set it was recorded on,
// to the built service on this run's layout; each answer must equal the
// mirror node's (status, JSON body with key order ignored, content-type,
// link, cache-control) or, where a decision says we differ, ours as
// recorded beside it.
func TestRESTDifferential(t *testing.T) {
	t.Parallel()
	for _, rec := range restdiffRecordings(t) {
		t.Run(rec, func(t *testing.T) {
			t.Parallel()
			replayRESTDiff(t, filepath.Join(restdiffDir, rec))
		})
	}
}

// restdiffRecordings are the recorded files: cases-v1.jsonl (the mirror
// node's default mode on v1), cases-v2.jsonl (its lookup mode on v2).
func restdiffRecordings(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(restdiffDir, "cases-*.jsonl"))
	if len(files) < 2 {
		t.Fatalf("recorded cases: %q, want both layouts' (see %s/README.md)", files, restdiffDir)
	}
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	return files
}

func replayRESTDiff(t *testing.T, path string) {
	cases, err := restdiff.ReadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("only %d recorded cases", len(cases))
	}
	data, err := os.ReadFile(filepath.Join(restdiffDir, "data.sql"))
	if err != nil {
		t.Fatal(err)
	}
	url, b := testdb.New(t)
	if err := testdb.LoadDump(context.Background(), b, string(data)); err != nil {
		t.Fatalf("data.sql: %v", err)
	}
	s := startServer(t, url, "MIRRORQL_CACHE_ENABLED=false")
	addr := restdiff.HostPort(s.URL)

	// A few connections at once: the cases are independent reads.
	const workers = 4
	failures := make([]string, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := &cases[i]
				got, err := restdiff.Send(addr, c.Request, 30*time.Second)
				if err != nil {
					failures[i] = err.Error()
					continue
				}
				if d := restdiff.Diff(c.Want(), got); d != "" {
					failures[i] = d
				}
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	failed := 0
	for i, f := range failures {
		if f == "" {
			continue
		}
		if failed++; failed <= 40 {
			c := &cases[i]
			why := "the mirror node's answer"
			if c.Decision != "" {
				why = "ours as recorded under " + c.Decision
			}
			t.Errorf("case %d %.300q (%s; want %s): %.800s", i, c.Target, c.Via, why, f)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d recorded cases differ", failed, len(cases))
	}
}

// TestRESTDifferentialDecisions: every decision a recorded case cites is a
// row (or the rest-java paragraph) of docs/reference/DECISIONS.md, and a
// case that cites one carries our answer.
func TestRESTDifferentialDecisions(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/reference/DECISIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	var cases []restdiff.Case
	for _, rec := range restdiffRecordings(t) {
		c, err := restdiff.ReadCases(filepath.Join(restdiffDir, rec))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c...)
	}
	for i, c := range cases {
		if c.Decision == "" {
			continue
		}
		if c.Ours == nil {
			t.Errorf("case %d cites %s without our answer", i, c.Decision)
		}
		// a row is cited by its number, the rest-java paragraph by the name it gives itself
		row := `"` + c.Decision + `"`
		if n := strings.TrimPrefix(c.Decision, "DECISIONS "); n != "rest-java" {
			row = "| " + n + " |"
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("case %d cites %s, which docs/reference/DECISIONS.md lacks", i, c.Decision)
		}
	}
}
