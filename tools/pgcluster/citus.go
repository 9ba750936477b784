package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrCitusNotInstalled is returned (wrapped) when no PostgreSQL server on this
// machine has the citus extension (scripts/citus.sh builds and installs it).
var ErrCitusNotInstalled = errors.New("no PostgreSQL server here has the citus extension: run scripts/citus.sh")

// CitusOptions configure StartCitus. The zero value is ready to use.
type CitusOptions struct {
	// Workers is how many worker nodes hold the shards; default 2, as the
	// mirror node's chart (StackGres SGShardedCluster) has at the least.
	Workers int
	// BinDir holds initdb and postgres of a server with citus installed;
	// default FindCitus().
	BinDir string
	// StartTimeout bounds each node's initdb and start-up; default 3 minutes.
	StartTimeout time.Duration
	// Settings are extra server settings of every node.
	Settings map[string]string
}

// Citus is a Citus cluster on this machine as the mirror node's chart makes
// one: a coordinator and workers, each a throwaway cluster of its own on a
// loopback port with citus preloaded. Citus 12.1 does not propagate CREATE
// DATABASE, so a database is created on every node (CreateDatabase).
type Citus struct {
	Coordinator *Cluster
	Workers     []*Cluster

	mu sync.Mutex // one CREATE or DROP DATABASE at a time across the nodes
}

// FindCitus returns the bin directory of an installed server whose
// extension directory holds citus: Debian's, where scripts/citus.sh
// installs it.
func FindCitus() (string, error) {
	for _, dir := range debianBinDirs() {
		pgConfig := filepath.Join(dir, "pg_config")
		if !isExecutable(pgConfig) {
			continue
		}
		out, err := exec.Command(pgConfig, "--pkglibdir").Output()
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "citus.so")); err == nil {
			return dir, nil
		}
	}
	return "", ErrCitusNotInstalled
}

// citusSettings are what every node needs beyond Start's own. Citus must be
// preloaded. The v2 layout's DDL takes a lock per shard of every monthly
// partition in one transaction, past the default lock table. Every
// coordinator session may open connections to each worker, so the workers
// take more than the coordinator. The lookup's trigger (fixture's stand-in
// for the importer) fires on the shards, which Citus allows when told.
var citusSettings = map[string]string{
	"shared_preload_libraries":     "citus",
	"max_locks_per_transaction":    "2048",
	"max_connections":              "400",
	"citus.enable_unsafe_triggers": "on",
	// Throwaway nodes on one machine: none of the maintenance daemon's
	// periodic work (statistics, recovery of two-phase commits, the search
	// for distributed deadlocks) competing with the tests in every database.
	"citus.enable_statistics_collection":          "off",
	"citus.recover_2pc_interval":                  "-1",
	"citus.distributed_deadlock_detection_factor": "-1",
}

// StartCitus starts a coordinator and opts.Workers workers. The caller must
// Stop it. Databases come from CreateDatabase.
func StartCitus(ctx context.Context, opts CitusOptions) (*Citus, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.BinDir == "" {
		dir, err := FindCitus()
		if err != nil {
			return nil, err
		}
		opts.BinDir = dir
	}
	settings := map[string]string{}
	for k, v := range citusSettings {
		settings[k] = v
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	node := Options{Database: "postgres", BinDir: opts.BinDir, StartTimeout: opts.StartTimeout, Settings: settings}
	c := &Citus{}
	ok := false
	defer func() {
		if !ok {
			_ = c.Stop()
		}
	}()
	// The nodes start side by side: initdb is most of a node's start.
	nodes := make([]*Cluster, opts.Workers+1)
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = Start(ctx, node) })
	}
	wg.Wait()
	c.Coordinator, c.Workers = nodes[0], nodes[1:]
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("pgcluster: citus: %w", err)
	}
	ok = true
	return c, nil
}

