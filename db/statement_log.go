package db

import (
	"context"
	"sync"

	"github.com/uptrace/bun"
)

// StatementLog is a bun query hook that keeps the SQL of every statement
// sent, so tests can count statements (no N+1) and EXPLAIN what the query
// layer really runs, and the benchmark can show those plans.
type StatementLog struct {
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
	// (DB.queryPlanned), never as a prepared statement.
	Unprepared bool
}

func (l *StatementLog) add(s Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, s)
}

func (l *StatementLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (l *StatementLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.add(Statement{SQL: e.Query})
}

// Take returns the statements logged since the last Take and forgets them.
func (l *StatementLog) Take() []Statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stmts
	l.stmts = nil
	return s
}

// Len is how many statements were logged since the last Take.
func (l *StatementLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.stmts)
}
