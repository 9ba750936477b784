package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/tools/pgcluster"
)

// suite is one run of `make bench`: what its phases share. Each phase fills
// its part of rep; what a phase starts is stopped by close, in reverse
// order, on the error paths as on the normal one.
type suite struct {
	ctx     context.Context
	f       flags
	started time.Time
	rep     *report
	undo    []func()

	adminURL     string
	large, small *dataset
	mon, smon    *pgMonitor // PostgreSQL CPU of the large and small databases' backends

	svc    *service // the main service, on the large data set
	routes []route
	// alone answers the by-sequence requests from memory (alone.go); nil
	// when the route is not run
	alone  *service
	aloneR route
	// others are the services of the routes with settings of their own
	// (route.serviceEnv), by those settings: started for their first
	// phase, stopped after the paired rounds
	others map[string]*service
}

// run is the suite: its phases in order, then the report.
func run(ctx context.Context, f flags) error {
	started := time.Now()
	if _, err := os.Stat(f.bin); err != nil {
		return fmt.Errorf("%s: %w (run `make build` first)", f.bin, err)
	}
	s := &suite{ctx: ctx, f: f, started: started, rep: &report{flags: f, started: started.UTC()}}
	defer s.close()
	for _, phase := range []func() error{
		s.server,
		s.datasets,
		s.floor,
		s.startMain,
		s.singlePass,
		s.pairedRounds,
		s.largePlans,
		s.scaling,
		s.stopServices,
		s.profiles,
	} {
		if err := phase(); err != nil {
			return err
		}
	}
	return s.writeReport()
}

// onClose registers what close undoes.
func (s *suite) onClose(f func()) { s.undo = append(s.undo, f) }

func (s *suite) close() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// server finds the PostgreSQL server to run on (findServer).
func (s *suite) server() error {
	url, desc, _, stop, err := findServer(s.ctx, s.f)
	if err != nil {
		return err
	}
	s.onClose(stop)
	s.adminURL, s.rep.cluster = url, desc
	return s.rep.describeMachine(s.ctx, s.adminURL)
}

// findServer is the PostgreSQL server every mode runs on: the one at
// -admin-url, or a throwaway cluster when it does not answer, when -cluster
// or -pg-set is given, or when $MIRRORQL_POSTGRES_BIN names a server build
// (`make … PG=18`: that build, as the tests' testdb starts it). It returns
// the admin URL, the report's description of the server, and what stops it
// (nothing for a server the run did not start).
func findServer(ctx context.Context, f flags) (adminURL, desc string, c *pgcluster.Cluster, stop func(), err error) {
	switch {
	case f.cluster:
		err = errors.New("-cluster given")
	case len(f.pgSettings) > 0:
		err = errors.New("-pg-set given")
	case os.Getenv(pgcluster.EnvBinDir) != "":
		err = fmt.Errorf("%s=%s given", pgcluster.EnvBinDir, os.Getenv(pgcluster.EnvBinDir))
	default:
		err = ping(ctx, f.adminURL)
	}
	if err == nil {
		return f.adminURL, serverDesc(f.adminURL), nil, func() {}, nil
	}
	log.Printf("not the server at %s (%v): starting a throwaway cluster", f.adminURL, err)
	settings := map[string]string{"max_connections": "200", "shared_buffers": f.sharedBuffers}
	for name, value := range f.pgSettings {
		settings[name] = value
	}
	c, err = pgcluster.Start(ctx, pgcluster.Options{Database: "postgres", Settings: settings})
	if err != nil {
		return "", "", nil, nil, err
	}
	desc = "a throwaway cluster (mirrorql/tools/pgcluster) started by the run"
	if dir := os.Getenv(pgcluster.EnvBinDir); dir != "" {
		desc += " from " + pgcluster.EnvBinDir + "=" + dir
	}
	if len(f.pgSettings) > 0 {
		names := slices.Sorted(maps.Keys(f.pgSettings))
		for i, n := range names {
			names[i] = "`-pg-set " + n + "=" + f.pgSettings[n] + "`"
		}
		desc += ", with " + strings.Join(names, ", ")
	}
	return c.AdminURL(), desc, c, func() { c.Stop() }, nil
}

