package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
go_memstats_heap_inuse_bytes 1.2345e+07
mirrorql_db_pool_open_connections 16
mirrorql_db_pool_open_connections_total 99
mirrorql_http_requests_total{route="/api/v1/topics/:id",status="200"} 7
mirrorql_db_pool_in_use_connections NaN
broken_line
`
	got := parseMetrics(text, "go_goroutines", "go_memstats_heap_inuse_bytes", "mirrorql_db_pool_open_connections",
		"mirrorql_http_requests_total", "absent", "mirrorql_db_pool_in_use_connections")
	if got["go_goroutines"] != 42 || got["go_memstats_heap_inuse_bytes"] != 12345000 || got["mirrorql_db_pool_open_connections"] != 16 {
		t.Fatalf("%v", got)
	}
	if _, ok := got["mirrorql_http_requests_total"]; ok { // labelled series are not the bare name
		t.Fatalf("labelled series parsed: %v", got)
	}
	if _, ok := got["absent"]; ok {
		t.Fatal("absent name present")
	}
	if v, ok := got["mirrorql_db_pool_in_use_connections"]; !ok || v == v { // NaN parses, and is NaN
		t.Fatalf("NaN: %v %v", v, ok)
	}
}

func TestFlat(t *testing.T) {
	cases := []struct {
		name   string
		values []float64
		abs    float64
		ok     bool
		judged bool
	}{
		{"steady", []float64{10, 50, 100, 101, 99, 100, 100, 102, 98}, 0, true, true},
		{"warm-up ignored", []float64{1, 1, 1, 100, 100, 100, 100, 100, 100}, 0, true, true},
		{"within 10 %", []float64{100, 100, 100, 100, 100, 100, 109, 110, 110}, 0, true, true},
		{"leak", []float64{100, 100, 100, 100, 100, 100, 115, 120, 125}, 0, false, true},
		{"small but within the margin", []float64{40, 40, 40, 40, 40, 40, 50, 50, 50}, 16, true, true},
		{"beyond the margin", []float64{40, 40, 40, 40, 40, 40, 60, 60, 60}, 16, false, true},
		{"falling", []float64{100, 100, 100, 100, 100, 100, 50, 50, 50}, 0, true, true},
		{"uneven length: last k, middle k", []float64{0, 0, 100, 100, 0, 120, 130}, 0, false, true},
		{"too short", []float64{1, 2}, 0, false, false},
	}
	for _, c := range cases {
		got := flat(c.values, 0.10, c.abs)
		if got.ok != c.ok || got.judged != c.judged {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	if got := flat([]float64{0, 0, 100, 100, 110, 110}, 0.10, 0); got.middle != 100 || got.last != 110 || got.limit != 110 || !got.ok {
		t.Errorf("means: %+v", got)
	}
}

func TestParseStatus(t *testing.T) {
	text := "Name:\tmirrorql\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n"
	if got := parseStatus(text, "VmRSS"); got != 40<<20 {
		t.Fatal(got)
	}
	if got := parseStatus(text, "VmHWM"); got != 50<<20 {
		t.Fatal(got)
	}
	if got := parseStatus(text, "VmSwap"); got != -1 {
		t.Fatal(got)
	}
}

// The soak section and the bench section live side by side in one file.
func TestWriteMarkedBothSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	bench := beginMarker + "\nbench 1\n" + endMarker + "\n"
	if err := os.WriteFile(path, []byte("# Benchmarks\n\nprose\n\n"+bench+"\nmore prose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"1", "2"} {
		if err := writeMarked(path, soakBegin, soakEnd, soakBegin+"\nsoak "+n+"\n"+soakEnd+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSection(path, strings.Replace(bench, "1", "2", 1)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# Benchmarks\n\nprose\n\n" + beginMarker + "\nbench 2\n" + endMarker + "\n\nmore prose\n\n" + soakBegin + "\nsoak 2\n" + soakEnd + "\n"
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
}

func TestSoakMix(t *testing.T) {
	all := buildRoutes(largeOptions(20_000), "127.0.0.1:1", hotWindow{})
	page := smallPageRoute("127.0.0.1:1", all)
	if len(page.reqs) != requestsPerRoute {
		t.Fatalf("%d requests", len(page.reqs))
	}
	req := string(page.reqs[0])
	if !strings.HasPrefix(req, "POST /graphql HTTP/1.1\r\n") || !strings.Contains(req, `"variables":{"t":"0.0.`) ||
		!strings.Contains(req, "first: 10") {
		t.Fatalf("%q", req)
	}
	all = append(all, page)
	for _, name := range soakRoutes {
		found := false
		for _, r := range all {
			found = found || r.name == name
		}
		if !found {
			t.Errorf("route %s of the mix does not exist", name)
		}
	}
	if got := shortDur(10 * 60e9); got != "10m" {
		t.Fatal(got)
	}
}

// TestSummarizeLog: the 200s' request lines are counted, everything else is
// kept verbatim, and the kept file says what was left out.
func TestSummarizeLog(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "service.log")
	lines := []string{
		`{"level":"INFO","msg":"database available"}`,
		`{"level":"INFO","msg":"request","status":200,"path":"/a"}`,
		`{"level":"INFO","msg":"request","status":200,"path":"/b"}`,
		`{"level":"ERROR","msg":"database unavailable","err":"dial tcp: i/o timeout"}`,
		`{"level":"INFO","msg":"request","status":503,"path":"/c"}`,
		`not json`,
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := summarizeLog(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.lines != 6 || s.errorLines != 1 || s.statuses() != "200: 2, 503: 1" || len(s.kept) != 4 {
		t.Fatalf("%+v", s)
	}
	out := filepath.Join(dir, "results", "soak-service.log")
	if err := s.write(out, "a test"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"request lines by status: 200: 2, 503: 1", lines[0], lines[3], lines[4], lines[5]} {
		if !strings.Contains(text, want) {
			t.Errorf("kept log lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"path":"/a"`) {
		t.Errorf("a 200's request line was kept:\n%s", text)
	}
}
