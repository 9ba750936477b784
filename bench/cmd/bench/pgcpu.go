package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgMonitor reads the CPU time of the PostgreSQL backends serving one
// database, so that each phase can say how much of the database's CPU a
// request cost (pgbench's backends and the service's pool alike). It needs
// the server on this machine (it reads /proc/<pid>/stat of the backends).
//
// With postmasters set it counts instead every process of those servers
// (servers of their own, such as a Citus cluster's nodes): a query's work
// on the workers and the connections the coordinator opens to them, which
// come and go, are the requests' cost too.
type pgMonitor struct {
	conn        *pgx.Conn
	db          string
	postmasters []int
}

func newPGMonitor(ctx context.Context, adminURL, db string) (*pgMonitor, error) {
	c, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	return &pgMonitor{conn: c, db: db}, nil
}

func (m *pgMonitor) close() {
	if m != nil {
		_ = m.conn.Close(context.Background())
	}
}

// pids are the client backends on the database whose application_name is
// (pgbench true) or is not (false) "pgbench".
func (m *pgMonitor) pids(ctx context.Context, pgbench bool) []int {
	if m == nil {
		return nil
	}
	op := "<>"
	if pgbench {
		op = "="
	}
	rows, err := m.conn.Query(ctx, `select pid from pg_stat_activity
		where datname = $1 and backend_type = 'client backend' and application_name `+op+` 'pgbench'`, m.db)
	if err != nil {
		return nil
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	out := make([]int, len(pids))
	for i, p := range pids {
		out[i] = int(p)
	}
	return out
}

// ticks is the CPU the backends pids used so far (ticks), or with
// postmasters set, each server's whole (serverTicks), keyed by postmaster.
func (m *pgMonitor) ticks(pids []int) map[int]int64 {
	if m == nil || len(m.postmasters) == 0 {
		return ticks(pids)
	}
	out := make(map[int]int64, len(m.postmasters))
	for _, pm := range m.postmasters {
		if t := serverTicks(pm); t >= 0 {
			out[pm] = t
		}
	}
	return out
}

// serverTicks is the CPU (clock ticks) a PostgreSQL server has used so
// far: its postmaster's own, that of the children it has reaped (cutime,
// cstime: backends and connections that ended) and that of its children
// alive now. -1 when the postmaster is gone.
func serverTicks(postmaster int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", postmaster))
	if err != nil {
		return -1
	}
	st, ok := parseStat(string(b))
	if !ok {
		return -1
	}
	total := st.utime + st.stime + st.cutime + st.cstime
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		if c, ok := parseStat(string(b)); ok && c.ppid == postmaster {
			total += c.utime + c.stime
		}
	}
	return total
}

// procStat is what serverTicks reads of /proc/<pid>/stat.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

// parseStat reads /proc/<pid>/stat: after the command in parentheses (which
// may hold spaces and parentheses), the state, ppid, … utime, stime, cutime
// and cstime (fields 14 to 17 of proc(5)).
func parseStat(s string) (procStat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procStat{}, false
	}
	var st procStat
	var err error
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, false
	}
	for k, v := range []*int64{&st.utime, &st.stime, &st.cutime, &st.cstime} {
		if *v, err = strconv.ParseInt(f[11+k], 10, 64); err != nil {
			return procStat{}, false
		}
	}
	return st, true
}

// ticks is utime+stime of each pid (clock ticks); a pid that is gone is absent.
func ticks(pids []int) map[int]int64 {
	out := make(map[int]int64, len(pids))
	for _, pid := range pids {
		if t := procTicks(pid); t >= 0 {
			out[pid] = t
		}
	}
	return out
}

// spent is the CPU seconds the pids present in both samples used in between.
func spent(before, after map[int]int64) float64 {
	var n int64
	for pid, t1 := range after {
		if t0, ok := before[pid]; ok {
			n += t1 - t0
		}
	}
	return float64(n) / userHZ
}

func procTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	st, ok := parseStat(string(b))
	if !ok {
		return -1
	}
	return st.utime + st.stime
}

// sampleDuring samples the pgbench backends' CPU from 1 s after start to
// 0.5 s before the end of a run of dur, and returns the CPU seconds and the
// length of that sub-window. It returns when the sub-window closes.
func (m *pgMonitor) sampleDuring(ctx context.Context, dur time.Duration) (cpu float64, window time.Duration) {
	if m == nil || dur < 3*time.Second {
		return 0, 0
	}
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		return 0, 0
	}
	t0 := time.Now()
	before := ticks(m.pids(ctx, true))
	select {
	case <-time.After(dur - 1500*time.Millisecond):
	case <-ctx.Done():
		return 0, 0
	}
	after := ticks(m.pids(ctx, true))
	return spent(before, after), time.Since(t0)
}
