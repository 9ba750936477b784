package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// profileResult is the in-process profile of one request path.
type profileResult struct {
	bench     string
	benchLine string // ns/op, B/op, allocs/op
	cpuTop    string
	cpuCum    string
	allocTop  string
	objsTop   string
}

// profiled are bench/handler's benchmarks run by `make bench`; the first
// gets the full write-up (CPU and allocations), the others a CPU top list.
var profiled = []string{"BySequence", "List25", "ListGt100", "GraphQLMessage", "GraphQLPage"}

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
	for i, name := range profiled {
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
		p.benchLine = p.bench + " " + strings.Join(strings.Fields(benchLineRE.FindString(string(out))), " ")
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
		if i == 0 {
			p.allocTop = top("-nodecount=18", "-sample_index=alloc_space", bin, mem)
			p.objsTop = top("-nodecount=18", "-sample_index=alloc_objects", bin, mem)
		}
		log.Printf("  %s", p.benchLine)
		res = append(res, p)
	}
	return res, nil
}
