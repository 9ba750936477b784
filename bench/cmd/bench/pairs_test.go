package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRoutePairs: every pair names routes buildRoutes makes, a GraphQL one
// beside a REST one, both run in the paired rounds, and bench/handler
// benchmarks `make bench` runs.
func TestRoutePairs(t *testing.T) {
	routes := buildRoutes(smallOptions(), "127.0.0.1:1", hotWindow{})
	byName := map[string]route{}
	for _, r := range routes {
		byName[r.name] = r
	}
	src, err := os.ReadFile("../../handler/profile_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range routePairs {
		g, ok := byName[p.gql]
		if !ok || !g.graphql {
			t.Errorf("%s: not a GraphQL route of buildRoutes", p.gql)
		}
		r, ok := byName[p.rest]
		if !ok || r.graphql {
			t.Errorf("%s: not a REST route of buildRoutes", p.rest)
		}
		// the two on services with the same settings: both in a round
		// on the same process, and in one -ab group
		if strings.Join(g.serviceEnv, ",") != strings.Join(r.serviceEnv, ",") {
			t.Errorf("%s ↔ %s: services with settings %v and %v", p.gql, p.rest, g.serviceEnv, r.serviceEnv)
		}
		gi, ri := slices.Index(targetRoutes, p.gql), slices.Index(targetRoutes, p.rest)
		if gi < 0 || ri < 0 || gi < ri {
			t.Errorf("%s ↔ %s: not both in the paired rounds, REST first (%d, %d)", p.gql, p.rest, ri, gi)
		}
		for _, b := range []string{p.gqlBench, p.restBench} {
			if !slices.ContainsFunc(profiled, func(pb profiledBench) bool { return pb.name == b }) {
				t.Errorf("%s: benchmark %s is not profiled", p.gql, b)
			}
		}
	}
	for _, pb := range profiled {
		if !strings.Contains(string(src), "func Benchmark"+pb.name+"(b *testing.B)") {
			t.Errorf("bench/handler has no Benchmark%s", pb.name)
		}
	}
	// the GraphQL routes a pair names come right after their REST twin
	// in a round where nothing else is set beside that REST route
	for _, name := range []string{"gql-message", "gql-list-gt-100", "gql-schedules"} {
		i := slices.Index(targetRoutes, name)
		p := routePairs[slices.IndexFunc(routePairs, func(p routePair) bool { return p.gql == name })]
		if i < 1 || targetRoutes[i-1] != p.rest {
			t.Errorf("%s does not follow %s in a round: %v", name, p.rest, targetRoutes)
		}
	}
}

// TestTopicPageRoute: the nested page asks for list-gt-100's page of the
// hot topic under the topic, with the topic's fields and pageInfo.
func TestTopicPageRoute(t *testing.T) {
	routes := buildRoutes(smallOptions(), "127.0.0.1:1", hotWindow{})
	i := slices.IndexFunc(routes, func(r route) bool { return r.name == "gql-topic-page" })
	if i < 0 {
		t.Fatal("no gql-topic-page route")
	}
	r := routes[i]
	if !r.graphql || r.check == nil || r.verify == nil || r.firstConnsOnly {
		t.Fatalf("route %+v", r)
	}
	gt := regexp.MustCompile(`"gt":(\d+)`)
	hot := smallOptions().TopicMessages(0)
	for _, req := range r.reqs[:200] {
		body := string(req)
		for _, want := range []string{"topic(id: $t) { id memo ", "autoRenewPeriod", "messages(sequenceNumber: {gt: $gt}, first: 100)",
			"runningHashVersion", "chunkInfo", "pageInfo { hasNextPage endCursor }", `"t":"0.0.2001"`} {
			if !strings.Contains(body, want) {
				t.Fatalf("request lacks %s: %q", want, body)
			}
		}
		m := gt.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no $gt: %q", body)
		}
		if n, _ := strconv.ParseInt(m[1], 10, 64); n < 0 || n > hot-100 {
			t.Fatalf("$gt %d outside [0, %d]", n, hot-100)
		}
	}
	page := func(n int, next bool, cursor string) []byte {
		nodes := strings.TrimSuffix(strings.Repeat(`{"sequenceNumber":1},`, n), ",")
		return []byte(`{"data":{"topic":{"id":"0.0.2001","messages":{"nodes":[` + nodes + `],"pageInfo":{"hasNextPage":` +
			strconv.FormatBool(next) + `,"endCursor":"` + cursor + `"}}}}}`)
	}
	if err := r.verify(page(100, true, "abc")); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]byte{page(99, true, "abc"), page(100, false, "abc"), page(100, true, ""), []byte(`{"data":{"topic":null}}`)} {
		if r.verify(bad) == nil {
			t.Errorf("passed: %s", bad[len(bad)-60:])
		}
	}
}

