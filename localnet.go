package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/model"
	"mirrorql/redact"
)

// localDatabase is a place where a mirror node database may answer, and
// what puts it there, for the messages.
type localDatabase struct{ URL, What string }

// localNetworkDatabases are where the mirror node database of a local Hiero
// network answers on this machine, with the settings its docker-compose
// gives it: the database mirror_node of the importer's db/scripts/init.sh,
// read as mirror_api with its default password. mirror_api is the mirror
// node REST API's own user and may only read (SELECT on the importer's
// tables); the importer's first v1 migration creates it, and init.sh on v2.
// The mirror node's docker-compose publishes the database on 5432, the Hiero
// local node's on 5433.
var localNetworkDatabases = []localDatabase{
	{"postgres://mirror_api:mirror_api_pass@127.0.0.1:5432/mirror_node?sslmode=disable", "the mirror node's docker-compose"},
	{"postgres://mirror_api:mirror_api_pass@127.0.0.1:5433/mirror_node?sslmode=disable", "the Hiero local node"},
}

// localNetwork serves the mirror node database of a local Hiero network
// read-only: MIRRORQL_DATABASE_URL's when set, else the first of
// localNetworkDatabases that holds the mirror node's tables. Every session
// is read-only whatever the user may do (db.Options.ReadOnly), and nothing
// is migrated: the database is the network's, in whichever layout its
// importer built, which the service learns at start as serve does. It
// listens as the demo does (own says which addresses may move) and prints
// the demo's banner for the network's data. What it says goes to out.
func localNetwork(ctx context.Context, cfg config.Config, own ownAddrs, args []string, log *slog.Logger, out io.Writer) error {
	start := time.Now()
	if help, err := localNetworkFlags(args, out); err != nil || help {
		return err
	}
	ln, gln, err := bindOwn(cfg, own, out, "local-network")
	if err != nil {
		return err
	}
	defer ln.Close()
	defer closeListener(gln)

	candidates := localNetworkDatabases
	if _, set := os.LookupEnv(config.Prefix + "DATABASE_URL"); set {
		candidates = []localDatabase{{cfg.DatabaseURL, config.Prefix + "DATABASE_URL"}}
	}
	// The probe waits longer than a request would: a database in a
	// container may take a moment to accept its first connection.
	found, err := findMirrorDatabase(ctx, candidates, max(cfg.DBConnectTimeout, 5*time.Second))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mirrorql local-network: database %s on %s (%s) as %s, read-only\n",
		found.database, found.server, found.place.What, found.user)
	cfg.DatabaseURL = found.place.URL

	o, err := dbOptions(cfg)
	if err != nil {
		return err
	}
	o.ReadOnly = true
	d, err := db.Open(o)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Health().Log = log
	ex, err := demoExamples(ctx, d)
	if err != nil {
		return fmt.Errorf("local-network: %w", err)
	}
	newest, err := newestTopicMessage(ctx, d)
	if err != nil {
		return fmt.Errorf("local-network: %w", err)
	}

	fmt.Fprintf(out, "\nmirrorql local-network is up in %.1fs. Press Ctrl-C to stop.\n\n", time.Since(start).Seconds())
	base, grpcAddr := printLinks(out, cfg, ln, gln, ex)
	if newest.found {
		// The network's own topics grow as its importer writes them: the
		// one written to last is the likeliest to grow again.
		printLiveTopic(out, base, grpcAddr, newest.topic,
			fmt.Sprintf("has the newest message (sequence number %d); these follow it as the importer writes more:", newest.sequence))
	} else {
		fmt.Fprintf(out, "  no topic has a message yet: submit one (an SDK's TopicMessageSubmitTransaction), and the dashboard shows it live\n\n")
	}
	err = runServer(ctx, cfg, d, log, ln, gln)
	fmt.Fprintln(out, "mirrorql local-network: stopping")
	return err
}

