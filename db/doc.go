// Package db is the query layer over the mirror node's PostgreSQL database:
// one exported function per question the API answers, returning model
// values. The faces never call it: the core (package app) reads it through
// Store (store.go), which adapts it to the core's types and errors.
//
// Each file holds one job. The questions: messages.go (a message by
// sequence number or timestamp, one or many), message_pages.go (a page of a
// topic's messages, for one topic or for many in one statement), chunks.go
// (the chunks of chunked messages), activity.go (a topic's latest message and
// message counts), live.go (the live streams' poll), topics.go, schedules.go
// and version.go (the schedules list's cache key). Under them: scan.go reads
// rows into model values, sqltext.go turns model values into SQL text and
// bound values. The connection plumbing: pool.go opens the pool over pgx;
// exec.go, the one execution path, sends a fixed statement, prepared or
// planned for its values; coalesce.go and point_lookups.go let concurrent point lookups share
// statements; linger.go closes a connection only once the server's backend
// has gone; health.go follows whether the database answers;
// statement_log.go keeps the statements sent, for tests and EXPLAIN;
// migrate.go applies the embedded schema.
package db

import "errors"

// ErrNotFound is returned by single-row lookups that find nothing.
var ErrNotFound = errors.New("not found")