// nodes is the coordinator, then the workers.
func (c *Citus) nodes() []*Cluster {
	var out []*Cluster
	if c.Coordinator != nil {
		out = append(out, c.Coordinator)
	}
	for _, w := range c.Workers {
		if w != nil {
			out = append(out, w)
		}
	}
	return out
}

// URL is the address of database name on the coordinator, where clients
// connect.
func (c *Citus) URL(name string) string { return c.Coordinator.urlOf(name) }

// AdminURL is the coordinator's postgres database.
func (c *Citus) AdminURL() string { return c.Coordinator.AdminURL() }

// CreateDatabase creates database name on every node. With template "" it
// is a new Citus database: the extension on every node, the coordinator
// registered as such and the workers added to it. Otherwise each node's
// copy is made from its own copy of template, a database CreateDatabase
// made before: the copies carry the same metadata and shards, so together
// they are a Citus database like the template's, its tables distributed.
// options (say, "owner x") are appended to every CREATE DATABASE.
func (c *Citus) CreateDatabase(ctx context.Context, name, template, options string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	stmt := "create database " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " template " + pgx.Identifier{template}.Sanitize()
	}
	if options != "" {
		stmt += " " + options
	}
	for _, n := range c.nodes() {
		if template != "" {
			if err := closeTemplate(ctx, n.AdminURL(), template); err != nil {
				return fmt.Errorf("pgcluster: citus: node %d: %w", n.Port(), err)
			}
		}
		if err := execOn(ctx, n.AdminURL(), stmt); err != nil {
			return fmt.Errorf("pgcluster: citus: node %d: %w", n.Port(), err)
		}
	}
	if template != "" {
		return nil
	}
	for _, n := range c.nodes() {
		if err := execOn(ctx, n.urlOf(name), "create extension citus"); err != nil {
			return fmt.Errorf("pgcluster: citus: node %d: %w", n.Port(), err)
		}
	}
	if err := execOn(ctx, c.URL(name), "select citus_set_coordinator_host('127.0.0.1', $1)", c.Coordinator.Port()); err != nil {
		return fmt.Errorf("pgcluster: citus: %w", err)
	}
	for _, w := range c.Workers {
		if err := execOn(ctx, c.URL(name), "select citus_add_node('127.0.0.1', $1)", w.Port()); err != nil {
			return fmt.Errorf("pgcluster: citus: add worker %d: %w", w.Port(), err)
		}
	}
	return nil
}

// closeTemplate has a node's copy of template take no more connections and
// ends those it has: CREATE DATABASE refuses a template with sessions, and
// Citus keeps some in every database it has served (its maintenance daemon,
// and the coordinator's connections to the workers), which would come back.
func closeTemplate(ctx context.Context, url, template string) error {
	if err := execOn(ctx, url, "alter database "+pgx.Identifier{template}.Sanitize()+" with allow_connections false"); err != nil {
		return err
	}
	return execOn(ctx, url, "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", template)
}

// DropDatabase drops database name on every node, ending its sessions.
func (c *Citus) DropDatabase(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, n := range c.nodes() {
		if err := execOn(ctx, n.AdminURL(), "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", strconv.Itoa(n.Port()), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pgcluster: citus: %w", err)
	}
	return nil
}

// Exec runs stmt in every node's postgres database: what each node must
// have of its own, such as roles (Citus 12.1 propagates CREATE ROLE only
// from a database that has the extension).
func (c *Citus) Exec(ctx context.Context, stmt string) error {
	for _, n := range c.nodes() {
		if err := execOn(ctx, n.AdminURL(), stmt); err != nil {
			return fmt.Errorf("pgcluster: citus: node %d: %w", n.Port(), err)
		}
	}
	return nil
}

// Stop stops every node and removes their directories.
func (c *Citus) Stop() error {
	var errs []error
	for _, n := range c.nodes() {
		errs = append(errs, n.Stop())
	}
	return errors.Join(errs...)
}

// execOn runs one statement on a connection of its own to url.
func execOn(ctx context.Context, url, stmt string, args ...any) error {
	conn, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt, args...)
	return err
}
