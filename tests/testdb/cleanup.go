package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Dropping what tests leave behind.
//
// A test's database is dropped after the test, off the test's path: a drop
// waits for the server (a v2 database is some hundreds of relations, and the
// drop checkpoints), which on a loaded machine took over a minute, and no
// test should fail, or wait, for that. Drops run in the background, a few at
// a time; Shutdown waits for them. What a process leaves when it dies, or
// when a drop fails, the next test process sweeps when it starts. On a
// throwaway cluster of the process's own (and Citus's) nothing is dropped:
// the cluster's end takes its databases with it.
//
// The sweep must never drop a database of a test process still running (on
// a shared server, another package's, or another checkout's). Each process
// holds a session advisory lock on a key of its own while it lives, and the
// name of every database and role it creates carries that key (ownedName):
// the sweep drops the objects of a key whose lock it can take. Names without
// a key (testdb's before it had one) are never swept.

// lockClass is the first half of the owners' advisory lock keys ("mqlt").
const lockClass = 0x6d716c74

// ownerMark follows Prefix in an owned name, before the owner's key in hex;
// it is no hex digit, so names from before the keys never parse as owned.
const ownerMark = "o"

// ownedName matches the names of owned databases and roles: the owner's
// key is the first group.
var ownedName = regexp.MustCompile("^" + Prefix + ownerMark + "([0-9a-f]{8})_")

// dropParallel bounds the drops run at once: each is a server-side
// checkpoint and file removal, which more of at once only queue behind.
const dropParallel = 2

// dropWait bounds one drop, and the wait for the drops of a test about them.
const dropWait = 10 * time.Minute

// shutdownWait bounds how long Shutdown waits for the background drops:
// what is left then, the next process on the server sweeps. On a busy
// shared server the drops queue behind checkpoints for minutes, and a
// package's tests, all passed, should not wait for them nor run into go
// test's -timeout.
const shutdownWait = time.Minute

var (
	// ownerKey is this process's key (under mu; 0 until the lock is held),
	// held by ownerConn's session.
	ownerKey  uint32
	ownerConn *sql.Conn

	drops    sync.WaitGroup
	dropSlot = make(chan struct{}, dropParallel)
	dropMu   sync.Mutex
	dropping = map[string]bool{} // databases whose drop is under way
)

// takeOwnerKey takes a key no live test process holds, and holds it on a
// session of admin for the process's life (Shutdown releases it), then
// starts the sweep. mu is held.
func takeOwnerKey(admin *sql.DB) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return fmt.Errorf("owner lock: %w", err)
	}
	for range 100 {
		var b [4]byte
		_, _ = rand.Read(b[:])
		key := binary.BigEndian.Uint32(b[:])
		if key == buildLock {
			continue
		}
		var ok bool
		if err := conn.QueryRowContext(ctx, "select pg_try_advisory_lock($1, $2)", lockClass, int32(key)).Scan(&ok); err != nil { //nolint:gosec // the key's bits, as PostgreSQL's int4
			_ = conn.Close()
			return fmt.Errorf("owner lock: %w", err)
		}
		if ok {
			ownerKey, ownerConn = key, conn
			drops.Add(1)
			go func() { defer drops.Done(); sweep(admin, key) }()
			return nil
		}
	}
	_ = conn.Close()
	return fmt.Errorf("owner lock: no free key in 100 tries")
}

// ownedPrefix starts the names of what this process creates.
func ownedPrefix() string {
	mu.Lock()
	defer mu.Unlock()
	return fmt.Sprintf("%s%s%08x_", Prefix, ownerMark, ownerKey)
}

// dropLater drops database name in the background (if it exists), then runs
// after (say, DROP ROLE of the roles that owned it). A failure is logged and
// left to the next process's sweep: the test that made the database has
// passed or failed on its own already.
func dropLater(admin *sql.DB, name string, after ...string) {
	dropMu.Lock()
	dropping[name] = true
	dropMu.Unlock()
	drops.Add(1)
	go func() {
		defer drops.Done()
		dropSlot <- struct{}{}
		defer func() { <-dropSlot }()
		err := dropNow(admin, name, after...)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testdb: %v; the next test process sweeps it\n", err)
		}
		dropMu.Lock()
		delete(dropping, name)
		dropMu.Unlock()
	}()
}

// dropNow drops database name (if it exists), then runs after.
func dropNow(admin *sql.DB, name string, after ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	for _, stmt := range after {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("after dropping %s: %s: %w", name, stmt, err)
		}
	}
	return nil
}

// waitDrops waits for the background drops (and the sweep), up to limit;
// it names what is still being dropped then.
func waitDrops(limit time.Duration) {
	done := make(chan struct{})
	go func() { drops.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		dropMu.Lock()
		left := slices.Sorted(func(yield func(string) bool) {
			for name := range dropping {
				if !yield(name) {
					return
				}
			}
		})
		dropMu.Unlock()
		fmt.Fprintf(os.Stderr, "testdb: %d databases still being dropped after %s, left to the next test process's sweep: %s\n",
			len(left), limit, strings.Join(left, ", "))
	}
}

// sweep drops the databases, then the roles, of owners that are gone (their
// lock free), but own's, and says so on stderr (go test shows it with -v
// or on failure).
func sweep(admin *sql.DB, own uint32) {
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	names := func(query string) ([]string, error) {
		rows, err := admin.QueryContext(ctx, query, Prefix+ownerMark+"%")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, rows.Err()
	}
	dbs, err := names("select datname from pg_database where datname like $1 order by datname")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
		return
	}
	roles, err := names("select rolname from pg_roles where rolname like $1 order by rolname")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
		return
	}
	byOwner := map[uint32][2][]string{}
	for i, list := range [][]string{dbs, roles} {
		for _, n := range list {
			m := ownedName.FindStringSubmatch(n)
			if m == nil {
				continue
			}
			k, _ := strconv.ParseUint(m[1], 16, 32)
			if key := uint32(k); key != own {
				e := byOwner[key]
				e[i] = append(e[i], n)
				byOwner[key] = e
			}
		}
	}
	if len(byOwner) == 0 {
		return
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
		return
	}
	defer conn.Close()
	for key, owned := range byOwner {
		var gone bool
		if err := conn.QueryRowContext(ctx, "select pg_try_advisory_lock($1, $2)", lockClass, int32(key)).Scan(&gone); err != nil { //nolint:gosec // as in takeOwnerKey
			fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
			return
		}
		if !gone {
			continue // its process runs
		}
		fmt.Fprintf(os.Stderr, "testdb: sweeping what an ended test process left: databases %s; roles %s\n",
			strings.Join(owned[0], ", "), strings.Join(owned[1], ", "))
		for _, n := range owned[0] {
			if err := dropNow(admin, n); err != nil {
				fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
			}
		}
		if len(owned[1]) > 0 {
			ids := make([]string, len(owned[1]))
			for i, r := range owned[1] {
				ids[i] = pgx.Identifier{r}.Sanitize()
			}
			if _, err := admin.ExecContext(ctx, "drop role if exists "+strings.Join(ids, ", ")); err != nil {
				fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
			}
		}
		if _, err := conn.ExecContext(ctx, "select pg_advisory_unlock($1, $2)", lockClass, int32(key)); err != nil { //nolint:gosec // as in takeOwnerKey
			fmt.Fprintln(os.Stderr, "testdb: sweep:", err)
			return
		}
	}
}
