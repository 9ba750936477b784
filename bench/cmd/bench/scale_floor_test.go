package main

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"mirrorql/tools/stmtlog"
)

func TestCeilingOf(t *testing.T) {
	tests := []struct {
		name                  string
		cores, c1, tps1, tps2 float64
		want                  float64
		ok                    bool
	}{
		// a v1 request takes 1 ms; the floor adds 2/1000 − 2/2000 = 1 ms
		{"floor doubles the statement", 2, 0.001, 2000, 1000, 0.5, true},
		// 0.5 ms a request; the floor adds 2/8000 − 2/16000 = 0.125 ms
		{"small share of the request", 2, 0.0005, 16000, 8000, 0.8, true},
		{"v2's floor the faster", 2, 0.001, 1000, 2000, 1, true},
		{"same floor", 2, 0.001, 1000, 1000, 1, true},
		{"no CPU figure", 2, 0, 1000, 1000, 0, false},
		{"no floor", 2, 0.001, 0, 1000, 0, false},
		{"no v2 floor", 2, 0.001, 1000, 0, 0, false},
		{"no cores", 0, 0.001, 1000, 1000, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ceilingOf(tc.cores, tc.c1, tc.tps1, tc.tps2)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ceilingOf(%v, %v, %v, %v) = %v, %v; want %v, %v", tc.cores, tc.c1, tc.tps1, tc.tps2, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLayoutFloorRatio(t *testing.T) {
	lf := layoutFloor{
		v1: []floor{{tps: 1000}, {tps: 2000}, {tps: 1000}},
		v2: []floor{{tps: 500}, {tps: 500}, {tps: 900}},
	}
	// rounds: 0.5, 0.25, 0.9 → median 0.5
	if got := lf.ratio(); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("ratio = %v, want 0.5", got)
	}
	if got := (&layoutFloor{}).ratio(); got != 0 {
		t.Errorf("ratio without rounds = %v, want 0", got)
	}
}

// A batch's script is its statements with their values written in, several
// pipelined as the query layer pipelines them; more statements than keys,
// or one planned for its values, is refused.
func TestLookupScript(t *testing.T) {
	one := stmtlog.Statement{SQL: "SELECT 1 FROM topic_message WHERE topic_id = $1 AND sequence_number = $2 AND consensus_timestamp >= 10 AND consensus_timestamp < 20", Args: []any{int64(2001), int64(7)}}
	other := stmtlog.Statement{SQL: "SELECT 1 FROM topic_message WHERE topic_id = $1 AND sequence_number = $2 AND consensus_timestamp >= 20 AND consensus_timestamp < 30", Args: []any{int64(2001), int64(9)}}
	batch := stmtlog.Statement{SQL: "SELECT 1 FROM unnest($1::bigint[], $2::bigint[]) AS k(topic_id, sequence_number)", Args: []any{"{2001,2001}", "{7,9}"}}
	tests := []struct {
		name string
		sent []stmtlog.Statement
		k    int
		want string
		err  bool
	}{
		{"alone", []stmtlog.Statement{one}, 1,
			"SELECT 1 FROM topic_message WHERE topic_id = 2001 AND sequence_number = 7 AND consensus_timestamp >= 10 AND consensus_timestamp < 20;\n", false},
		{"v1's batch: one statement", []stmtlog.Statement{batch}, 2,
			"SELECT 1 FROM unnest('{2001,2001}'::bigint[], '{7,9}'::bigint[]) AS k(topic_id, sequence_number);\n", false},
		{"v2's batch: pipelined", []stmtlog.Statement{one, other}, 2,
			"\\startpipeline\n" +
				"SELECT 1 FROM topic_message WHERE topic_id = 2001 AND sequence_number = 7 AND consensus_timestamp >= 10 AND consensus_timestamp < 20;\n" +
				"SELECT 1 FROM topic_message WHERE topic_id = 2001 AND sequence_number = 9 AND consensus_timestamp >= 20 AND consensus_timestamp < 30;\n" +
				"\\endpipeline\n", false},
		{"more statements than keys", []stmtlog.Statement{one, other}, 1, "", true},
		{"nothing sent", nil, 1, "", true},
		{"planned for its values", []stmtlog.Statement{{SQL: one.SQL, Args: one.Args, Unprepared: true}}, 1, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lookupScript(tc.sent, tc.k)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("lookupScript = %q, %v; want %q (error: %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// The keys are k distinct sequence numbers of the topic, the same for the
// same plan, and differ from one script to the next.
func TestLookupKeys(t *testing.T) {
	p, err := newScalePlan(newScaleSpec("v2", 60_000, 300, 88, time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range lookupBatches {
		keys := lookupKeys(p, 0, k, lookupScripts)
		if len(keys) != lookupScripts {
			t.Fatalf("k=%d: %d scripts", k, len(keys))
		}
		if again := lookupKeys(p, 0, k, lookupScripts); !reflect.DeepEqual(again, keys) {
			t.Errorf("k=%d: drawn again %v, first %v", k, again, keys)
		}
		distinct := map[string]bool{}
		for _, ks := range keys {
			if len(ks) != k {
				t.Errorf("k=%d: a script of %d keys", k, len(ks))
			}
			seen := map[int64]bool{}
			for _, seq := range ks {
				if seq < 1 || seq > p.topics[0].n || seen[seq] {
					t.Errorf("k=%d: key %d in %v (the topic has %d messages)", k, seq, ks, p.topics[0].n)
				}
				seen[seq] = true
			}
			distinct[fmt.Sprint(ks)] = true
		}
		if len(distinct) < lookupScripts {
			t.Errorf("k=%d: %d distinct scripts of %d", k, len(distinct), lookupScripts)
		}
	}
	// a topic of fewer messages than k: each of them once
	if keys := lookupKeys(&scalePlan{spec: p.spec, topics: []scaleTopic{{id: 9, n: 3}}}, 0, 8, 2); len(keys[0]) != 3 {
		t.Errorf("3 messages, k=8: %v", keys)
	}
}

// The lookups have a table of their own after the routes' floors: per
// route and k, the rounds on each layout and the keys' v2 ÷ v1; the routes'
// table holds the routes alone.
func TestFloorSectionLookups(t *testing.T) {
	r := &scaleReport{floors: []*layoutFloor{
		{route: "list-25", what: "a random topic's first 25 messages", partitions: 10.8,
			v1: []floor{{tps: 30000}}, v2: []floor{{tps: 11000}}},
		{route: "by-sequence", keys: 1, statements: 1, v1: []floor{{tps: 20000}, {tps: 22000}}, v2: []floor{{tps: 19000}, {tps: 20000}}},
		{route: "by-sequence", keys: 8, statements: 7.5, v1: []floor{{tps: 10000}}, v2: []floor{{tps: 5000}}},
		{route: "by-timestamp", keys: 4, err: "no keys"},
	}}
	r.f.pool = 16
	var out strings.Builder
	r.floorSection(func(format string, a ...any) { fmt.Fprintf(&out, format+"\n", a...) })
	text := out.String()
	routes, lookups, ok := strings.Cut(text, "| route | keys a transaction (k)")
	if !ok {
		t.Fatalf("no lookups' table:\n%s", text)
	}
	if strings.Contains(routes, "| by-sequence") || !strings.Contains(routes, "| list-25 |") {
		t.Errorf("the routes' table:\n%s", routes)
	}
	for _, want := range []string{
		// v1 keys/s: the median round (the upper of two) × k; the ratio: the
		// median of the rounds' (0.95, 0.909: the upper)
		"| by-sequence | 1 | 1.0 | 20000, 22000 | 19000, 20000 | 22000 | **0.950** |",
		"| by-sequence | 8 | 7.5 | 10000 | 5000 | 80000 | **0.500** |",
		"| by-timestamp | 4 | – | – | – | – | no keys |",
	} {
		if !strings.Contains(lookups, want) {
			t.Errorf("no %q in\n%s", want, lookups)
		}
	}
	if !strings.Contains(text, "ceiling depends on the batch sizes") {
		t.Errorf("no word of what the lookups' floor means:\n%s", text)
	}
}
