package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/tools/seed"
)

// seedCommand migrates MIRRORQL_DATABASE_URL and writes the deterministic
// data set into it, sized by the flags.
func seedCommand(ctx context.Context, cfg config.Config, args []string, out io.Writer) error {
	o := seed.DefaultOptions()
	o.Shard, o.Realm = cfg.Shard, cfg.Realm
	fs := flag.NewFlagSet("mirrorql seed", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.Topics, "topics", o.Topics, "number of topics (0.0.2001 on)")
	fs.IntVar(&o.MessagesPerTopic, "messages-per-topic", o.MessagesPerTopic, "messages of every topic but the hot one")
	fs.IntVar(&o.HotTopicMessages, "hot-topic-messages", o.HotTopicMessages, "if > 0, the first topic holds this many messages instead")
	fs.IntVar(&o.Schedules, "schedules", o.Schedules, "number of schedules")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "random seed: the same seed and sizes give the same rows")
	benchmark := fs.Bool("benchmark", false, "the benchmark data set (100 topics, 1,000,049 messages, 500,000 in the hot topic); size flags given too override it")
	reset := fs.Bool("reset", false, "empty the tables the data set is written to first (only for databases holding nothing else)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: mirrorql seed [flags]\n\n"+
			"Migrates the database of MIRRORQL_DATABASE_URL, then writes the deterministic data set into it.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(out, "mirrorql seed: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	if *benchmark {
		b := seed.BenchmarkOptions()
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["topics"] {
			o.Topics = b.Topics
		}
		if !set["messages-per-topic"] {
			o.MessagesPerTopic = b.MessagesPerTopic
		}
		if !set["hot-topic-messages"] {
			o.HotTopicMessages = b.HotTopicMessages
		}
		if !set["schedules"] {
			o.Schedules = b.Schedules
		}
	}

	d, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := db.Migrate(ctx, d.Bun()); err != nil {
		return err
	}
	cc, err := cfg.DBConnConfig()
	if err != nil {
		return err
	}
	conn, err := db.Connect(ctx, cc)
	if err != nil {
		return fmt.Errorf("seed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if *reset {
		if err := seed.Reset(ctx, conn); err != nil {
			return err
		}
	}
	st, err := seed.Run(ctx, conn, o)
	if err != nil {
		if !*reset {
			err = fmt.Errorf("%w (if the database holds an earlier data set: --reset)", err)
		}
		return err
	}
	fmt.Fprintf(out, "mirrorql seed: %s\n", st)
	return nil
}
