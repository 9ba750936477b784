// Package db is the query layer over the mirror node's PostgreSQL database:
// one exported function per question the API answers, returning model
// values. It answers in the core's terms: *DB is an app.Store as it is, its
// reads taking app's filters and failing in app's errors (app.ErrNotFound
// for a lookup that finds nothing, an app.Unavailable for any failure,
// made so in one place, exec.go's failed). The faces never import it: the
// core (package app) hands them its reads.
//
// A page of a topic's messages comes with its conditions already reduced
// (app.MessageFilter: a range per column, as app.MessageQuery.Filter makes
// it once for every store); no reader sees a condition, and none is asked
// for a page that admits no message.
//
// As database/sql separates a driver from its users, db keeps the
// questions the rest of the service asks and the plumbing, and hands a
// small executor to one package per layout, each a reader of the mirror
// node's tables:
//
//   - db (this package): the questions, a file each: messages.go (a message
//     by sequence number or timestamp, one or many), message_pages.go (a
//     page of a topic's messages, for one topic or for many at once),
//     chunks.go (the chunks of chunked messages), activity.go (a topic's
//     latest message and message counts), live.go (the live streams' poll),
//     topics.go, schedules.go and version.go (the schedules list's cache
//     key); the reads that differ between the layouts each call the current
//     reader (d.reader()) and never ask which layout they are in. reader.go
//     holds newReader, the one place that chooses among the readers (v1, v2
//     on PostgreSQL, v2 on Citus) when LearnLayout (layout.go) finds out the
//     layout, and the reader is then held behind an atomic pointer with that
//     layout. fallbacks.go counts the v2 reader's fallbacks for the metrics.
//     The plumbing: pool.go opens the pool over pgx (SetPlanMode: how each
//     session plans its prepared statements; generic plans, but on Citus);
//     exec.go, the one execution path, sends a fixed statement, prepared or
//     planned for its values, makes its errors app's, and is what db hands
//     its readers (executor, a driver.Exec); pipeline.go sends several at
//     once (the v2 batches); coalesce.go and point_lookups.go let concurrent
//     point lookups share statements; linger.go closes a connection only
//     once the server's backend has gone; health.go follows whether the
//     database answers; migrate.go applies the embedded schema
//     (migrations/); scan.go reads the nullable columns of topics and
//     schedules.
//   - db/internal/driver: what db hands a layout's reader and what the
//     readers share. driver.go: the Reader interface (ten methods: the reads
//     and Next), the optional Bookkeeper (partitions, fallbacks, memory),
//     which only the v2 reader implements, the executor (Exec) in the Env db
//     makes once per pool, and Piped and RowSource; layout.go the Layout
//     (db.Layout); sql.go the SQL both layouts share: what their statements
//     are made of (the message columns, a page's conditions, the live
//     poll's pieces), a page's ranges and shape as its filter gives them
//     (FilterRanges, FilterBySequence), model values turned into SQL text
//     (arrays bound as text literals: Int64Array) and the texts kept that
//     are made for partitions; scan.go reads rows into model values.
//   - db/internal/v1: v1's reader (reader.go), a statement per question,
//     its statements beside it (statements.go). It is also the reader before
//     the layout is learned.
//   - db/internal/v2: the v2 reader, its model told once in reader.go, with
//     v2State, what its readers hand on from one catalog to the next (the
//     fallback counts, the live poll's head). Its parts: server.go (what its
//     statements through partitions do differently on plain PostgreSQL and
//     on a Citus coordinator), citus.go (Citus's: the coordinator's
//     v2Server, and Citus, the v2 reader embedded with the four reads a
//     coordinator answers otherwise overridden), catalog.go (the partitions,
//     the checks that the catalog is still current, and reading it anew;
//     New and NewCitus), topicmap.go (each topic's map of its partitions,
//     the windows a read walks, and the store that keeps them) and
//     fallbacks.go (the counts of reads the maps could not route). Its
//     questions, a file each: pages.go (a page: planned on the topic's
//     windows, the plan run; the run statements' blocks of partitions),
//     lookups.go (the point lookups and their batches), chunks.go,
//     activity.go (the latest messages and the counts) and live.go (the live
//     poll by partition).
//
// pool.go's Record hands every statement sent to a Recorder (stmtlog.Log,
// which the tests count and the benchmark EXPLAINs). What the tests, the
// demo and the benchmarks need of a database lives outside db: fixture (the
// v2 layout built in an empty database), stmtlog, explain and pgcluster.
//
// The tests: each question's in its own _test.go; errors_test.go holds
// every read to app's errors; layouts_test.go and default_partition_test.go
// hold the v2 reads to the v1 ones; v2_catalog_test.go and explain_test.go
// check the statements' plans, v2_citus_test.go their plans on a real Citus
// cluster; the internal packages' tests test their parts without a
// database (db/internal/v2's pages_internal_test.go a page's plan);
// export_test.go lets the tests choose a reader. The query layer's shape is
// held by tests/codecheck's TestDBShape: driver.Reader at most ten methods,
// no reader's method a stub, v2.Citus overriding at most six, no function
// of db or of the packages under it over 60 lines.
package db
