package main

// -scale: the mainnet-shaped benchmark of `make bench-scale` (not in CI).
// It loads (or keeps, when their markers match) the scale data sets —
// v1 and v2 layouts of -scale-messages messages (scale_gen.go), and v2
// data sets of -scale-variant-messages at 10, 88 and 200 monthly
// partitions — next to the 1,000,000-message v1 data set of `make bench`
// (-db, kept as -reuse keeps it), then drives the message routes on them
// with the loadgen package in alternating rounds, and explains each
// route's statements on the large data sets: bench/results/scale.md and a
// section of BENCHMARKS.md.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/db"
	"mirrorql/tools/fixture"
	"mirrorql/tools/seed"
)

type scaleFlags struct {
	on              bool
	messages        int64
	variantMessages int64
	topics          int
	prefix          string
	sets            string
	loadConns       int
	loadOnly        bool
	rounds          int
	duration        time.Duration
	minFreeGB       float64
	prewarm         bool
	note            string
	pair            bool
	warm            time.Duration
}

var sf = registerScaleFlags()

func registerScaleFlags() *scaleFlags {
	s := &scaleFlags{}
	flag.BoolVar(&s.on, "scale", false, "instead of the suite, the mainnet-shaped benchmark (`make bench-scale`): v1 and v2 data sets of -scale-messages, v2 at 10/88/200 partitions, against the 1M v1 data set of -db")
	flag.Int64Var(&s.messages, "scale-messages", 50_000_000, "messages of the large v1 and v2 data sets of -scale (2000000 for a quick run)")
	flag.Int64Var(&s.variantMessages, "scale-variant-messages", 2_000_000, "messages of the v2 data sets at 10, 88 and 200 partitions")
	flag.IntVar(&s.topics, "scale-topics", 10_000, "topics of every scale data set")
	flag.StringVar(&s.prefix, "scale-prefix", "mirrorql_scale", "name prefix of the scale databases; databases with this prefix that are no scale data set (of -scale-sets' names) are dropped")
	flag.StringVar(&s.sets, "scale-sets", "v1,v2,v2p10,v2p88,v2p200", "scale data sets to load and measure")
	flag.IntVar(&s.loadConns, "scale-load-conns", 3, "connections copying at once while loading")
	flag.BoolVar(&s.loadOnly, "scale-load-only", false, "load (or keep) the scale data sets, measure nothing")
	flag.IntVar(&s.rounds, "scale-rounds", 3, "alternating rounds of every route over the data sets (medians are reported)")
	flag.DurationVar(&s.duration, "scale-duration", 4*time.Second, "measured window of each phase of -scale")
	flag.Float64Var(&s.minFreeGB, "scale-min-free", 5, "GB of disk to leave free after the loads")
	flag.BoolVar(&s.prewarm, "scale-prewarm", true, "read each large data set's messages and timestamp index into the page cache (pg_prewarm) before its rounds")
	flag.BoolVar(&s.pair, "scale-pair", false, "measure the v2 data set against the v1 data set of the same messages (the same requests to both, answers compared byte for byte) instead of against the 1M v1 data set of -db; the partition variants are left out")
	flag.DurationVar(&s.warm, "scale-warm", 0, "with -scale-pair: before the rounds, each route on each service unmeasured for this long, as on a service that has run a while (its connections have prepared their statements, its topic maps are learned)")
	flag.StringVar(&s.note, "scale-note", "", "a note on the run for the report (which build of the service, …)")
	return s
}

// scaleSet is one scale data set: its role, spec and database.
type scaleSet struct {
	role string // v1, v2, v2p10, v2p88, v2p200
	spec scaleSpec
	plan *scalePlan
	d    *dataset
	// load figures, from the marker when the set was kept
	Load scaleLoad
}

// scaleLoad is what loading a set took, recorded in its marker.
type scaleLoad struct {
	Schema, Seed, Copy, Index, Lookup, Vacuum, Total time.Duration
	Bytes                                            int64
	Loaded                                           time.Time
}

// scaleRoles are the scale data sets -scale-sets may name.
var scaleRoles = []string{"v1", "v2", "v2p10", "v2p88", "v2p200"}

func scaleSets(f *scaleFlags, now time.Time) ([]*scaleSet, error) {
	var out []*scaleSet
	for _, role := range strings.Split(f.sets, ",") {
		role = strings.TrimSpace(role)
		var spec scaleSpec
		switch role {
		case "v1":
			spec = newScaleSpec("v1", f.messages, f.topics, 88, now)
		case "v2":
			spec = newScaleSpec("v2", f.messages, f.topics, 88, now)
		case "v2p10", "v2p88", "v2p200":
			var parts int
			fmt.Sscanf(role, "v2p%d", &parts)
			spec = newScaleSpec("v2", f.variantMessages, f.topics, parts, now)
		case "":
			continue
		default:
			return nil, fmt.Errorf("-scale-sets: unknown set %q", role)
		}
		plan, err := newScalePlan(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, &scaleSet{role: role, spec: spec, plan: plan, d: &dataset{name: f.prefix + "_" + role}})
	}
	return out, nil
}

