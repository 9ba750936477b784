package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleReport() *report {
	seq := route{name: "by-sequence", title: "REST by sequence"}
	gql := route{name: "gql-message", title: "GraphQL topicMessage"}
	m := func(r route, conns int, rps float64) measurement {
		return measurement{route: r, conns: conns, rps: rps, p99: 4 * time.Millisecond, cpuPer1k: 0.07, pgCPUPer1k: 0.02}
	}
	rd := func(tps, s, g float64) round {
		return round{floor: floor{tps: tps}, rows: []measurement{m(seq, 32, s), m(gql, 32, g)}}
	}
	return &report{
		flags:   flags{conns: []int{32, 64}, duration: 8 * time.Second, warmup: time.Second, pool: 16, targetDuration: 5 * time.Second, shortDuration: 2 * time.Second},
		started: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
		machine: []string{"CPU: 2 × test"},
		floors: []floor{{conns: 32, mode: "prepared", tps: 20_000, p99: 3 * time.Millisecond, pgCPUPer1k: 0.04},
			{conns: 32, mode: "simple", tps: 10_000}, {conns: 64, mode: "prepared", tps: 18_000, p99: 6 * time.Millisecond}},
		rows:    []measurement{m(seq, 32, 9_000), m(gql, 32, 8_000), m(seq, 64, 8_500)},
		rounds:  []round{rd(20_000, 11_000, 9_000), rd(20_000, 9_000, 8_000), rd(20_000, 10_500, 9_500)},
		peakRSS: 60 << 20,
		startup: 20 * time.Millisecond,
	}
}

func TestSummary(t *testing.T) {
	s := sampleReport().summary()
	for _, want := range []string{
		beginMarker + "\n",
		"| route | req/s at 32 | p99 ms at 32 | req/s at 64 | p99 ms at 64 | service CPU ms/req at 32 | PostgreSQL CPU ms/req at 32 | × floor at 32 |",
		"| **pgbench floor** (by-sequence SELECT, `-M prepared`) | 20000 | 3.00 | 18000 | 6.00 | – | 0.040 | 1.00 |",
		"| REST by sequence | 9000 | 4.00 | 8500 | 4.00 | 0.070 | 0.020 | 0.45 |",
		"| GraphQL topicMessage | 8000 | 4.00 | – | – | 0.070 | 0.020 | 0.40 |",
		// the single pass says not met, the rounds' median (0.525) met: the rounds decide
		"| REST by sequence ≥ 0.5 × floor at 32 conns | 9000 / 20000 = 0.450 | 0.525 | **met** |",
		"| REST by timestamp ≥ 0.5 × floor at 32 conns | not measured | – | – |",
		"| start-up to ready ≤ 1 s | 20.00 ms | – | **met** |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, endMarker) || strings.Contains(s, "EXPLAIN") {
		t.Errorf("summary:\n%s", s)
	}
}

func TestPublish(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "BENCHMARKS.md")
	prose := "# Benchmarks\n\nbefore\n\n" + beginMarker + "\nold\n" + endMarker + "\n\nafter\n"
	if err := os.WriteFile(out, []byte(prose), 0o644); err != nil {
		t.Fatal(err)
	}
	f := flags{out: out, results: filepath.Join(dir, "bench", "results")}
	whole := beginMarker + "\n\n## Last run\n\nall of it\n\n" + endMarker + "\n"
	if err := publish(f, beginMarker, endMarker, beginMarker+"\n\nshort\n", "latest.md", whole); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	want := "# Benchmarks\n\nbefore\n\n" + beginMarker + "\n\nshort\n\nThe whole report of this run: [`bench/results/latest.md`](bench/results/latest.md).\n\n" +
		endMarker + "\n\nafter\n"
	if string(b) != want {
		t.Errorf("BENCHMARKS.md:\n%s\nwant:\n%s", b, want)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "bench", "results", "latest.md"))
	if want := "<!-- generated; replaced by each run -->\n## Last run\n\nall of it\n"; string(b) != want {
		t.Errorf("latest.md:\n%q\nwant:\n%q", b, want)
	}

	// Without a results directory the whole report goes into -out.
	f.results = ""
	if err := publish(f, beginMarker, endMarker, "short", "latest.md", whole); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(out)
	if !strings.Contains(string(b), "all of it") || strings.Contains(string(b), "short") {
		t.Errorf("without -results:\n%s", b)
	}
}

func TestHead(t *testing.T) {
	report := soakBegin + "\n\n## Soak\n\nverdict\n\n" + soakDetails + " and the rest\n\nsamples\n\n" + soakEnd + "\n"
	if got, want := head(report, soakEnd, soakDetails), soakBegin+"\n\n## Soak\n\nverdict\n"; got != want {
		t.Errorf("head: %q, want %q", got, want)
	}
	if got := head(soakBegin+"\nall\n"+soakEnd+"\n", soakEnd, soakDetails); got != soakBegin+"\nall\n" {
		t.Errorf("head without the cut: %q", got)
	}
}