// serverDesc says which server -admin-url names: the machine's shared one
// by default, else the address given.
func serverDesc(adminURL string) string {
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil || (cfg.Host == "127.0.0.1" && cfg.Port == 5432) {
		return "the machine's PostgreSQL server on 127.0.0.1:5432 (shared with the colleagues' tests)"
	}
	return fmt.Sprintf("the PostgreSQL server on %s:%d (`-admin-url`)", cfg.Host, cfg.Port)
}

// datasets creates and seeds the databases (or keeps them, -reuse) and
// starts watching their backends' CPU.
func (s *suite) datasets() error {
	f := s.f
	s.large = &dataset{name: f.dbName, opts: largeOptions(f.schedules)}
	s.small = &dataset{name: f.smallName, opts: smallOptions()}
	sets := []*dataset{s.large}
	if !f.skipSmall {
		sets = append(sets, s.small)
	}
	for _, d := range sets {
		if err := prepare(s.ctx, f, s.adminURL, d); err != nil {
			return err
		}
	}
	s.rep.large, s.rep.small = s.large, s.small

	// The CPU of PostgreSQL's backends per request, when the server runs here.
	var err error
	if s.mon, err = newPGMonitor(s.ctx, s.adminURL, s.large.name); err != nil {
		return err
	}
	s.onClose(s.mon.close)
	if s.smon, err = newPGMonitor(s.ctx, s.adminURL, s.small.name); err != nil {
		return err
	}
	s.onClose(s.smon.close)
	return nil
}

// floor measures pgbench alone: the by-sequence SELECT at every connection
// count, then each route's own statements. It runs first, while no service
// holds connections: pgbench -c64 needs 64 of the server's max_connections.
func (s *suite) floor() error {
	f, rep := s.f, s.rep
	if !f.floor {
		return nil
	}
	for _, n := range f.conns {
		modes := []string{"prepared"}
		if n == f.conns[0] {
			modes = append(modes, "simple")
		}
		for _, mode := range modes {
			fl, err := pgbenchFloor(s.ctx, s.large, n, mode, f.duration, s.mon)
			if err != nil && strings.Contains(err.Error(), "too many clients") {
				log.Printf("pgbench -c%d: the server is out of connections; retrying in 5 s", n)
				time.Sleep(5 * time.Second)
				fl, err = pgbenchFloor(s.ctx, s.large, n, mode, f.duration, s.mon)
			}
			if err != nil {
				log.Printf("pgbench -c%d -M %s: %v", n, mode, err)
				fl.err = err.Error()
			} else {
				log.Printf("pgbench -c%d -M %s: %.0f tps, latency avg %v p50 %v p99 %v; cpu s/1k: postgres %.3f, pgbench %.3f",
					n, mode, fl.tps, fl.avgLatency, fl.p50, fl.p99, fl.pgCPUPer1k, fl.clientCPUPer1k)
			}
			rep.floors = append(rep.floors, fl)
		}
	}

	sfs, err := statementFloors(s.ctx, s.large, f.conns[0], f.targetDuration, s.mon)
	if err != nil {
		log.Printf("statement floors: %v", err)
	}
	for _, sf := range sfs {
		log.Printf("pgbench -c%d, the %s statement: %.0f tps", sf.conns, sf.route, sf.tps)
	}
	rep.statements = sfs
	return nil
}

