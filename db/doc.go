// Package db is the query layer over the mirror node's PostgreSQL database:
// one exported function per question the API answers, returning model
// values. It answers in the core's terms: *DB is an app.Store as it is, its
// reads taking app's filters and failing in app's errors (app.ErrNotFound
// for a lookup that finds nothing, an app.Unavailable for any failure,
// made so in one place, exec.go's failed). The faces never import it: the
// core (package app) hands them its reads.
//
// Each file holds one job. The questions: messages.go (a message by
// sequence number or timestamp, one or many), message_pages.go (a page of a
// topic's messages, for one topic or for many in one statement), chunks.go
// (the chunks of chunked messages), activity.go (a topic's latest message and
// message counts), live.go (the live streams' poll), topics.go, schedules.go
// and version.go (the schedules list's cache key). Each question file holds
// the exported read and what both layouts' statements for it are made of.
//
// The layouts: the reads that differ between the mirror node's v1 layout
// (plain tables) and its v2 layout (partitioned tables) are one small
// interface, reader (reader.go: ten methods, the reads and next), with one
// implementation per layout, chosen by newReader (reader.go, the one place
// that tells the variants apart: v1, v2 on PostgreSQL, v2 on Citus) when
// LearnLayout (layout.go) finds out the layout, and held behind an atomic
// pointer with that layout; no read asks which layout it is in. What a reader
// keeps account of (partitions, fallbacks, memory) is the optional
// bookkeeper, which only the v2 reader implements. v1_reader.go is v1's, a
// statement per question, its statements beside it in v1_statements.go. The
// v2 reader is the v2_*.go files, its model told once in v2_reader.go, with
// v2State, what its readers hand on from one catalog to the next (the
// fallback counts, the live poll's head). Its parts: v2_server.go (what its
// statements through partitions do differently on plain PostgreSQL and on a
// Citus coordinator), v2_citus.go (Citus's: the coordinator's v2Server, and
// citusReader, the v2 reader with the four reads a coordinator answers
// otherwise overridden), v2_catalog.go (the partitions, the checks that the
// catalog is still current, and reading it anew), v2_topicmap.go (each
// topic's map of its partitions, the windows a read walks, and the store that
// keeps them) and v2_fallbacks.go (the counts of reads the maps could not
// route). Its questions, a file each: v2_pages.go (a page: planned on the
// topic's windows, the plan run; the run statements' blocks of partitions),
// v2_lookups.go (the point lookups and their batches), v2_chunks.go,
// v2_activity.go (the latest messages and the counts) and v2_live.go (the
// live poll by partition). pool.go's SetPlanMode is how each session plans
// its prepared statements (generic plans, but on Citus).
//
// Under them: scan.go reads rows into model values, sqltext.go turns model
// values into SQL text. The connection plumbing: pool.go opens the pool over
// pgx; exec.go, the one execution path, sends a fixed statement, prepared or
// planned for its values (arrays bound as text literals: int64Array), and
// makes its errors app's; pipeline.go sends several at once (the v2
// batches); coalesce.go and point_lookups.go let concurrent point lookups
// share statements; linger.go closes a connection only once the server's
// backend has gone; health.go follows whether the database answers;
// migrate.go applies the embedded schema (migrations/).
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
// cluster; the v2_*_internal_test.go files test the v2 reader's parts
// without a database (v2_pages_internal_test.go a page's plan);
// export_test.go lets the tests choose a reader. The package's shape is
// held by tests/codecheck's TestDBShape: the reader interface at most ten
// methods, none a stub, citusReader at most six, no function over 60 lines.
package db