// bytesPerMessage estimates a set's database size per message (heap,
// indexes and the transaction rows), measured on a 2M load (625 and 678
// bytes), with a margin.
func bytesPerMessage(layout string) int64 {
	if layout == "v1" {
		return 660
	}
	return 715
}

// runScale is -scale.
func runScale(ctx context.Context, f flags) error {
	started := time.Now()
	adminURL, desc, _, stop, err := findServer(ctx, f)
	if err != nil {
		return err
	}
	defer stop()
	sets, err := scaleSets(sf, time.Now())
	if err != nil {
		return err
	}
	if err := prepareScale(ctx, adminURL, sets); err != nil {
		return err
	}
	if sf.loadOnly {
		log.Printf("loaded in %v", time.Since(started).Round(time.Second))
		return nil
	}
	return measureScale(ctx, f, adminURL, desc, sets, started)
}

// prepareScale drops the databases of the prefix the run does not use,
// checks the disk for the sets to load, and loads them.
func prepareScale(ctx context.Context, adminURL string, sets []*scaleSet) error {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	var names []string
	rows, err := admin.Query(ctx, "select datname from pg_database where datname like $1", sf.prefix+"\\_%")
	if err == nil {
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return err
	}
	// The databases of sets not selected this time are kept for the next
	// full run (-scale-sets); any other of the prefix is dropped.
	for _, n := range names {
		if !slices.ContainsFunc(scaleRoles, func(role string) bool { return sf.prefix+"_"+role == n }) {
			log.Printf("%s: no scale data set of this version, dropping", n)
			if _, err := admin.Exec(ctx, "drop database "+pgx.Identifier{n}.Sanitize()+" with (force)"); err != nil {
				return err
			}
		}
	}
	var todo []*scaleSet
	var need int64
	for _, s := range sets {
		if s.d.url, err = dbURL(adminURL, s.d.name); err != nil {
			return err
		}
		var comment *string
		err := admin.QueryRow(ctx, `select shobj_description(oid, 'pg_database') from pg_database where datname = $1`, s.d.name).Scan(&comment)
		if err == nil && comment != nil {
			if spec, load, ok := parseScaleMarker(*comment); ok && spec.sameSet(s.spec) {
				// the data as it was loaded (its dates), whatever the day
				plan, err := newScalePlan(spec)
				if err != nil {
					return err
				}
				s.spec, s.plan, s.Load, s.d.reused = spec, plan, load, true
				log.Printf("%s: kept (loaded %s by an earlier run)", s.d.name, s.Load.Loaded.Format(time.RFC3339))
				continue
			}
		}
		var size int64 // what dropping it frees
		_ = admin.QueryRow(ctx, "select coalesce(sum(pg_database_size(datname)), 0) from pg_database where datname = $1", s.d.name).Scan(&size)
		need += s.spec.Messages*bytesPerMessage(s.spec.Layout) - size
		todo = append(todo, s)
	}
	if len(todo) > 0 {
		if err := checkDisk(ctx, admin, need); err != nil {
			return err
		}
	}
	for _, s := range todo {
		if err := loadScaleSet(ctx, admin, s); err != nil {
			return fmt.Errorf("%s: %w", s.d.name, err)
		}
	}
	for _, s := range sets {
		c, err := pgx.Connect(ctx, s.d.url)
		if err != nil {
			return err
		}
		err = c.QueryRow(ctx, "select pg_size_pretty(pg_database_size(current_database()))").Scan(&s.d.size)
		c.Close(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
	}
	return nil
}

// checkDisk refuses to load when the server's data directory (on this
// machine) would keep less than -scale-min-free after need more bytes.
func checkDisk(ctx context.Context, admin *pgx.Conn, need int64) error {
	var dir string
	if err := admin.QueryRow(ctx, "select current_setting('data_directory')").Scan(&dir); err != nil {
		log.Printf("disk check skipped: %v", err)
		return nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		log.Printf("disk check skipped: data directory %s: %v", dir, err)
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	left := free - need
	log.Printf("disk: %.1f GB free at %s, the loads need about %.1f GB", gb(free), dir, gb(need))
	if float64(left) < sf.minFreeGB*(1<<30) {
		return fmt.Errorf("not enough disk: %.1f GB free at %s, the loads need about %.1f GB and %.0f GB must stay free (-scale-min-free); "+
			"lower -scale-messages or drop the databases of other runs", gb(free), dir, gb(need), sf.minFreeGB)
	}
	return nil
}

func gb(b int64) float64 { return float64(b) / (1 << 30) }

// loadScaleSet (re)creates the set's database, loads it (fillScaleSet)
// and writes its marker.
func loadScaleSet(ctx context.Context, admin *pgx.Conn, s *scaleSet) error {
	ident := pgx.Identifier{s.d.name}.Sanitize()
	log.Printf("%s: loading %d messages over %d topics, %s, %d partitions (%s … %s)", s.d.name, s.spec.Messages, s.spec.Topics,
		s.spec.Layout, s.spec.Partitions, s.spec.firstMonth().Format("2006-01"), s.spec.lastMonth().Format("2006-01"))
	if _, err := admin.Exec(ctx, "drop database if exists "+ident+" with (force)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "create database "+ident); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "comment on database "+ident+" is 'mirrorql bench scale: loading'"); err != nil {
		return err
	}
	var o *fixture.V2Options
	if s.spec.Layout == "v2" {
		o = &fixture.V2Options{From: s.spec.firstMonth(), Through: s.spec.lastMonth()}
	}
	ld, err := fillScaleSet(ctx, s.d.url, s.d.name, s.plan, o)
	if err != nil {
		return err
	}
	ld.Loaded = time.Now().UTC()
	s.Load = ld
	b, _ := json.Marshal(ld)
	if _, err := admin.Exec(ctx, "comment on database "+ident+" is "+quote(s.spec.fingerprint()+"\n"+string(b))); err != nil {
		return err
	}
	log.Printf("%s: loaded in %v, %.1f GB (%.0f bytes a message)", s.d.name, ld.Total.Round(time.Second), gb(ld.Bytes),
		float64(ld.Bytes)/float64(s.spec.Messages))
	return nil
}

// fillScaleSet loads plan's data set into the empty database name at url:
// the layout (o nil: v1's migrations; else fixture's v2 layout of o), the
// seed's small tables, the messages and their transactions copied without
// indexes, then the indexes, the lookup (v2) and VACUUM ANALYZE. Bytes is
// the database's size on the server at url.
func fillScaleSet(ctx context.Context, url, name string, plan *scalePlan, o *fixture.V2Options) (scaleLoad, error) {
	var ld scaleLoad
	t0 := time.Now()
	step := func(d *time.Duration, what string) {
		*d = time.Since(t0)
		log.Printf("%s: %s in %v", name, what, d.Round(time.Second))
		t0 = time.Now()
	}
	qdb, err := db.Open(db.Options{URL: url, PoolSize: 2})
	if err != nil {
		return ld, err
	}
	defer qdb.Close()
	if o != nil {
		err = fixture.CreateV2(ctx, qdb.Bun(), *o)
	} else {
		err = db.Migrate(ctx, qdb.Bun())
	}
	if err != nil {
		return ld, err
	}
	step(&ld.Schema, "schema")
	if _, err := seed.RunURL(ctx, url, plan.so); err != nil {
		return ld, err
	}
	step(&ld.Seed, fmt.Sprintf("entities and %d topics (package seed)", plan.spec.Topics))
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return ld, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	ddl, err := dropIndexes(ctx, c, "topic_message", "transaction")
	if err != nil {
		return ld, err
	}
	last := time.Now()
	err = loadMessages(ctx, url, plan, sf.loadConns, func(rows int64) {
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			el := time.Since(t0)
			log.Printf("%s: %d of %d rows copied (%.1f%%) in %v, %.0f rows/s", name, rows, 2*plan.spec.Messages,
				100*float64(rows)/float64(2*plan.spec.Messages), el.Round(time.Second), float64(rows)/el.Seconds())
		}
	})
	if err != nil {
		return ld, err
	}
	step(&ld.Copy, fmt.Sprintf("%d messages and %d transactions copied", plan.spec.Messages, plan.spec.Messages))
	if err := createIndexes(ctx, url, ddl, 2); err != nil {
		return ld, err
	}
	step(&ld.Index, fmt.Sprintf("%d indexes of topic_message and transaction", len(ddl)))
	if o != nil {
		bc, err := qdb.Bun().Conn(ctx)
		if err != nil {
			return ld, err
		}
		if _, err := bc.ExecContext(ctx, "set work_mem = '256MB'"); err == nil {
			err = fixture.RebuildLookup(ctx, bc)
		}
		bc.Close()
		if err != nil {
			return ld, err
		}
		step(&ld.Lookup, "topic_message_lookup rebuilt")
	}
	if _, err := c.Exec(ctx, "vacuum analyze"); err != nil {
		return ld, err
	}
	step(&ld.Vacuum, "vacuum analyze")
	ld.Total = ld.Schema + ld.Seed + ld.Copy + ld.Index + ld.Lookup + ld.Vacuum
	err = c.QueryRow(ctx, "select pg_database_size(current_database())").Scan(&ld.Bytes)
	return ld, err
}