// startMain starts the service on the large data set and checks that every
// route answers.
func (s *suite) startMain() error {
	svc, err := startService(s.ctx, s.f, s.large.url)
	if err != nil {
		return err
	}
	s.onClose(func() { svc.stop() })
	s.svc = svc
	s.rep.startup = svc.ready
	log.Printf("service pid %d ready in %v", svc.pid, svc.ready.Round(time.Millisecond))
	s.routes = buildRoutes(s.large.opts, svc.host, s.large.window)
	s.rep.graphql = svc.hasGraphQL(s.ctx)
	return checkRoutes(s.ctx, svc, s.routes, s.rep.graphql)
}

// serviceFor is the service that answers r: the main one, or for a route
// with settings of its own (route.serviceEnv) a service with them, started
// (and its route checked) the first time it is asked for.
func (s *suite) serviceFor(r route) (*service, error) {
	if len(r.serviceEnv) == 0 {
		return s.svc, nil
	}
	key := strings.Join(r.serviceEnv, ",")
	if o := s.others[key]; o != nil {
		return o, nil
	}
	if s.others == nil {
		s.others = map[string]*service{}
		s.onClose(s.stopOthers)
	}
	of := s.f
	of.serviceEnv = append(slices.Clone(s.f.serviceEnv), r.serviceEnv...)
	o, err := startService(s.ctx, of, s.large.url)
	if err != nil {
		return nil, err
	}
	s.others[key] = o
	log.Printf("service pid %d (%s) ready in %v", o.pid, key, o.ready.Round(time.Millisecond))
	// (its requests name the main service in their Host header: no
	// route's answer depends on it)
	return o, checkRoutes(s.ctx, o, []route{r}, s.rep.graphql)
}

// stopOthers stops the services of serviceFor.
func (s *suite) stopOthers() {
	for key, o := range s.others {
		if err := o.stop(); err != nil {
			log.Printf("service (%s) exit: %v", key, err)
		}
	}
	clear(s.others)
}

// singlePass measures every route once at every connection count (HTTP
// alone first, when it runs). Routes with settings of their own
// (route.serviceEnv) run on a service of their own (serviceFor), kept for
// the paired rounds.
func (s *suite) singlePass() error {
	ctx, f, rep := s.ctx, s.f, s.rep
	if f.wants(aloneRoute) {
		i := slices.IndexFunc(s.routes, func(r route) bool { return r.name == "by-sequence" })
		alone, aloneR, err := startAlone(ctx, f, s.svc, s.routes[i])
		if err != nil {
			return fmt.Errorf("%s: %w", aloneRoute, err)
		}
		s.onClose(func() { alone.stop() })
		s.alone, s.aloneR = alone, aloneR
	}
	for _, n := range f.conns {
		if s.alone != nil {
			m, err := measure(ctx, s.alone, s.aloneR, n, f, s.mon)
			if err != nil {
				return fmt.Errorf("%s at %d connections: %w", aloneRoute, n, err)
			}
			rep.rows = append(rep.rows, m)
		}
		for _, r := range s.routes {
			if !f.wants(r.name) || (r.graphql && !rep.graphql) || (r.firstConnsOnly && n != f.conns[0]) {
				continue
			}
			svc, err := s.serviceFor(r)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			m, err := measure(ctx, svc, r, n, f, s.mon)
			if err != nil {
				return fmt.Errorf("%s at %d connections: %w", r.name, n, err)
			}
			rep.rows = append(rep.rows, m)
		}
	}
	return nil
}

// pairedRounds alternates the pgbench floor (unless -floor=false) with the
// target routes (rounds.go), then stops HTTP alone and the services of
// serviceFor.
func (s *suite) pairedRounds() error {
	f := s.f
	if f.targetRounds > 0 {
		var err error
		if s.rep.rounds, err = pairedRounds(s.ctx, f, s.large, s.serviceFor, s.routes, s.rep.graphql, s.mon, s.alone, s.aloneR); err != nil {
			return err
		}
	}
	s.stopOthers()
	if s.alone != nil {
		if err := s.alone.stop(); err != nil {
			log.Printf("%s exit: %v", aloneRoute, err)
		}
	}
	return nil
}