// TestSchedulesPair: REST's uncached page of 100 schedules and GraphQL's,
// from the same range of ids, on a service without the response cache.
func TestSchedulesPair(t *testing.T) {
	routes := buildRoutes(largeOptions(20_000), "127.0.0.1:1", hotWindow{})
	first := largeOptions(20_000).FirstScheduleNum()
	rest := routes[slices.IndexFunc(routes, func(r route) bool { return r.name == "schedules-gt-100" })]
	gql := routes[slices.IndexFunc(routes, func(r route) bool { return r.name == "gql-schedules" })]
	restRE := regexp.MustCompile(`^GET /api/v1/schedules\?schedule\.id=gt:0\.0\.(\d+)&limit=100 HTTP/1\.1\r\n`)
	gqlRE := regexp.MustCompile(`"gt":"0\.0\.(\d+)"`)
	for i := range 200 {
		for _, c := range []struct {
			re  *regexp.Regexp
			req []byte
		}{{restRE, rest.reqs[i]}, {gqlRE, gql.reqs[i]}} {
			m := c.re.FindSubmatch(c.req)
			if m == nil {
				t.Fatalf("%q", c.req)
			}
			if n, _ := strconv.ParseInt(string(m[1]), 10, 64); n < first || n >= first+20_000-100 {
				t.Fatalf("schedule %d outside a full page", n)
			}
		}
	}
	if !strings.Contains(string(gql.reqs[0]), "schedules(first: 100, scheduleId: {gt: $gt})") {
		t.Errorf("%q", gql.reqs[0])
	}
	for _, r := range []route{rest, gql} {
		if !slices.Equal(r.serviceEnv, []string{"MIRRORQL_CACHE_ENABLED=false"}) || !r.firstConnsOnly {
			t.Errorf("%s: %+v", r.name, r)
		}
	}
}

