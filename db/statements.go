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
	stmts []string
}

func (l *StatementLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (l *StatementLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, e.Query)
}

// Take returns the statements logged since the last Take and forgets them.
func (l *StatementLog) Take() []string {
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