// largePlans records the service's peak RSS so far, the plans of the
// handlers' SQL and the shared buffers random lookups touch, on the large
// data set.
func (s *suite) largePlans() error {
	rep := s.rep
	rep.peakRSS = s.svc.hwm()
	plans, err := explainPlans(s.ctx, s.large)
	if err != nil {
		log.Printf("explain: %v", err)
	}
	rep.plans = plans
	if rep.buffers, err = sampleBuffers(s.ctx, s.large, 500); err != nil {
		log.Printf("buffers: %v", err)
	}
	return nil
}

// scaling measures the scaling routes at 10,000 messages, each right after
// the same route on the large data set (both services run), so that the two
// of a pair see the same machine; then the small data set's plans.
func (s *suite) scaling() error {
	ctx, f, rep := s.ctx, s.f, s.rep
	if f.skipSmall {
		return nil
	}
	ssvc, err := startService(ctx, f, s.small.url)
	if err != nil {
		return err
	}
	s.onClose(func() { ssvc.stop() })
	sroutes := buildRoutes(s.small.opts, ssvc.host, s.small.window)
	var scaled []route
	for _, r := range sroutes {
		if r.scaling {
			scaled = append(scaled, r)
		}
	}
	if err := checkRoutes(ctx, ssvc, scaled, rep.graphql); err != nil {
		return err
	}
	// Alternating pairs, several rounds, medians: one noisy phase must not
	// decide a 1.2× criterion on a shared machine.
	sf := f
	sf.duration = f.scalingDuration
	for i, r := range sroutes {
		if !r.scaling || !f.wants(r.name) || (r.graphql && !rep.graphql) {
			continue
		}
		sf := sf
		if r.scaleP50 { // p50 and CPU per request settle sooner than p99
			sf.duration = f.shortDuration
		}
		var ls, ms []measurement
		for range f.scalingRounds {
			l, err := measure(ctx, s.svc, s.routes[i], f.conns[0], sf, s.mon)
			if err != nil {
				return fmt.Errorf("scaling %s: %w", r.name, err)
			}
			m, err := measure(ctx, ssvc, r, f.conns[0], sf, s.smon)
			if err != nil {
				return fmt.Errorf("small %s: %w", r.name, err)
			}
			ls, ms = append(ls, l), append(ms, m)
		}
		rep.scaleLarge = append(rep.scaleLarge, median(ls))
		rep.smallRows = append(rep.smallRows, median(ms))
	}
	splans, err := explainPlans(ctx, s.small)
	if err != nil {
		log.Printf("explain small: %v", err)
	}
	rep.smallPlans = splans
	if rep.smallBuffers, err = sampleBuffers(ctx, s.small, 500); err != nil {
		log.Printf("buffers small: %v", err)
	}
	if err := ssvc.stop(); err != nil {
		log.Printf("service exit: %v", err)
	}
	return nil
}

// stopServices stops the main service before the profiles, which run the
// handlers in process.
func (s *suite) stopServices() error {
	if err := s.svc.stop(); err != nil {
		log.Printf("service exit: %v", err)
	}
	return nil
}

// profiles runs the in-process CPU and allocation profiles (bench/handler).
func (s *suite) profiles() error {
	if !s.f.profile {
		return nil
	}
	prof, err := profiles(s.ctx, s.large, s.f.profileTime.String())
	if err != nil {
		log.Printf("profile: %v", err)
	}
	s.rep.profiles = prof
	return nil
}

// writeReport prints the report and writes it: its summary into -out, the
// whole into -results.
func (s *suite) writeReport() error {
	rep := s.rep
	rep.elapsed = time.Since(s.started)
	text := rep.markdown()
	fmt.Println(text)
	if err := publish(s.f, beginMarker, endMarker, rep.summary(), "latest.md", text); err != nil {
		return err
	}
	log.Printf("done in %v", rep.elapsed.Round(time.Second))
	return nil
}
