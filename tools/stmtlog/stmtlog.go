// Package stmtlog records the statements the query layer (package db)
// sends, so tests can count statements (no N+1) and EXPLAIN what the query
// layer really runs, and the benchmark can show those plans. It is a
// diagnostic: nothing the service serves uses it.
package stmtlog

import (
	"context"
	"sync"

	"github.com/uptrace/bun"
)

// Log keeps the SQL of every statement sent: bun's, as a bun query hook,
// and those the query layer sends over pgx itself, with their arguments
// (db.Recorder's Sent). Install it with (*db.DB).Record.
type Log struct {
	mu    sync.Mutex
	stmts []Statement
}

// Statement is one statement sent: its text and, for the fixed statements
// whose values travel as parameters ($1, …), those values in order. bun's
// statements carry their values in the text and no Args.
type Statement struct {
	SQL  string
	Args []any
	// Unprepared: sent to be planned for its values every time
	// (db's queryPlanned), never as a prepared statement.
	Unprepared bool
}

func (l *Log) add(s Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, s)
}

// Sent logs a statement the query layer sends over pgx, outside bun.
func (l *Log) Sent(sql string, args []any, unprepared bool) {
	l.add(Statement{SQL: sql, Args: args, Unprepared: unprepared})
}

func (l *Log) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (l *Log) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.add(Statement{SQL: e.Query})
}

// Take returns the statements logged since the last Take and forgets them.
func (l *Log) Take() []Statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stmts
	l.stmts = nil
	return s
}

// Len is how many statements were logged since the last Take.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.stmts)
}
