package pgcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Access is how a running cluster admits its clients, for the tests of
// passwords and TLS: clusters start admitting everyone (trust).
type Access struct {
	// HBA are the lines of pg_hba.conf. The cluster's own line comes
	// first: postgres over the Unix socket in Dir(), by trust, which the
	// cluster reconfigures itself through.
	HBA []string
	// Files are written into the data directory, readable by the server
	// alone (a key must be): Settings name them by their names, which the
	// server reads relative to its data directory (ssl_cert_file=server.crt).
	Files map[string][]byte
	// Settings are server settings made with ALTER SYSTEM, so they last
	// across restarts (ssl=on, ssl_cert_file, …).
	Settings map[string]string
}

// settingName is what ALTER SYSTEM is given as a name: a server setting's,
// never text of a statement.
var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// SetAccess writes a's files and pg_hba.conf, sets its settings and has the
// server load them, and returns once a new session sees them loaded (a
// reload is asynchronous). Past it, connections over TCP follow a.HBA alone:
// AdminURL, StartServer and StartStandby then work only if a.HBA admits
// postgres over TCP without a password or TLS.
func (c *Cluster) SetAccess(ctx context.Context, a Access) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	names := make([]string, 0, len(a.Settings))
	for name := range a.Settings {
		if !settingName.MatchString(name) {
			return fmt.Errorf("pgcluster: SetAccess: %q is not a setting's name", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for name, content := range a.Files {
		if name != filepath.Base(name) || name == "pg_hba.conf" {
			return fmt.Errorf("pgcluster: SetAccess: file %q: a name in the data directory, not pg_hba.conf", name)
		}
		if err := c.writeServerFile(name, content); err != nil {
			return err
		}
	}
	hba := "local all postgres trust\n" + strings.Join(a.HBA, "\n") + "\n"
	if err := c.writeServerFile("pg_hba.conf", []byte(hba)); err != nil {
		return err
	}
	conn, err := connect(ctx, c.socketURL())
	if err != nil {
		return fmt.Errorf("pgcluster: SetAccess: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, name := range names {
		// ALTER SYSTEM takes no parameters: the value is a literal
		// (standard_conforming_strings: only a quote is doubled).
		value := "'" + strings.ReplaceAll(a.Settings[name], "'", "''") + "'"
		if _, err := conn.Exec(ctx, "alter system set "+name+" = "+value); err != nil {
			return fmt.Errorf("pgcluster: SetAccess: %s: %w", name, err)
		}
	}
	var before time.Time
	if err := conn.QueryRow(ctx, "select pg_conf_load_time()").Scan(&before); err != nil {
		return fmt.Errorf("pgcluster: SetAccess: %w", err)
	}
	if _, err := conn.Exec(ctx, "select pg_reload_conf()"); err != nil {
		return fmt.Errorf("pgcluster: SetAccess: %w", err)
	}
	// A new session is forked by the postmaster, so its load time is the
	// postmaster's: later than before once the postmaster has read the
	// files again, pg_hba.conf with them.
	for {
		loaded, err := c.loadedSince(ctx, before)
		if err != nil {
			return fmt.Errorf("pgcluster: SetAccess: %w", err)
		}
		if loaded {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgcluster: SetAccess: the server did not reload within %s", c.opts.StartTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A line the server could not read leaves the previous rules in force.
	// (The files' other settings are the command line's to override: those
	// that need a restart are reported as not applied, and are not ours.)
	rows, err := conn.Query(ctx, "select line_number, error from pg_hba_file_rules where error is not null "+
		"union all select seqno, name || ': ' || error from pg_file_settings where error is not null and name = any($1)", names)
	if err != nil {
		return fmt.Errorf("pgcluster: SetAccess: %w", err)
	}
	problems, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var n int
		var e string
		err := r.Scan(&n, &e)
		return strconv.Itoa(n) + ": " + e, err
	})
	if err != nil {
		return fmt.Errorf("pgcluster: SetAccess: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("pgcluster: SetAccess: the server refused its configuration: %s", strings.Join(problems, "; "))
	}
	return nil
}

// loadedSince reports whether a new session sees the configuration loaded
// after t.
func (c *Cluster) loadedSince(ctx context.Context, t time.Time) (bool, error) {
	conn, err := connect(ctx, c.socketURL())
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var later bool
	err = conn.QueryRow(ctx, "select pg_conf_load_time() > $1", t).Scan(&later)
	return later, err
}

// writeServerFile writes name into the data directory, the server's user's
// and readable by it alone.
func (c *Cluster) writeServerFile(name string, content []byte) error {
	path := filepath.Join(c.dataDir(), name)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	// WriteFile keeps the mode of a file that exists (pg_hba.conf).
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	return nil
}

// socketURL is the postgres database as postgres, over the cluster's Unix
// socket in Dir(): the line SetAccess keeps first in pg_hba.conf.
func (c *Cluster) socketURL() string {
	return fmt.Sprintf("host='%s' port=%d user=postgres dbname=postgres sslmode=disable",
		strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(c.dir), c.port)
}
