package main

import (
	"testing"
	"time"

	"mirrorql/model"
	"mirrorql/tools/stmtlog"
)

func TestPgbenchSQL(t *testing.T) {
	tests := []struct {
		name string
		st   stmtlog.Statement
		vary int
		expr string
		want string
		err  bool
	}{
		{"list", stmtlog.Statement{
			SQL:  "SELECT a FROM t WHERE topic_id = $1 AND s BETWEEN $2 AND $3 AND s <> ALL ($4::bigint[]) LIMIT $5",
			Args: []any{model.EntityID(2001), int64(7), int64(9223372036854775807), "{}", 100},
		}, 2, ":lo", "SELECT a FROM t WHERE topic_id = 2001 AND s BETWEEN :lo AND 9223372036854775807 AND s <> ALL ('{}'::bigint[]) LIMIT 100;", false},
		{"ten parameters are not the first", stmtlog.Statement{
			SQL:  "SELECT $1, $10",
			Args: []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		}, 10, ":x", "SELECT 1, :x;", false},
		{"quotes", stmtlog.Statement{SQL: "SELECT $1", Args: []any{"it's"}}, 0, "", "SELECT 'it''s';", false},
		{"a value missing", stmtlog.Statement{SQL: "SELECT $2", Args: []any{1}}, 0, "", "", true},
		{"a value with no literal", stmtlog.Statement{SQL: "SELECT $1", Args: []any{1.5}}, 0, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pgbenchSQL(tt.st, tt.vary, tt.expr)
			if tt.err {
				if err == nil {
					t.Fatalf("pgbenchSQL = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("pgbenchSQL = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSchedulesScript(t *testing.T) {
	sent := []stmtlog.Statement{
		{SQL: "SELECT a FROM schedule WHERE id BETWEEN $1 AND $2 AND id <> ALL ($3::bigint[]) LIMIT $4",
			Args: []any{int64(100), int64(9223372036854775807), "{}", int64(25)}},
		{SQL: "SELECT b FROM sig WHERE entity_id = ANY ($1::bigint[])", Args: []any{"{100,101,103}"}},
	}
	got, err := schedulesScript(`\set n random(1, 9)`)(sent)
	want := `\set n random(1, 9)` + "\n" +
		"SELECT a FROM schedule WHERE id BETWEEN :n AND 9223372036854775807 AND id <> ALL ('{}'::bigint[]) LIMIT 25;\n" +
		"SELECT b FROM sig WHERE entity_id = ANY (ARRAY[:n::bigint, :n::bigint + 1, :n::bigint + 3]::bigint[]);"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	if _, err := schedulesScript("")(sent[:1]); err == nil {
		t.Fatal("one statement made a script")
	}
}

func TestLiteralScript(t *testing.T) {
	got, err := literalScript([]stmtlog.Statement{{SQL: "SELECT 1 FROM t WHERE id IN (5)"},
		{SQL: "SELECT $1, $2::bigint[]", Args: []any{int64(7), "{1,2}"}}})
	want := "SELECT 1 FROM t WHERE id IN (5);\nSELECT 7, '{1,2}'::bigint[];"
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestUntilQuiet: the handlers' start (statements from a goroutine of their
// own, a little later) is waited for and dropped; a quiet log is given up
// on after the longest wait.
func TestUntilQuiet(t *testing.T) {
	rec := &stmtlog.Log{}
	go func() {
		time.Sleep(30 * time.Millisecond)
		rec.Sent("SELECT 1", nil, false)
		time.Sleep(30 * time.Millisecond)
		rec.Sent("SELECT 2", nil, false)
	}()
	if err := untilQuiet(t.Context(), rec, 20*time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
	// both waited for and dropped (the second comes after a quiet poll)
	if n := rec.Len(); n != 0 {
		t.Errorf("%d statements left", n)
	}
	if err := untilQuiet(t.Context(), &stmtlog.Log{}, 10*time.Millisecond, 100*time.Millisecond); err != nil {
		t.Errorf("a quiet log: %v", err)
	}
}