const localNetworkUsage = `usage: mirrorql local-network

Serves the mirror node database of a local Hiero network on this machine, read-only: the
database mirror_node as the mirror node's read-only user mirror_api, on 127.0.0.1:5432 (the
mirror node's docker-compose) or 127.0.0.1:5433 (the Hiero local node); MIRRORQL_DATABASE_URL
names another. Listens as the demo does: 127.0.0.1:8080 and 127.0.0.1:5600, or free ports
when those are taken, unless MIRRORQL_LISTEN and MIRRORQL_GRPC_LISTEN say otherwise.
`

// localNetworkFlags parses local-network's arguments: none but -h, which
// prints the usage to out and sets help.
func localNetworkFlags(args []string, out io.Writer) (help bool, err error) {
	fs := flag.NewFlagSet("mirrorql local-network", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, localNetworkUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(out, "mirrorql local-network: unexpected argument %q (settings are MIRRORQL_* variables, e.g. MIRRORQL_DATABASE_URL)\n", fs.Arg(0))
		fs.Usage()
		return false, errUsage
	}
	return false, nil
}

// mirrorDatabase is a database findMirrorDatabase found.
type mirrorDatabase struct {
	place                  localDatabase
	server, database, user string // as the server reports them (user: the session's)
}

// findMirrorDatabase returns the first of candidates that answers and holds
// every table the service reads, readable by its user. When none does, the
// error says, for each, why not.
func findMirrorDatabase(ctx context.Context, candidates []localDatabase, timeout time.Duration) (mirrorDatabase, error) {
	var why []string
	for _, c := range candidates {
		found, err := probeMirrorDatabase(ctx, c, timeout)
		if err == nil {
			return found, nil
		}
		if ctx.Err() != nil {
			return mirrorDatabase{}, ctx.Err()
		}
		why = append(why, fmt.Sprintf("  %s (%s): %s", redact.URL(c.URL), c.What, redact.Secret(err.Error(), c.URL)))
	}
	return mirrorDatabase{}, fmt.Errorf("local-network: no mirror node database to serve:\n%s\n"+
		"Is the local network running, and has its importer started? Another database: set %sDATABASE_URL (docs/running.md)",
		strings.Join(why, "\n"), config.Prefix)
}

// probeMirrorDatabase connects to c and checks that its user may read every
// table the service reads.
func probeMirrorDatabase(ctx context.Context, c localDatabase, timeout time.Duration) (mirrorDatabase, error) {
	cfg, err := pgx.ParseConfig(c.URL)
	if err != nil {
		return mirrorDatabase{}, errors.New("not a database URL")
	}
	cfg.ConnectTimeout = timeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return mirrorDatabase{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	found := mirrorDatabase{place: c, server: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	var unreadable []string
	// has_table_privilege of a table that is absent (to_regclass: null) is
	// null: absent and unreadable tables are listed alike.
	err = conn.QueryRow(ctx, `select current_user, current_database(),
		array(select t from unnest($1::text[]) t where not coalesce(has_table_privilege(to_regclass(t), 'select'), false))`,
		db.Tables).Scan(&found.user, &found.database, &unreadable)
	if err != nil {
		return mirrorDatabase{}, err
	}
	if len(unreadable) > 0 {
		return mirrorDatabase{}, fmt.Errorf("%s cannot read table(s) %s of database %s: absent, or no SELECT on them",
			found.user, strings.Join(unreadable, ", "), found.database)
	}
	return found, nil
}

// newestMessage is the topic of the newest topic message, if any.
type newestMessage struct {
	topic    model.EntityID
	sequence int64
	found    bool
}

func newestTopicMessage(ctx context.Context, d *db.DB) (newestMessage, error) {
	var n newestMessage
	var topic int64
	err := d.Bun().QueryRowContext(ctx,
		"select topic_id, sequence_number from topic_message order by consensus_timestamp desc limit 1").
		Scan(&topic, &n.sequence)
	switch {
	case err == nil:
		n.topic, n.found = model.EntityID(topic), true
	case !errors.Is(err, sql.ErrNoRows):
		return n, err
	}
	return n, nil
}
