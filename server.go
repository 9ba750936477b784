// Command mirrorql serves the mirror node's topics, topic messages and
// schedules over REST (byte-compatible with the mirror node) and GraphQL,
// reading the mirror node's PostgreSQL database.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"mirrorql/config"
	"mirrorql/consensus"
	"mirrorql/db"
	"mirrorql/httpserver"
	"mirrorql/observe"
	"mirrorql/service"
)

//go:embed openapi.yml
var openAPISpec []byte

const usage = `usage: mirrorql [command] [flags]

commands:
  serve        serve the REST and GraphQL APIs (the default)
  migrate      create or upgrade the database schema (idempotent)
  demo         serve demo data: on a throwaway PostgreSQL cluster of its own when
               MIRRORQL_DATABASE_URL is unset, else migrate and seed (if empty) that database;
               listens on 127.0.0.1:8080 and 5600 unless MIRRORQL_LISTEN, MIRRORQL_GRPC_LISTEN
               are set (a free port when one is taken); -layout v2 builds the
               mirror node's v2 layout, partitioned by month (mirrorql demo -h for its flags)
  local-network
               serve the mirror node database of a local Hiero network on this machine,
               read-only, with the demo's banner (mirrorql local-network -h)
  seed         migrate, then write the deterministic data set (mirrorql seed -h for its flags)
  healthcheck  exit 0 if the service at MIRRORQL_LISTEN is ready, 1 if not
  help         this text

Configuration comes from MIRRORQL_* environment variables, and the database's also from the
mirror node REST module's HIERO_MIRROR_REST_DB_* ones; see docs/configuration.md.
`

func main() {
	cmd, args := "serve", os.Args[1:]
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	case "serve", "migrate", "demo", "seed", "healthcheck", "local-network":
	default:
		fmt.Fprintf(os.Stderr, "mirrorql: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if cmd == "serve" || cmd == "migrate" || cmd == "healthcheck" {
		help, err := noArguments(cmd, args, os.Stderr)
		if help {
			fmt.Print(usage)
			return
		}
		if err != nil {
			os.Exit(2)
		}
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(2)
	}
	tuneGC()
	var own ownAddrs
	if cmd == "demo" || cmd == "local-network" {
		if given := cfg.Database.Given(); len(given) > 0 {
			fmt.Fprintf(os.Stderr, "mirrorql %s: takes its database as %sDATABASE_URL (or finds its own), not as %s: "+
				"those are for serve, migrate and seed (docs/configuration.md)\n", cmd, config.Prefix, strings.Join(given, ", "))
			os.Exit(2)
		}
		if _, set := os.LookupEnv(config.Prefix + "LOG_FORMAT"); !set {
			cfg.LogFormat = "text" // a person reads the terminal
		}
		own = ownAddresses(&cfg)
	}
	logOut := observe.NewLogBuffer(os.Stderr, 64<<10, cfg.LogFlush)
	log, err := observe.NewLogger(logOut, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(2)
	}
	slog.SetDefault(log)
	switch cmd {
	case "serve", "migrate", "seed":
		cfg.LogDatabase(log)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	switch cmd {
	case "serve":
		err = serve(ctx, cfg, log)
	case "migrate":
		err = migrate(ctx, cfg)
	case "demo":
		err = demo(ctx, cfg, own, args, log, os.Stdout)
	case "local-network":
		err = localNetwork(ctx, cfg, own, args, log, os.Stdout)
	case "seed":
		err = seedCommand(ctx, cfg, args, os.Stdout)
	case "healthcheck":
		err = healthcheck(ctx, cfg)
	}
	logOut.Flush() //nolint:errcheck // nowhere left to report it
	if errors.Is(err, errUsage) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirrorql:", err)
		os.Exit(1)
	}
}

// The collector's settings unless the operator gave Go's own GOGC or
// GOMEMLIMIT. Go's default (GOGC=100) collected so often on the 100-message
// page that the collector was a large part of the service's CPU there
// (bench/results/decisions-2026-11.md); collecting at 4× the live heap, with a soft
// limit that keeps the process within its 64 MiB budget, trades memory the
// service has for CPU it lacks. The limit covers the Go runtime's memory
// only; the resident code and data of the binary come on top, hence a limit
// well below the budget, lowered as the binary grows (BENCHMARKS.md, "RSS").
const (
	gcPercent   = 300
	memoryLimit = 38 << 20
)

