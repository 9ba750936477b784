package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"mirrorql/db"
	"mirrorql/tests/prereq"
	"mirrorql/tools/fixture"
	"mirrorql/tools/pgcluster"
)

// The v2-citus variant is the v2 layout on a real Citus cluster
// (pgcluster.StartCitus: a coordinator and two workers of Debian's
// PostgreSQL 15 with Citus 12.1, scripts/citus.sh), its tables distributed
// as the importer's v2 migrations distribute them (fixture.V2Options.Citus).
// The cluster is started once per test binary, on first use, whatever
// server the other layouts use; its databases are made on every node
// (Citus does not propagate CREATE DATABASE): a template per variant,
// built once, and each test's a copy of it on every node, which together
// are a distributed database like the template's.
var (
	citusOnce    sync.Once
	citusCluster *pgcluster.Citus
	citusErr     error
	citusBuilt   = map[string]*template{} // the Citus variants' templates
)

// citus is the Citus cluster, started on first use. Where Citus is not
// installed the test is skipped, but in CI, where nothing may skip.
func citus(tb testing.TB) *pgcluster.Citus {
	tb.Helper()
	citusOnce.Do(func() {
		citusCluster, citusErr = pgcluster.StartCitus(context.Background(), pgcluster.CitusOptions{})
	})
	if errors.Is(citusErr, pgcluster.ErrCitusNotInstalled) {
		prereq.Missingf(tb, "testdb: %v", citusErr)
	}
	if citusErr != nil {
		tb.Fatalf("testdb: Citus cluster: %v", citusErr)
	}
	return citusCluster
}

// RunVariants are the variants the cross-layout tests of this run hold to
// v1 (TestLayoutVariants): in the Citus run (make test-citus,
// MIRRORQL_TEST_LAYOUT=v2-citus) the Citus variant, whose cluster is
// started once for that run; in every other run the variants on the run's
// own server.
func RunVariants() []Variant {
	run, v2 := variant(Layout())
	citusRun := false
	if v2 {
		_, citusRun = run.citusOptions()
	}
	var out []Variant
	for _, v := range Variants() {
		if _, isCitus := v.citusOptions(); isCitus == citusRun {
			out = append(out, v)
		}
	}
	return out
}

// citusOptions are v's options when its tables are distributed by Citus.
func (v Variant) citusOptions() (fixture.V2Options, bool) {
	o := v2Options(v2From, true)
	v.Options(&o)
	return o, o.Citus
}

// citusTemplate is the Citus database holding v's layout, built on first
// use and dropped by Shutdown.
func citusTemplate(tb testing.TB, v Variant, o fixture.V2Options) string {
	tb.Helper()
	c := citus(tb)
	mu.Lock()
	tpl := citusBuilt[v.Name]
	if tpl == nil {
		tpl = &template{}
		citusBuilt[v.Name] = tpl
	}
	mu.Unlock()
	tpl.once.Do(func() {
		name := databaseName("template_" + v.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := c.CreateDatabase(ctx, name, "", ""); err != nil {
			tpl.err = err
			return
		}
		mu.Lock()
		tpl.name = name
		mu.Unlock()
		d, err := db.Open(db.Options{URL: c.URL(name), ConnectTimeout: 10 * time.Second})
		if err != nil {
			tpl.err = err
			return
		}
		defer d.Close()
		if err := fixture.CreateV2(ctx, d.Bun(), o); err != nil {
			tpl.err = fmt.Errorf("%s layout: %w", v.Name, err)
		}
	})
	if tpl.err != nil {
		tb.Fatalf("testdb: %v", tpl.err)
	}
	return tpl.name
}

// createCitus creates the test's database on the Citus cluster as a copy
// of template, with options appended to CREATE DATABASE, and drops it at the
// test's end; it returns its name and URL.
func createCitus(tb testing.TB, template, options string) (name, url string) {
	tb.Helper()
	c := citus(tb)
	name = databaseName(tb.Name())
	// The wait includes the cluster's lock, held by the copies of the tests
	// ahead (CreateDatabase makes one at a time): 2 minutes were outlasted by
	// a package's parallel subtests on a crowded CI machine. A hang limit,
	// like a drop's.
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	if err := c.CreateDatabase(ctx, name, template, options); err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	// Not dropped: the cluster is the process's own and goes when it ends,
	// its databases with it (as on a throwaway cluster, createDatabase).
	return name, c.URL(name)
}

// shutdownCitus stops the cluster, which takes its databases with it.
func shutdownCitus() {
	if citusCluster == nil {
		return
	}
	citusBuilt = map[string]*template{}
	if err := citusCluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testdb:", err)
	}
	citusCluster, citusErr, citusOnce = nil, nil, sync.Once{}
}
