// Package pgcluster runs a throwaway PostgreSQL cluster from the locally
// installed server binaries: for tests when no server is reachable, and for
// `mirrorql demo`.
//
// The server runs as a child process of the caller, in its own process group
// (so a Ctrl-C aimed at the caller does not reach it) and, on Linux, with a
// parent-death signal, so it does not outlive a caller that dies without
// calling Stop. A later Start removes the directories such callers left behind.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotInstalled is returned (wrapped) when no PostgreSQL server binaries are found.
var ErrNotInstalled = errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH or in " +
	"/usr/lib/postgresql/*/bin: install the Debian package `postgresql` (e.g. `apt-get install -y postgresql`)")

// dirPrefix names the temporary directories of clusters, so Start can find stale ones.
const dirPrefix = "mirrorql-pgcluster-"

// Options configure Start. The zero value is ready to use.
type Options struct {
	// Database is created once the server is up; default "mirror_node".
	Database string
	// BinDir holds initdb and postgres; default FindBinaries().
	BinDir string
	// Port to listen on, on 127.0.0.1; default a free one.
	Port int
	// StartTimeout bounds initdb plus start-up; default 3 minutes. It only
	// tells a hang from a slow start: nine Citus nodes starting side by side
	// beside three test processes (a CI run) outlasted one minute.
	StartTimeout time.Duration
	// Settings are extra server settings, passed as -c name=value.
	Settings map[string]string
}

// Cluster is a running throwaway server. Its files live in Dir(), which Stop removes.
type Cluster struct {
	dir      string // our temporary directory: data/, the socket, postgres.log, owner.pid
	port     int
	database string
	cmd      *exec.Cmd
	exited   <-chan error // closed once the postmaster has exited (StartKept)
	logFile  *os.File
	opts     Options             // as given to Start, for StartServer
	cred     *syscall.Credential // who the server runs as (nil: ourselves)

	stopOnce sync.Once
	stopErr  error
}

// EnvBinDir names the variable that chooses the server build: a directory
// holding initdb and postgres (scripts/postgres.sh prints one per version).
// It wins over PATH and Debian's, so that one setting moves the demo and
// every throwaway cluster of the tests to another PostgreSQL version.
const EnvBinDir = "MIRRORQL_POSTGRES_BIN"

// FindBinaries returns the directory that holds initdb and postgres:
// $MIRRORQL_POSTGRES_BIN when set, else the one initdb is found in on PATH,
// else the newest /usr/lib/postgresql/<version>/bin.
func FindBinaries() (string, error) {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
		return "", fmt.Errorf("%w: %s=%s holds no initdb and postgres", ErrNotInstalled, EnvBinDir, dir)
	}
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		// /usr/local/bin/initdb may be a symlink into the real bin directory,
		// which is where postgres is sure to be as well.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(real))
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	candidates = append(candidates, debianBinDirs()...)
	for _, dir := range candidates {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", ErrNotInstalled
}

// debianBinGlob is where Debian's postgresql-<version> packages put the server.
var debianBinGlob = "/usr/lib/postgresql/*/bin"

// debianBinDirs lists the debianBinGlob directories, newest version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob(debianBinGlob)
	version := func(dir string) []int {
		var v []int
		for _, part := range strings.Split(filepath.Base(filepath.Dir(dir)), ".") {
			n, err := strconv.Atoi(part)
			if err != nil {
				n = -1
			}
			v = append(v, n)
		}
		return v
	}
	sort.SliceStable(dirs, func(i, j int) bool { return slices.Compare(version(dirs[i]), version(dirs[j])) > 0 })
	return dirs
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Start creates a cluster in a new temporary directory (initdb with trust
// authentication, user postgres), starts it on 127.0.0.1, waits until it
// accepts connections and creates opts.Database. The caller must Stop it.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Database == "" {
		opts.Database = "mirror_node"
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if opts.BinDir == "" {
		dir, err := FindBinaries()
		if err != nil {
			return nil, err
		}
		opts.BinDir = dir
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	removeStale()

	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	c := &Cluster{dir: dir, database: opts.Database, opts: opts, cred: cred}
	ok := false
	defer func() {
		if !ok {
			_ = c.Stop()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
	}

	initdb := exec.CommandContext(ctx, filepath.Join(opts.BinDir, "initdb"),
		"-D", c.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
	initdb.Dir = dir
	initdb.Env = serverEnv()
	initdb.SysProcAttr = sysProcAttr(cred)
	// Kept on its thread, as the server is: its parent-death signal came
	// midway when the runtime retired the thread that had started it.
	if out, err := RunKept(initdb); err != nil {
		return nil, fmt.Errorf("pgcluster: initdb: %w\n%s", err, out)
	}

	c.logFile, err = os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	// A free port found now may be taken before the server binds it: retry.
	for attempt := 1; ; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, fmt.Errorf("pgcluster: %w", err)
			}
		}
		err = c.start(ctx, opts, cred, port)
		if err == nil {
			break
		}
		if opts.Port != 0 || attempt == 3 || !strings.Contains(err.Error(), "could not bind") {
			return nil, err
		}
	}

	if opts.Database != "postgres" {
		conn, err := connect(ctx, c.AdminURL())
		if err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
		_, err = conn.Exec(ctx, "create database "+pgx.Identifier{opts.Database}.Sanitize())
		_ = conn.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, fmt.Errorf("pgcluster: create database: %w", err)
		}
	}
	ok = true
	return c, nil
}

