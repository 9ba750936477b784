package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// profileResult is the in-process profile of one request path.
type profileResult struct {
	bench     string
	benchLine string // ns/op, B/op, allocs/op, and samplePeaks' figures
	// metrics are benchLine's figures by unit: "ns/op", "B/op",
	// "allocs/op", "goroutines/op", "peak-goroutines", "peak-heap-MiB", …
	metrics  map[string]float64
	cpuTop   string
	cpuCum   string
	allocTop string
	objsTop  string
}

// metric is one of the benchmark's figures, if it reported it.
func (p *profileResult) metric(unit string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	v, ok := p.metrics[unit]
	return v, ok
}

// profiledBench is one of bench/handler's benchmarks `make bench` runs:
// allocs gives it the allocation top lists besides the CPU ones.
type profiledBench struct {
	name   string
	allocs bool
}

// profiled are bench/handler's benchmarks run by `make bench`, in the
// report's order: every benchmark a pair of routePairs names (their
// allocations and ns/op are set side by side), and the lists and pages.
var profiled = []profiledBench{
	{name: "BySequence", allocs: true}, {name: "GraphQLMessage"},
	{name: "List25"}, {name: "ListGt100"}, {name: "GraphQLListGt100", allocs: true}, {name: "GraphQLTopicPage"},
	{name: "GraphQLPage"}, {name: "SchedulesGt100"}, {name: "GraphQLSchedules"}, {name: "GraphQLActivity"},
}

var benchLineRE = regexp.MustCompile(`(?m)\b\d+\s+[\d.]+ ns/op.*$`)

// profiles runs bench/handler's benchmarks against the large data set with
// CPU and allocation profiles, keeping them in bench/out.
func profiles(ctx context.Context, d *dataset, benchtime string) ([]profileResult, error) {
	dir, err := filepath.Abs(filepath.Join("bench", "out"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "handler.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./bench/handler")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, out)
	}
	var res []profileResult
	for _, pb := range profiled {
		name := pb.name
		p := profileResult{bench: "Benchmark" + name}
		cpu, mem := filepath.Join(dir, name+".cpu.pprof"), filepath.Join(dir, name+".mem.pprof")
		cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", "^"+p.bench+"$",
			"-test.benchtime", benchtime, "-test.count", "1", "-test.cpuprofile", cpu, "-test.memprofile", mem)
		cmd.Env = append(serviceEnv(nil), "MIRRORQL_BENCH_DATABASE_URL="+d.url)
		log.Printf("profiling %s", p.bench)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("%s: %w\n%s", p.bench, err, out)
		}
		line := benchLineRE.FindString(string(out))
		p.benchLine = p.bench + " " + strings.Join(strings.Fields(line), " ")
		p.metrics = benchMetrics(line)
		top := func(args ...string) string {
			args = append([]string{"tool", "pprof", "-top"}, args...)
			o, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
			if err != nil {
				return fmt.Sprintf("pprof: %v\n%s", err, o)
			}
			return strings.TrimSpace(string(o))
		}
		p.cpuTop = top("-nodecount=18", bin, cpu)
		p.cpuCum = top("-cum", "-nodecount=40", bin, cpu)
		if pb.allocs {
			p.allocTop = top("-nodecount=18", "-sample_index=alloc_space", bin, mem)
			p.objsTop = top("-nodecount=18", "-sample_index=alloc_objects", bin, mem)
		}
		log.Printf("  %s", p.benchLine)
		res = append(res, p)
	}
	return res, nil
}

// benchMetrics reads a benchmark's result line ("531 2468245 ns/op 100.2
// goroutines/op … 643297 B/op 9247 allocs/op": the iterations, then value
// and unit pairs) into its figures by unit.
func benchMetrics(line string) map[string]float64 {
	f := strings.Fields(line)
	out := map[string]float64{}
	for i := 1; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			break
		}
		out[f[i+1]] = v
	}
	return out
}
