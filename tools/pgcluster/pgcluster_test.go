package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/tests/prereq"
)

func TestFindBinaries(t *testing.T) {
	t.Parallel()
	dir, err := FindBinaries()
	if errors.Is(err, ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "postgres"} {
		if !isExecutable(filepath.Join(dir, name)) {
			t.Errorf("%s has no executable %s", dir, name)
		}
	}
}

func TestFindBinariesNone(t *testing.T) {
	defer func(g string) { debianBinGlob = g }(debianBinGlob)
	debianBinGlob = filepath.Join(t.TempDir(), "*", "bin")
	t.Setenv("PATH", t.TempDir())
	t.Setenv(EnvBinDir, "")
	_, err := FindBinaries()
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v, want ErrNotInstalled", err)
	}
	if want := "install the Debian package `postgresql` (e.g. `apt-get install -y postgresql`)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestFindBinariesEnv: MIRRORQL_POSTGRES_BIN wins over PATH and Debian's
// directories, and one that holds no server is an error, not a fallback to
// another version.
func TestFindBinariesEnv(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvBinDir, empty)
	if _, err := FindBinaries(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), empty) {
		t.Errorf("%s=%s (empty): err = %v, want ErrNotInstalled naming the directory", EnvBinDir, empty, err)
	}
	dir := t.TempDir()
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvBinDir, dir)
	if got, err := FindBinaries(); err != nil || got != dir {
		t.Errorf("%s=%s: FindBinaries() = %q, %v", EnvBinDir, dir, got, err)
	}
}

