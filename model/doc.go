// Package model holds the value types of the mirror node ledger data (entity
// ids, timestamps, keys, topics, messages, schedules, query operators and
// filters as values) and the one implementation of each rule that turns them
// into wire values, shared by the REST and GraphQL faces. It knows nothing of
// the database: how rows are stored, queried and scanned is package db's.
package model
