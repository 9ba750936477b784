package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"mirrorql/tools/seed"
)

// bySequenceSQL is the statement the by-sequence route sends (db.MessageBySequence),
// in pgbench's variable syntax.
const bySequenceSQL = "SELECT " + messageColumns + " FROM topic_message WHERE topic_id = :topic AND sequence_number = :seq;"

type floor struct {
	conns      int
	mode       string // -M: prepared (the floor) or simple (for comparison)
	tps        float64
	avgLatency time.Duration
	p50, p99   time.Duration // from the per-transaction log (-l)
	// CPU seconds per 1,000 transactions of pgbench's backends (sampled
	// inside the run) and of pgbench itself
	pgCPUPer1k, clientCPUPer1k float64
	command                    string
	err                        string
}

var (
	tpsRE     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	latencyRE = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// pgbenchFloor runs the by-sequence SELECT with pgbench on the hot topic:
// -n -c<conns> -j2 -M <mode>, random sequence numbers. The floor is mode
// "prepared"; "simple" sends every statement as text with the values
// inlined, as bun does, and shows what that costs PostgreSQL.
func pgbenchFloor(ctx context.Context, d *dataset, conns int, mode string, dur time.Duration, mon *pgMonitor) (floor, error) {
	return runPgbench(ctx, d, conns, mode, dur, mon, "by-sequence.sql", []string{pgbenchScript(d.opts) + "\n"},
		"-D", fmt.Sprintf("topic=%d", d.opts.TopicID(0)))
}

// runPgbench runs the scripts bodies (the first named name in the command
// shown, the others name-1, name-2, ...; pgbench picks one at random for
// each transaction) with pgbench -n -c<conns> -j2 -M <mode> for dur, over
// the service's transport.
func runPgbench(ctx context.Context, d *dataset, conns int, mode string, dur time.Duration, mon *pgMonitor,
	name string, bodies []string, extra ...string) (floor, error) {
	fl := floor{conns: conns, mode: mode}
	cfg, err := pgx.ParseConfig(d.url)
	if err != nil {
		return fl, err
	}
	dir, err := os.MkdirTemp("", "mirrorql-bench-")
	if err != nil {
		return fl, err
	}
	defer os.RemoveAll(dir)
	secs := int(dur.Round(time.Second).Seconds())
	args := []string{"-n", "-c" + strconv.Itoa(conns), "-j2", "-M", mode, "-T", strconv.Itoa(secs), "-l", "--sampling-rate=0.1"}
	args = append(args, extra...)
	for i, body := range bodies {
		file := name
		if i > 0 {
			ext := filepath.Ext(name)
			file = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(name, ext), i, ext)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			return fl, err
		}
		args = append(args, "-f", file) // in dir, pgbench's working directory
	}
	args = append(args, "-h", cfg.Host, "-p", strconv.Itoa(int(cfg.Port)), "-U", cfg.User, cfg.Database)
	fl.command = "PGSSLMODE=disable pgbench " + strings.Join(args, " ")
	fl.command = strings.Replace(fl.command, " -l --sampling-rate=0.1", "", 1)
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Dir = dir // -l writes pgbench_log.* here (a 10% sample of the transactions)
	// The service's transport: TCP to the same host and port, no TLS. A
	// server with ssl=on (Debian's default) would otherwise encrypt pgbench's
	// traffic (sslmode=prefer) and lower the floor, which the service's own
	// connections never pay.
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=5", "PGSSLMODE=disable")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return fl, err
	}
	pgCPU, window := mon.sampleDuring(ctx, time.Duration(secs)*time.Second)
	err = cmd.Wait()
	out := buf.Bytes()
	if err != nil {
		return fl, fmt.Errorf("%s: %w\n%s", fl.command, err, out)
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		return fl, fmt.Errorf("no tps in pgbench output:\n%s", out)
	}
	fl.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := latencyRE.FindSubmatch(out); m != nil {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		fl.avgLatency = time.Duration(ms * float64(time.Millisecond))
	}
	fl.p50, fl.p99 = logQuantiles(dir)
	if window > 0 && fl.tps > 0 {
		fl.pgCPUPer1k = pgCPU / (fl.tps * window.Seconds()) * 1000
	}
	if ps := cmd.ProcessState; ps != nil && fl.tps > 0 {
		fl.clientCPUPer1k = (ps.UserTime() + ps.SystemTime()).Seconds() / (fl.tps * float64(secs)) * 1000
	}
	return fl, nil
}

// pgbenchScript is the floor's script, run by pgbenchFloor and shown in the report.
func pgbenchScript(o seed.Options) string {
	return fmt.Sprintf("\\set seq random(1, %d)\n%s", o.TopicMessages(0), bySequenceSQL)
}

// logQuantiles reads pgbench's per-transaction logs (third field: latency in
// µs) into an HDR histogram.
func logQuantiles(dir string) (p50, p99 time.Duration) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	files, _ := filepath.Glob(filepath.Join(dir, "pgbench_log.*"))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			if us, err := strconv.ParseInt(fields[2], 10, 64); err == nil {
				_ = h.RecordValue(max(us, 1))
			}
		}
		f.Close()
	}
	if h.TotalCount() == 0 {
		return 0, 0
	}
	return time.Duration(h.ValueAtQuantile(50)) * time.Microsecond, time.Duration(h.ValueAtQuantile(99)) * time.Microsecond
}
