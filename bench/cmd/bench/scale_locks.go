package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"mirrorql/tools/stmtlog"
)

// parentRoute names the reference statement of scaleLocks in the table.
const parentRoute = "(reference) by timestamp through the parent table"

// statementLocks is what one execution of a route's statement holds: the
// relation locks it takes on the data set's tables and indexes, and how
// many of them went to the backend's fast-path slots (the rest went to the
// shared lock table, through its partitioned lock manager).
type statementLocks struct {
	route       string
	total, fast int
	generic     bool // executed with a generic plan (prepared, as the service sends it)
}

// scaleLocks executes each route's statements (the ones the handlers send
// for scalePaths' requests) as the service does — prepared by pgx, its plan
// generic (plan_cache_mode = force_generic_plan, already built by a first
// execution), or planned for its values when the service sends it so —
// once more inside a transaction, and counts the relation locks of the
// data set's schema that the execution holds, and those on the fast path.
func scaleLocks(ctx context.Context, s *scaleSet) ([]statementLocks, error) {
	qdb, rec, err := recordingDB(s.d)
	if err != nil {
		return nil, err
	}
	defer qdb.Close()
	paths := scalePaths(s.plan)
	sent, err := sentStatements(ctx, qdb, rec, paths)
	if err != nil {
		return nil, err
	}
	// for reference, a statement the service does not send: a message by
	// its timestamp through the parent table, whose generic plan is pruned
	// to one partition at execution, after it has locked every partition
	hot := s.plan.topics[0]
	paths = append(paths, routePath{route: parentRoute})
	sent = append(sent, []stmtlog.Statement{{SQL: "select message from topic_message where topic_id = $1 and consensus_timestamp = $2",
		Args: []any{hot.id, s.plan.ts(0, hot.n/2)}}})
	c, err := pgx.Connect(ctx, s.d.url)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var out []statementLocks
	for i, p := range paths {
		for _, st := range sent[i] {
			l := statementLocks{route: p.route, generic: !st.Unprepared}
			mode := "force_generic_plan"
			if st.Unprepared {
				mode = "force_custom_plan"
			}
			err := func() error {
				if _, err := c.Exec(ctx, "set plan_cache_mode = "+mode); err != nil {
					return err
				}
				defer c.Exec(context.WithoutCancel(ctx), "reset plan_cache_mode") //nolint:errcheck
				run := func(tx pgx.Tx) error {
					q := c.Query
					if tx != nil {
						q = tx.Query
					}
					rows, err := q(ctx, st.SQL, st.Args...)
					if err != nil {
						return err
					}
					rows.Close()
					return rows.Err()
				}
				if err := run(nil); err != nil { // prepares it and builds the plan
					return err
				}
				tx, err := c.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
				if err := run(tx); err != nil {
					return err
				}
				return tx.QueryRow(ctx, `select count(*), count(*) filter (where l.fastpath)
					from pg_locks as l join pg_class as c on c.oid = l.relation
					where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relnamespace = 'public'::regnamespace`).
					Scan(&l.total, &l.fast)
			}()
			if err != nil {
				return out, fmt.Errorf("%s: %s: %w", p.route, shorten(st.SQL, 120), err)
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// locksCell is a route's statements' locks, "total (fast path)" each, in
// the order the route sends them.
func locksCell(ls []statementLocks, route string) string {
	var cells []string
	for _, l := range ls {
		if l.route != route {
			continue
		}
		c := fmt.Sprintf("%d (%d)", l.total, l.fast)
		if !l.generic {
			c += " custom"
		}
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		return "–"
	}
	return strings.Join(cells, " + ")
}

// lockSettings are the server's settings that decide where a statement's
// locks go, as the report shows them.
func lockSettings(ctx context.Context, adminURL string) string {
	c, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err.Error()
	}
	defer c.Close(context.WithoutCancel(ctx))
	var num, locks string
	if err := c.QueryRow(ctx, `select current_setting('server_version_num'), current_setting('max_locks_per_transaction')`).
		Scan(&num, &locks); err != nil {
		return err.Error()
	}
	out := "max_locks_per_transaction " + locks
	var v, n int
	fmt.Sscan(num, &v)
	fmt.Sscan(locks, &n)
	if v >= 180000 {
		groups := fastPathGroups(n)
		out += fmt.Sprintf(" (on 18: %d fast-path lock slots a backend, %d groups of 16)", 16*groups, groups)
	} else {
		out += " (before 18: 16 fast-path lock slots a backend, whatever the setting)"
	}
	return out
}

// locksSection is the relation locks each route's statements hold on each
// data set.
func (r *scaleReport) locksSection(p func(string, ...any)) {
	if len(r.locks) == 0 {
		return
	}
	var labels []string
	for _, s := range r.sets {
		if _, ok := r.locks[labelOf(s)]; ok {
			labels = append(labels, labelOf(s))
		}
	}
	p("### Locks of one execution")
	p("")
	p("Relation locks (tables and indexes of the data set) one execution of each route's statements holds, and in brackets")
	p("how many of them are on the backend's fast path: each statement prepared and executed once as the service does (a")
	p("generic plan; \"custom\": planned for its values, as the service sends it), then executed again inside a transaction")
	p("and `pg_locks` read for the backend (the service's connections set plan_cache_mode = force_generic_plan themselves,")
	p("whatever the server's); the last row, for reference, is a statement the service does not send: `topic_id = $1 and")
	p("consensus_timestamp = $2` through the parent table, whose generic plan locks every partition before it prunes to")
	p("one. Server: %s.", r.settings)
	p("")
	head := []string{"route"}
	for _, l := range labels {
		head = append(head, l+": locks (fast path)")
	}
	p("| %s |", strings.Join(head, " | "))
	p("|---|%s", strings.Repeat("---:|", len(head)-1))
	for _, name := range append(slices.Clone(scaleRouteNames), parentRoute) {
		cells, any := []string{name}, false
		for _, l := range labels {
			c := locksCell(r.locks[l], name)
			cells, any = append(cells, c), any || c != "–"
		}
		if any {
			p("| %s |", strings.Join(cells, " | "))
		}
	}
	p("")
}

// fastPathGroups is how many groups of 16 fast-path lock slots a backend
// of PostgreSQL 18 has at this max_locks_per_transaction: the smallest
// power of two whose slots hold that many locks, at most 1024
// (InitializeFastPathLocks).
func fastPathGroups(maxLocks int) int {
	groups := 1
	for groups < 1024 && groups*16 < maxLocks {
		groups *= 2
	}
	return groups
}
