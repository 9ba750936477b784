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
type pgMonitor struct {
	conn *pgx.Conn
	db   string
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
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + st
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
