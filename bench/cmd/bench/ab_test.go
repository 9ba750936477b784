package main

import (
	"slices"
	"strings"
	"testing"
)

// TestABRoutes: -ab drives every route the suite has, in the paired
// rounds' order (each GraphQL route right after its REST twin), the routes
// with settings of their own in groups of their own, after the others.
func TestABRoutes(t *testing.T) {
	routes := abRoutes(flags{}, buildRoutes(smallOptions(), "127.0.0.1:1", hotWindow{}))
	if len(routes) != 15 {
		t.Fatalf("%d routes", len(routes))
	}
	var names []string
	for _, r := range routes {
		names = append(names, r.name)
	}
	if !slices.Equal(names[:len(targetRoutes)], targetRoutes) {
		t.Errorf("order %v, want %v first", names, targetRoutes)
	}
	groups := abGroups(routes)
	if len(groups) != 2 || len(groups[0].env) != 0 || !slices.Equal(groups[1].env, []string{"MIRRORQL_CACHE_ENABLED=false"}) {
		t.Fatalf("groups %+v", groups)
	}
	var uncached []string
	for _, r := range groups[1].routes {
		uncached = append(uncached, r.name)
	}
	if !slices.Equal(uncached, []string{"schedules-gt-100", "gql-schedules", "schedules-uncached"}) {
		t.Errorf("the uncached group: %v", uncached)
	}
	if n := len(groups[0].routes) + len(groups[1].routes); n != len(routes) {
		t.Errorf("%d routes in the groups", n)
	}
	only := abRoutes(flags{routesOnly: "gql-list-gt-100,list-gt-100"}, buildRoutes(smallOptions(), "127.0.0.1:1", hotWindow{}))
	if len(only) != 2 || only[0].name != "list-gt-100" {
		t.Errorf("-routes: %+v", only)
	}
}

func TestABPairs(t *testing.T) {
	m := func(rps, cpu float64) measurement { return measurement{rps: rps, cpuPer1k: cpu} }
	// three rounds of each build: old's GraphQL ÷ REST 0.3, 0.25, 0.35;
	// new's 0.8, 0.6, 0.7
	gql := &abResult{old: []measurement{m(600, 2), m(500, 2.2), m(700, 1.8)}, new: []measurement{m(1600, 0.5), m(1200, 0.6), m(1400, 0.55)}}
	rest := &abResult{old: []measurement{m(2000, 0.4), m(2000, 0.4), m(2000, 0.4)}, new: []measurement{m(2000, 0.4), m(2000, 0.4), m(2000, 0.4)}}
	p := routePairs[0]
	row := abPair("v1", p, gql, rest)
	if !near(row.rpsOld, 0.3) || !near(row.rpsNew, 0.7) || !near(row.cpuOld, 5) || !near(row.cpuNew, 1.375) || row.rounds != 3 {
		t.Errorf("%+v", row)
	}
	var b strings.Builder
	writeABPairs(&b, []abPairRow{row, abPair("v1", routePairs[4], gql, rest)})
	for _, want := range []string{
		"| v1 | gql-list-gt-100 ↔ list-gt-100 | 0.300 | 0.700 | ≥ 0.70: new **met** | 5.000 | 1.375 | ≤ 1.5: new **met** |",
		"| v1 | gql-activity ↔ by-sequence (no twin) | 0.300 | 0.700 | no slower than old (the route's new ÷ old above) | 5.000 | 1.375 | – |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeABRSS(&b, []abRSSRow{{db: "v2", old: []int64{60 << 20, 62 << 20, 61 << 20}, new: []int64{50 << 20, 70 << 20, 51 << 20}}})
	for _, want := range []string{"| v2 | old | 61.0 | 62.0 | **met** |", "| v2 | new | 51.0 | 70.0 | **not met** |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeABPairs(&b, nil)
	writeABRSS(&b, nil)
	if b.Len() != 0 {
		t.Errorf("nothing measured: %q", b.String())
	}
}