func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// followKeptMemory raises the soft limit by twice what the service keeps
// for the v2 layout (db.KeptBytes: the topic maps, at most 16.5 MiB, and the
// statements prepared for its partitions on each connection), unless the
// operator set GOMEMLIMIT. Both save work on every request, and both are
// live heap: counted against an unchanged limit they leave the collector
// less room, so it runs more often on the page routes; counted twice,
// those routes ran faster at the cost of more RSS (docs/layouts.md;
// bench/results/decisions-2026-11.md has the measurements). On v1 nothing
// is kept and nothing changes.
func followKeptMemory(ctx context.Context, d *db.DB) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	last := int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// in steps of a MiB: the limit moves rarely
		if b := 2 * d.KeptBytes() &^ (1<<20 - 1); b != last { // twice: see above
			debug.SetMemoryLimit(memoryLimit + b)
			last = b
		}
	}
}

// errUsage is returned by a command whose flags were wrong (it has said why).
var errUsage = errors.New("usage")

// noArguments checks that cmd, a command without flags or arguments (serve,
// migrate, healthcheck), got none: its settings are variables, and an
// argument such as --database-url would otherwise be ignored without a
// word, the command then running against the default database. It says
// why on out; help is set when the one argument asks for the usage.
func noArguments(cmd string, args []string, out io.Writer) (help bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return true, nil
	}
	fmt.Fprintf(out, "mirrorql %s: unexpected argument %q: %s takes none; its settings are MIRRORQL_* variables, "+
		"e.g. MIRRORQL_DATABASE_URL=postgres://… (docs/configuration.md)\n", cmd, args[0], cmd)
	return false, errUsage
}

func openDB(cfg config.Config) (*db.DB, error) {
	o, err := dbOptions(cfg)
	if err != nil {
		return nil, err
	}
	return db.Open(o)
}

// dbOptions are the pool's options of cfg: its database as config makes it
// from the URL or the separate settings.
func dbOptions(cfg config.Config) (db.Options, error) {
	conn, err := cfg.DBConnConfig()
	if err != nil {
		return db.Options{}, err
	}
	return db.Options{
		Conn: conn, Prepare: cfg.DBPrepare, Coalesce: cfg.DBCoalesce, PoolSize: cfg.DBPoolSize,
		StatementTimeout: cfg.DBStatementTimeout, ConnectTimeout: cfg.DBConnectTimeout,
		LookupMode: lookupMode(cfg),
	}, nil
}

// lookupMode is cfg's MIRRORQL_TOPIC_MESSAGE_LOOKUP (validated with the config).
func lookupMode(cfg config.Config) db.LookupMode {
	m, _ := db.ParseLookupMode(cfg.TopicMessageLookup)
	return m
}

func migrate(ctx context.Context, cfg config.Config) error {
	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	return db.Migrate(ctx, d.Bun())
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Health().Log = log
	ln, err := listen(cfg.Listen)
	if err != nil {
		return err
	}
	gln, err := listenGRPC(cfg.GRPCListen)
	if err != nil {
		_ = ln.Close()
		return err
	}
	if cfg.PprofListen != "" {
		if err := observe.ServeProfiles(ctx, cfg.PprofListen, log); err != nil {
			_ = ln.Close()
			closeListener(gln)
			return fmt.Errorf("%sPPROF_LISTEN: %w", config.Prefix, err)
		}
	}
	return runServer(ctx, cfg, d, log, ln, gln)
}

// listenGRPC opens the SDKs' listener on addr (MIRRORQL_GRPC_LISTEN); nil
// when addr is empty.
func listenGRPC(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	return listenAs(addr, "GRPC_LISTEN", "127.0.0.1:5601")
}

func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}

// listen opens the API's listener on addr. A port someone else holds fails
// with the variable that moves it named.
func listen(addr string) (net.Listener, error) { return listenAs(addr, "LISTEN", "127.0.0.1:9090") }

// listenAs opens a listener on addr, the value of the variable named name
// (without the prefix); example is an address to suggest when the port is
// taken.
func listenAs(addr, name, example string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		v := config.Prefix + name
		err = fmt.Errorf("%w (set %s to another address, e.g. %s=%s)", err, v, v, example)
	}
	return ln, err
}

// ownAddrs says which listen addresses of a command a person runs on their
// own machine (demo, local-network) are the command's defaults rather than the user's
// choice: a default whose port is taken moves to a free port (bindOwn).
type ownAddrs struct{ listen, grpc bool }