func TestBenchMetrics(t *testing.T) {
	line := "531 2468245 ns/op 100.2 goroutines/op 191.0 peak-goroutines 21.85 peak-heap-MiB 2.500 peak-stacks-MiB 643297 B/op 9247 allocs/op"
	m := benchMetrics(line)
	want := map[string]float64{"ns/op": 2468245, "goroutines/op": 100.2, "peak-goroutines": 191, "peak-heap-MiB": 21.85,
		"peak-stacks-MiB": 2.5, "B/op": 643297, "allocs/op": 9247}
	if len(m) != len(want) {
		t.Fatalf("%v", m)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if m := benchMetrics(""); len(m) != 0 {
		t.Errorf("empty line: %v", m)
	}
	// as profiles finds it in go test's output, a log line in between
	out := "BenchmarkListGt100-2   \t2026/11/28 18:34:06 INFO database available\n     986\t   1261529 ns/op\t  0.1755 goroutines/op\t  77340 B/op\t  399 allocs/op\nPASS\n"
	if m := benchMetrics(benchLineRE.FindString(out)); m["ns/op"] != 1261529 || m["allocs/op"] != 399 || m["goroutines/op"] != 0.1755 {
		t.Errorf("from go test's output: %v", m)
	}
}

func TestMedianMid(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := medianMid(tc.v); got != tc.want {
			t.Errorf("medianMid(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// pairReport is a run with the list pair in two rounds, the message pair
// in the single pass only, and their benchmarks.
func pairReport() *report {
	rt := func(name, title string) route { return route{name: name, title: title} }
	list, gql := rt("list-gt-100", "REST list seq gt, limit=100"), rt("gql-list-gt-100", "GraphQL list seq gt, first 100")
	seq, msg := rt("by-sequence", "REST by sequence"), rt("gql-message", "GraphQL topicMessage")
	m := func(r route, rps, cpuMS float64) measurement {
		return measurement{route: r, conns: 32, rps: rps, cpuPer1k: cpuMS, requests: 1000}
	}
	return &report{
		flags: flags{conns: []int{32, 64}, profileTime: 5 * time.Second, targetDuration: 5 * time.Second, shortDuration: 2 * time.Second},
		rows:  []measurement{m(seq, 8000, 0.08), m(msg, 7000, 0.09), m(list, 3000, 0.4), m(gql, 600, 2.0)},
		rounds: []round{
			{rows: []measurement{m(list, 2000, 0.4), m(gql, 600, 2.0)}},  // 0.3, CPU 5
			{rows: []measurement{m(list, 3000, 0.5), m(gql, 1200, 1.0)}}, // 0.4, CPU 2
		},
		profiles: []profileResult{
			{bench: "BenchmarkListGt100", metrics: map[string]float64{"ns/op": 1_000_000, "allocs/op": 400, "goroutines/op": 0.18}},
			{bench: "BenchmarkGraphQLListGt100", metrics: map[string]float64{"ns/op": 2_500_000, "allocs/op": 9200, "goroutines/op": 100.2,
				"peak-goroutines": 191, "B/op": 643297, "peak-heap-MiB": 21.85}},
			{bench: "BenchmarkGraphQLActivity", metrics: map[string]float64{"ns/op": 700_000, "allocs/op": 900}},
		},
	}
}

func TestPairFigures(t *testing.T) {
	r := pairReport()
	figs := r.pairFigures()
	byName := map[string]pairFigures{}
	for _, f := range figs {
		byName[f.pair.gql] = f
	}
	l, ok := byName["gql-list-gt-100"]
	if !ok {
		t.Fatalf("no list pair: %+v", figs)
	}
	// from the rounds: the medians of the rounds' ratios (0.3 and 0.4; 5
	// and 2), and of the rates and CPU
	if l.rounds != 2 || !near(l.rpsRatio, 0.35) || !near(l.cpuRatio, 3.5) || l.restRPS != 2500 || l.gqlRPS != 900 ||
		!near(l.restCPU, 0.45) || !near(l.gqlCPU, 1.5) {
		t.Errorf("list pair: %+v", l)
	}
	// the message pair ran in the single pass only
	if m := byName["gql-message"]; m.rounds != 0 || !near(m.rpsRatio, 7000.0/8000) || !near(m.cpuRatio, 0.09/0.08) {
		t.Errorf("message pair: %+v", m)
	}
	// the nested page shares list-gt-100's benchmark but ran in neither
	if tp := byName["gql-topic-page"]; tp.rpsRatio != 0 || tp.restProf == nil || tp.gqlProf != nil {
		t.Errorf("topic page pair: %+v", tp)
	}
	if _, ok := byName["gql-schedules"]; ok {
		t.Error("a pair with nothing measured is reported")
	}
	cells := l.cells()
	want := []string{"`gql-list-gt-100` ↔ `list-gt-100`", "2500", "900", "**0.350**", "0.450", "1.500", "**3.500**",
		"400", "9200", "**23.000**", "1000000", "2500000", "**2.500**", "0.18 / 100.20",
		"req/s ÷ ≥ 0.70: **not met**; CPU ÷ ≤ 1.5: **not met**; allocs ≤ 4624 (half of 9247 at " + allocsAt + "): **not met**"}
	if !slices.Equal(cells, want) {
		t.Errorf("cells:\n%q\nwant\n%q", cells, want)
	}
	a, ok := byName["gql-activity"]
	if got := a.cells(); !ok || got[0] != "`gql-activity` ↔ `by-sequence` (no REST twin: a reference)" || got[1] != "–" ||
		got[8] != "900" || got[9] != "–" || got[len(got)-1] != "no slower than before (`bench -ab`)" {
		t.Errorf("activity: %q", got)
	}

	s := r.summary()
	for _, want := range []string{"### GraphQL beside REST (the same data)", "the 2 paired rounds at 32 connections",
		"| `gql-list-gt-100` ↔ `list-gt-100` | 2500 | 900 | **0.350** |",
		"| `gql-message` ↔ `by-sequence` (single pass: not in the rounds) | 8000 | 7000 | **0.875** |"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	var b strings.Builder
	r.inProcessMarkdown(func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) })
	if want := "| GraphQLListGt100 | 2500000 | 643297 | 9200 | 100.20 | 191 | 21.9 |"; !strings.Contains(b.String(), want) {
		t.Errorf("in process lacks %q:\n%s", want, b.String())
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