// start runs the postmaster on port and waits until it accepts connections.
func (c *Cluster) start(ctx context.Context, opts Options, cred *syscall.Credential, port int) error {
	args := []string{
		"-D", c.dataDir(),
		"-k", c.dir,
		"-p", strconv.Itoa(port),
		// Throwaway data: durability buys nothing, speed matters.
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
	}
	names := make([]string, 0, len(opts.Settings))
	for name := range opts.Settings {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "-c", name+"="+opts.Settings[name])
	}
	logStart, _ := c.logFile.Seek(0, 2)

	cmd := exec.Command(filepath.Join(opts.BinDir, "postgres"), args...)
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	cmd.Stdout = c.logFile
	cmd.Stderr = c.logFile
	cmd.SysProcAttr = sysProcAttr(cred)
	// The server dies with the thread that started it (sysProcAttr's
	// parent-death signal), so that thread is kept while it runs.
	exited, err := StartKept(cmd)
	if err != nil {
		return fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	c.cmd, c.exited, c.port = cmd, exited, port

	for {
		// a second an attempt: the server is polled until it answers
		conn, err := connectWithin(ctx, c.AdminURL(), time.Second)
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		select {
		case <-exited:
			c.cmd, c.exited = nil, nil
			return fmt.Errorf("pgcluster: postgres exited during start-up: %s", c.logSince(logStart))
		case <-ctx.Done():
			return fmt.Errorf("pgcluster: postgres did not accept connections within %s (%w): %s",
				opts.StartTimeout, err, c.logSince(logStart))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connect connects to url for a statement, waiting up to half a minute
// (and no longer than ctx): a new database's first backend on a machine
// running three test processes took more than a second (a Citus run's
// citus_add_node, which then failed every test of its process).
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	return connectWithin(ctx, url, 30*time.Second)
}

// connectWithin connects to url, giving up on an attempt after timeout.
func connectWithin(ctx context.Context, url string, timeout time.Duration) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = timeout
	return pgx.ConnectConfig(ctx, cfg)
}

// logSince returns the server log written from offset on, trimmed to its end.
func (c *Cluster) logSince(offset int64) string {
	b, _ := os.ReadFile(c.logFile.Name())
	if offset < int64(len(b)) {
		b = b[offset:]
	}
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(bytes.TrimSpace(b))
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// URL is the address of the cluster's database (Options.Database).
func (c *Cluster) URL() string { return c.urlOf(c.database) }

// AdminURL is the address of the cluster's postgres database.
func (c *Cluster) AdminURL() string { return c.urlOf("postgres") }

func (c *Cluster) urlOf(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

// Port is the TCP port the server listens on, on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// Dir is the cluster's temporary directory: the data directory (data/), the
// Unix socket, postgres.log. Stop removes it.
func (c *Cluster) Dir() string { return c.dir }

// PID is the process ID of the postmaster (0 when it is not running).
func (c *Cluster) PID() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// StopServer shuts the server down (fast shutdown: open sessions are ended)
// but keeps Dir(), so StartServer can bring the same cluster back on the same
// port, as a database outage would. It does nothing when the server is not
// running. Not safe for concurrent use with StartServer or Stop.
func (c *Cluster) StopServer() error {
	if c.cmd == nil {
		return nil
	}
	err := c.stopServer()
	c.cmd, c.exited = nil, nil
	return err
}

// StartServer starts the server of a cluster stopped by StopServer again, on
// the same port and data directory, and waits until it accepts connections
// (within the StartTimeout given to Start). It does nothing when the server
// is running.
func (c *Cluster) StartServer(ctx context.Context) error {
	if c.cmd != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	return c.start(ctx, c.opts, c.cred, c.port)
}

// StartStandby starts a hot standby of c: a new cluster copied from c by a
// base backup, streaming c's changes through a replication slot and
// answering read-only queries while in recovery, as a read replica does. The
// caller must Stop it (before or after c).
func (c *Cluster) StartStandby(ctx context.Context) (*Cluster, error) {
	if c.cmd == nil {
		return nil, errors.New("pgcluster: StartStandby: the primary is not running")
	}
	opts := c.opts
	opts.Port = 0
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	s := &Cluster{dir: dir, database: c.database, opts: opts, cred: c.cred}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.baseBackup(ctx, s.dataDir()); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := chownTree(dir, s.cred); err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
	}
	s.logFile, err = os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
		err = s.start(ctx, opts, s.cred, port)
		if err == nil {
			break
		}
		if attempt == 3 || !strings.Contains(err.Error(), "could not bind") {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// baseBackup copies c's data directory into dst as a standby of c, with the
// server's own low-level backup functions rather than pg_basebackup, which
// server builds without client tools (scripts/postgres.sh) lack and which
// refuses a server newer than itself. A physical slot keeps the WAL from the
// backup's start until the standby streams it.
func (c *Cluster) baseBackup(ctx context.Context, dst string) error {
	conn, err := connect(ctx, c.AdminURL())
	if err != nil {
		return fmt.Errorf("pgcluster: base backup: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from pg_replication_slots").Scan(&n); err != nil {
		return fmt.Errorf("pgcluster: base backup: %w", err)
	}
	slot := fmt.Sprintf("standby_%d", n+1)
	if _, err := conn.Exec(ctx, "select pg_create_physical_replication_slot($1, true)", slot); err != nil {
		return fmt.Errorf("pgcluster: base backup: %w", err)
	}
	// The session that starts a backup must be the one that stops it.
	if _, err := conn.Exec(ctx, "select pg_backup_start('mirrorql standby', true)"); err != nil {
		return fmt.Errorf("pgcluster: base backup: %w", err)
	}
	copyErr := copyDataDir(c.dataDir(), dst)
	var label string
	if err := conn.QueryRow(ctx, "select labelfile from pg_backup_stop(false)").Scan(&label); err != nil {
		return fmt.Errorf("pgcluster: base backup: %w", err)
	}
	if copyErr != nil {
		return fmt.Errorf("pgcluster: base backup: %w", copyErr)
	}
	conf := fmt.Sprintf("primary_conninfo = 'host=127.0.0.1 port=%d user=postgres'\nprimary_slot_name = '%s'\n", c.port, slot)
	for name, content := range map[string]string{
		"backup_label":         label,
		"standby.signal":       "",
		"postgresql.auto.conf": conf,
	} {
		if err := os.WriteFile(filepath.Join(dst, name), []byte(content), 0o600); err != nil {
			return fmt.Errorf("pgcluster: base backup: %w", err)
		}
	}
	return nil
}

// copyDataDir copies a running server's data directory as a base backup
// takes it: without the files the server keeps for itself alone (its pid
// file, WAL, which the standby streams, and temporary state). A file that
// vanishes while copied was a temporary one.
func copyDataDir(src, dst string) error {
	skip := map[string]bool{"postmaster.pid": true, "postmaster.opts": true, "postgresql.auto.conf": true,
		"pg_internal.init": true}
	empty := map[string]bool{"pg_wal": true, "pg_replslot": true, "pg_stat_tmp": true, "pg_dynshmem": true,
		"pg_notify": true, "pg_serial": true, "pg_snapshots": true, "pg_subtrans": true}
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
			if empty[rel] {
				return filepath.SkipDir
			}
			return nil
		}
		if skip[d.Name()] || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
}

// chownTree hands dir and everything in it to cred's user.
func chownTree(dir string, cred *syscall.Credential) error {
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}

// stopServer signals the postmaster until it exits: SIGINT is what
// `pg_ctl stop -m fast` sends; then immediate shutdown, then kill.
func (c *Cluster) stopServer() error {
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, 30 * time.Second}, {syscall.SIGQUIT, 5 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		_ = c.cmd.Process.Signal(step.sig)
		select {
		case <-c.exited:
			return nil
		case <-time.After(step.wait):
		}
	}
	return fmt.Errorf("pgcluster: postgres (pid %d) did not exit", c.cmd.Process.Pid)
}

// Stop shuts the server down (fast shutdown: open sessions are ended) and
// removes Dir(). It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		if c.cmd != nil {
			if err := c.stopServer(); err != nil {
				errs = append(errs, err)
			}
		}
		if c.logFile != nil {
			_ = c.logFile.Close()
		}
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("pgcluster: %w", err))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// serverCredential returns who to run initdb and postgres as: nil (ourselves),
// or, when we are root (which both refuse to run as), the postgres OS user.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root, which initdb and postgres refuse, and "+
			"no `postgres` OS user to run them as (%w); install the Debian package `postgresql` "+
			"(e.g. `apt-get install -y postgresql`), which creates it", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgcluster: user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// serverEnv is our environment without PG* variables, which would otherwise
// steer initdb and postgres (PGDATA, PGPORT, ...), and without HOME: a
// server run as the postgres OS user that connects out (Citus to its
// workers) would look for client certificates in our home, which it may
// not read; without HOME, libpq asks the user database for its own.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// removeStale deletes the directories of clusters whose owning process has
// died without calling Stop (a test binary killed on timeout, say), once their
// server is gone too. A directory whose server still runs is left alone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		owner, err := readPID(filepath.Join(dir, "owner.pid"))
		if err != nil {
			// Being created right now, or not ours: only very old ones go.
			if fi, err := os.Stat(dir); err != nil || time.Since(fi.ModTime()) < 24*time.Hour {
				continue
			}
		} else if alive(owner) {
			continue
		}
		if pid, err := readPID(filepath.Join(dir, "data", "postmaster.pid")); err == nil && alive(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// readPID reads the number on the first line of a file.
func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
