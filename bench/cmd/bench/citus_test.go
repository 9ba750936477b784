package main

import (
	"fmt"
	"strings"
	"testing"

	"mirrorql/bench/loadgen"
)

func TestCitusPlanTasks(t *testing.T) {
	tests := []struct {
		name  string
		plan  string
		tasks int
		kind  string
	}{
		{"router", `Custom Scan (Citus Adaptive)
  Task Count: 1
  Tasks Shown: All
  ->  Task
        Node: host=127.0.0.1 port=40001 dbname=x
        ->  Index Scan using topic_message_p2026_01_pkey_102040 on topic_message_p2026_01_102040 topic_message`, 1, "router"},
		{"fan-out", `Limit
  ->  Custom Scan (Citus Adaptive)
        Task Count: 16
        Tasks Shown: One of 16`, 16, "fan-out"},
		{"a subplan first, then a router", `Custom Scan (Citus Adaptive)
  ->  Distributed Subplan 12_1
        ->  Custom Scan (Citus Adaptive)
              Task Count: 16
              Tasks Shown: One of 16
  Task Count: 1
  Tasks Shown: All`, 17, "fan-out"},
		{"a subplan of one task", `Custom Scan (Citus Adaptive)
  ->  Distributed Subplan 3_1
        ->  Custom Scan (Citus Adaptive)
              Task Count: 1
  Task Count: 1`, 2, "fan-out"},
		{"pruned to no shard", `Custom Scan (Citus Adaptive)
  Task Count: 0`, 0, "coordinator"},
		{"the coordinator's catalog", `Result
  InitPlan 1 (returns $0)
    ->  Index Scan using pg_class_oid_index on pg_class c`, 0, "coordinator"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tasks, kind := citusPlanTasks(tc.plan)
			if tasks != tc.tasks || kind != tc.kind {
				t.Errorf("citusPlanTasks = %d, %q; want %d, %q", tasks, kind, tc.tasks, tc.kind)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		stat string
		want procStat
		ok   bool
	}{
		{"postmaster", "2277 (postgres) S 1 2277 2277 0 -1 4194560 9000 80000 0 3 120 45 900 310 20 0 1 0 4000 231000000 7000",
			procStat{ppid: 1, utime: 120, stime: 45, cutime: 900, cstime: 310}, true},
		// a command may hold spaces and parentheses: fields start after the last ')'
		{"odd command", "17 (postgres: a (b) c) R 2277 17 17 0 -1 0 1 0 0 0 7 3 0 0 20 0 1 0 5 1 1",
			procStat{ppid: 2277, utime: 7, stime: 3}, true},
		{"cut short", "17 (postgres) R 2277 17", procStat{}, false},
		{"no command", "garbage", procStat{}, false},
		{"not a number", "17 (x) R 2277 17 17 0 -1 0 1 0 0 0 u 3 0 0 20 0 1 0 5 1 1", procStat{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStat(tc.stat)
			if ok != tc.ok || got != tc.want {
				t.Errorf("parseStat = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRequestPath(t *testing.T) {
	tests := []struct {
		name      string
		raw       []byte
		path, bod string
	}{
		{"GET", loadgen.Get("127.0.0.1:8080", "/api/v1/topics/0.0.2001/messages?limit=25"), "/api/v1/topics/0.0.2001/messages?limit=25", ""},
		{"GraphQL POST", loadgen.PostJSON("127.0.0.1:8080", "/graphql", []byte(`{"query":"{ a }"}`)), "/graphql", `{"query":"{ a }"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := requestPath(tc.raw)
			if err != nil || p.path != tc.path || p.body != tc.bod {
				t.Errorf("requestPath = %+v, %v; want path %q, body %q", p, err, tc.path, tc.bod)
			}
		})
	}
}

// TestCitusGQLPairs: each side's GraphQL ÷ REST, each route's Citus ÷
// plain and the difference of the two, medians of the rounds'; the target
// on the page alone.
func TestCitusGQLPairs(t *testing.T) {
	m := func(name string, rps float64) measurement { return measurement{route: route{name: name}, rps: rps} }
	ms := func(name string, rps ...float64) []measurement {
		var out []measurement
		for _, v := range rps {
			out = append(out, m(name, v))
		}
		return out
	}
	r := &citusReport{pairs: map[string]*citusPair{
		// REST's page loses 0.7 of its rate on Citus, GraphQL's 0.4: Citus
		// ÷ plain 0.3 against 0.6
		"list-gt-100":     {plain: ms("list-gt-100", 3000, 3000, 3000), citus: ms("list-gt-100", 900, 900, 1200)},
		"gql-list-gt-100": {plain: ms("gql-list-gt-100", 1000, 1000, 1000), citus: ms("gql-list-gt-100", 600, 620, 600)},
		"by-sequence":     {plain: ms("by-sequence", 10000, 10000), citus: ms("by-sequence", 5000, 5000)},
		"gql-message":     {plain: ms("gql-message", 9000, 9000), citus: ms("gql-message", 4000, 4000)},
		// activity has no twin: left out
		"gql-activity": {plain: ms("gql-activity", 1000), citus: ms("gql-activity", 400)},
	}}
	pairs := r.gqlPairs()
	if len(pairs) != 2 || pairs[0].pair.gql != "gql-list-gt-100" || pairs[1].pair.gql != "gql-message" {
		t.Fatalf("%+v", pairs)
	}
	l := pairs[0]
	if !near(l.restCitus, 0.3) || !near(l.gqlCitus, 0.6) || !near(l.diff, 0.3) || !near(l.plainRatio, 1.0/3) || !near(l.citusRatio, 600.0/900) || l.rounds != 3 {
		t.Errorf("list: %+v", l)
	}
	var b strings.Builder
	r.gqlBesideREST(func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) })
	for _, want := range []string{"| `gql-list-gt-100` ↔ `list-gt-100` | 0.333 | 0.667 | 0.300 | 0.600 | **+0.300** | within ±0.1: **not met** |",
		"| `gql-message` ↔ `by-sequence` | 0.900 | 0.800 | 0.500 | 0.444 | **-0.056** | – |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}