func TestDebianBinDirsOrder(t *testing.T) {
	defer func(g string) { debianBinGlob = g }(debianBinGlob)
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "10", "16"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	debianBinGlob = filepath.Join(root, "*", "bin")
	var got []string
	for _, d := range debianBinDirs() {
		got = append(got, filepath.Base(filepath.Dir(d)))
	}
	if want := "16 15 10 9.6"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	if _, err := FindBinaries(); errors.Is(err, ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{Database: "cluster_test", Settings: map[string]string{"application_name": "pgcluster_test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })

	if want := "postgres://postgres@127.0.0.1:" + strconv.Itoa(c.Port()) + "/cluster_test?sslmode=disable"; c.URL() != want {
		t.Errorf("URL() = %q, want %q", c.URL(), want)
	}
	if c.PID() <= 0 || !alive(c.PID()) {
		t.Errorf("PID() = %d, not a live process", c.PID())
	}
	if _, err := os.Stat(filepath.Join(c.Dir(), "data", "PG_VERSION")); err != nil {
		t.Errorf("data directory: %v", err)
	}

	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	var db, user, fsync string
	if err := conn.QueryRow(ctx, "select current_database(), current_user, current_setting('fsync')").Scan(&db, &user, &fsync); err != nil {
		t.Fatal(err)
	}
	if db != "cluster_test" || user != "postgres" || fsync != "off" {
		t.Errorf("database, user, fsync = %q, %q, %q", db, user, fsync)
	}
	var enc string
	if err := conn.QueryRow(ctx, "show server_encoding").Scan(&enc); err != nil || enc != "UTF8" {
		t.Errorf("server_encoding = %q, %v", enc, err)
	}

	// Stop ends open sessions, removes the directory, and can be repeated.
	pid, dir := c.PID(), c.Dir()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (%v)", dir, err)
	}
	if alive(pid) {
		t.Errorf("postgres pid %d still alive after Stop", pid)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := pgx.Connect(ctx, c.AdminURL()); err == nil {
		t.Error("connected after Stop")
	}
}

// TestStopStartServer stops the server alone and starts it again on the
// same port and data directory: the data survives, Stop still cleans up.
func TestStopStartServer(t *testing.T) {
	t.Parallel()
	if _, err := FindBinaries(); errors.Is(err, ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{Database: "restart_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	exec1 := func(sql string) error {
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec1("create table kept (x int); insert into kept values (42)"); err != nil {
		t.Fatal(err)
	}
	port, dir, pid := c.Port(), c.Dir(), c.PID()
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	if c.PID() != 0 || alive(pid) {
		t.Errorf("postgres pid %d still running after StopServer", pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		t.Errorf("StopServer removed the data directory: %v", err)
	}
	if err := exec1("select 1"); err == nil {
		t.Error("connected after StopServer")
	}
	if err := c.StopServer(); err != nil {
		t.Errorf("second StopServer: %v", err)
	}
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Port() != port || c.Dir() != dir || c.PID() == 0 || c.PID() == pid {
		t.Errorf("after StartServer: port %d (was %d), dir %s (was %s), pid %d (was %d)", c.Port(), port, c.Dir(), dir, c.PID(), pid)
	}
	if err := exec1("do $$ begin if (select x from kept) <> 42 then raise 'lost'; end if; end $$"); err != nil {
		t.Errorf("data after restart: %v", err)
	}
	if err := c.StartServer(ctx); err != nil {
		t.Errorf("StartServer while running: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop", dir)
	}
}

func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := filepath.Join(tmp, dirPrefix+"dead")
	live := filepath.Join(tmp, dirPrefix+"live")
	fresh := filepath.Join(tmp, dirPrefix+"fresh") // no owner.pid yet: being created
	for _, d := range []string{dead, live, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A pid that is certainly not running: a child that has exited and been reaped.
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait()
	write := func(path string, pid int) {
		if err := os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dead, "owner.pid"), p.Pid)
	write(filepath.Join(live, "owner.pid"), os.Getpid())

	removeStale()

	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale dir kept (%v)", err)
	}
	for _, d := range []string{live, fresh} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

func TestAlive(t *testing.T) {
	t.Parallel()
	if !alive(os.Getpid()) {
		t.Error("alive(self) = false")
	}
	if alive(0) || alive(-1) {
		t.Error("alive(<=0) = true")
	}
}

// TestOwnerKilled checks that a server does not outlive a caller killed
// without Stop, and that the next Start sweeps the directory it left.
func TestOwnerKilled(t *testing.T) {
	if os.Getenv("PGCLUSTER_TEST_OWNER") == "1" {
		c, err := Start(context.Background(), Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(c.PID(), c.Dir())
		time.Sleep(time.Minute) // the owner's life: the test kills it long before
		os.Exit(1)
	}
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal is Linux only")
	}
	if _, err := FindBinaries(); errors.Is(err, ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnerKilled$")
	cmd.Env = append(os.Environ(), "PGCLUSTER_TEST_OWNER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("owner: %q, %v", line, err)
	}
	var pid int
	var dir string
	if _, err := fmt.Sscan(line, &pid, &dir); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("owner said %q", line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("postgres pid %d survived its owner", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Whoever starts a cluster next sweeps the directory: this test, or a
	// Start elsewhere (a parallel test, another test binary) already.
	removeStale()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		_ = os.RemoveAll(dir)
		t.Errorf("stale dir %s kept (%v)", dir, err)
	}
}

// TestCitus: a coordinator and two workers, a Citus database made on every
// node with its workers added, a distributed table in it, and a copy of that
// database made from it on every node (the tests' v2-citus databases are
// such copies): a distributed database of its own, whose changes the
// original does not see.
func TestCitus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := StartCitus(ctx, CitusOptions{})
	if errors.Is(err, ErrCitusNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := c.CreateDatabase(ctx, "one", "", ""); err != nil {
		t.Fatal(err)
	}
	conn, err := connect(ctx, c.URL("one"))
	if err != nil {
		t.Fatal(err)
	}
	var workers int
	if err := conn.QueryRow(ctx, "select count(*) from citus_get_active_worker_nodes()").Scan(&workers); err != nil || workers != 2 {
		t.Fatalf("%d workers (%v), want 2", workers, err)
	}
	for _, stmt := range []string{"create table t (id bigint, v text)", "select create_distributed_table('t', 'id', shard_count := 4)",
		"insert into t select i, 'v' || i from generate_series(1, 100) i"} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	_ = conn.Close(ctx)
	if err := c.CreateDatabase(ctx, "two", "one", ""); err != nil {
		t.Fatal(err)
	}
	copied, err := connect(ctx, c.URL("two"))
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close(ctx)
	if _, err := copied.Exec(ctx, "delete from t where id > 50"); err != nil {
		t.Fatal(err)
	}
	var n, placements int
	if err := copied.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := copied.QueryRow(ctx, "select count(distinct nodeport) from pg_dist_shard_placement").Scan(&placements); err != nil {
		t.Fatal(err)
	}
	if n != 50 || placements != 2 {
		t.Errorf("the copy holds %d rows on %d workers, want 50 on 2", n, placements)
	}
	for _, n := range c.nodes() { // a template takes no connections (CreateDatabase)
		if err := execOn(ctx, n.AdminURL(), "alter database one with allow_connections true"); err != nil {
			t.Fatal(err)
		}
	}
	original, err := connect(ctx, c.URL("one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := original.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil || n != 100 {
		t.Errorf("the original holds %d rows (%v), want its 100", n, err)
	}
	_ = original.Close(ctx)
	if err := c.DropDatabase(ctx, "one"); err != nil {
		t.Error(err)
	}
}