// ownAddresses gives cfg the addresses of the demo and local-network, 127.0.0.1:8080 and
// 127.0.0.1:5600, unless MIRRORQL_LISTEN or MIRRORQL_GRPC_LISTEN is set,
// and says which of the two are the command's own.
func ownAddresses(cfg *config.Config) ownAddrs {
	_, listenSet := os.LookupEnv(config.Prefix + "LISTEN")
	_, grpcSet := os.LookupEnv(config.Prefix + "GRPC_LISTEN")
	cfg.Listen = demoListen(cfg.Listen, listenSet)
	cfg.GRPCListen = demoGRPCListen(cfg.GRPCListen, grpcSet)
	return ownAddrs{listen: !listenSet, grpc: !grpcSet}
}

// bindOwn opens the API's listener and the SDKs' (nil when
// MIRRORQL_GRPC_LISTEN is empty) for a command a person runs on their own
// machine. A developer there often runs a local Hiero network already,
// whose gRPC holds 5600 and whose proxy or explorer holds 8080: an address
// of the command's own then moves to a free port, said on out as "mirrorql
// <cmd>: …", rather than stopping the first thing they try. An address the
// user set fails when taken, as serve's always do.
func bindOwn(cfg config.Config, own ownAddrs, out io.Writer, cmd string) (ln, gln net.Listener, err error) {
	ln, err = listenMovable(cfg.Listen, own.listen, listen, out, cmd, "LISTEN")
	if err != nil {
		return nil, nil, err
	}
	gln, err = listenMovable(cfg.GRPCListen, own.grpc, listenGRPC, out, cmd, "GRPC_LISTEN")
	if err != nil {
		_ = ln.Close()
		return nil, nil, err
	}
	return ln, gln, nil
}

// listenMovable is open(addr), but when movable and addr's port is taken,
// open on a free port of the same host, said on out; variable (without the
// prefix) is the one that sets the address.
func listenMovable(addr string, movable bool, open func(string) (net.Listener, error), out io.Writer, cmd, variable string) (net.Listener, error) {
	ln, err := open(addr)
	if err == nil || !movable || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, err
	}
	host, _, serr := net.SplitHostPort(addr)
	if serr != nil {
		return nil, err
	}
	moved, merr := open(net.JoinHostPort(host, "0"))
	if merr != nil {
		return nil, fmt.Errorf("%w; no free port on %s either: %v", err, host, merr)
	}
	fmt.Fprintf(out, "mirrorql %s: %s is taken: listening on %s instead (%s%s sets the address)\n",
		cmd, addr, moved.Addr(), config.Prefix, variable)
	return moved, nil
}

// runServer serves every face on ln, and the SDKs' (gRPC) face on gln too
// unless it is nil (MIRRORQL_GRPC_LISTEN empty), until ctx is done, then
// shuts down gracefully. The caller closes d afterwards.
func runServer(ctx context.Context, cfg config.Config, d *db.DB, log *slog.Logger, ln, gln net.Listener) error {
	go followKeptMemory(ctx, d)
	ops, err := service.NewOperations(ctx, cfg, d, log)
	if err != nil {
		_ = ln.Close()
		closeListener(gln)
		return err
	}
	defer ops.Close()
	e := service.New(cfg, d, log, ops, openAPISpec)
	grpc := service.Consensus(cfg, d, log, ops)
	opts := httpserver.Options{
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		ReadTimeout:       cfg.HTTPReadTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    config.MaxServerHeaderBytes,
		KeepAlive:         cfg.LiveKeepAlive,
		ConnContext:       consensus.ConnContext,
		Log:               log,
	}
	srv := httpserver.New(service.WithConsensus(e, grpc), opts)
	log.Info("listening", "addr", ln.Addr().String())
	// Request heads as the mirror node's HTTP server reads them (its
	// limits, its answers to malformed targets); the SDKs' own gRPC
	// listener is no REST server's and keeps Go's.
	ln = httpserver.NodeHeads(ln)
	if gln == nil {
		return httpserver.Run(ctx, srv, ln, cfg.ShutdownGrace, log, ops.EndStreams)
	}
	// The SDKs' listener holds connections that stay open without a call
	// (the Go SDK's): idle as long as the mirror node lets them (max-idle
	// 10m).
	opts.IdleTimeout = max(opts.IdleTimeout, grpcIdleTimeout)
	gsrv := httpserver.New(grpc, opts)
	log.Info("listening (gRPC)", "addr", gln.Addr().String())
	gerr := make(chan error, 1)
	go func() { gerr <- httpserver.Run(ctx, gsrv, gln, cfg.ShutdownGrace, log) }()
	err = httpserver.Run(ctx, srv, ln, cfg.ShutdownGrace, log, ops.EndStreams)
	return errors.Join(err, <-gerr)
}

// grpcIdleTimeout is the mirror node's gRPC max-idle.
const grpcIdleTimeout = 10 * time.Minute
