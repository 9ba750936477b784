package main

import (
	"testing"

	"mirrorql/db"
	"mirrorql/model"
)

func TestPgbenchSQL(t *testing.T) {
	tests := []struct {
		name string
		st   db.Statement
		vary int
		expr string
		want string
		err  bool
	}{
		{"list", db.Statement{
			SQL:  "SELECT a FROM t WHERE topic_id = $1 AND s BETWEEN $2 AND $3 AND s <> ALL ($4::bigint[]) LIMIT $5",
			Args: []any{model.EntityID(2001), int64(7), int64(9223372036854775807), "{}", 100},
		}, 2, ":lo", "SELECT a FROM t WHERE topic_id = 2001 AND s BETWEEN :lo AND 9223372036854775807 AND s <> ALL ('{}'::bigint[]) LIMIT 100;", false},
		{"ten parameters are not the first", db.Statement{
			SQL:  "SELECT $1, $10",
			Args: []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		}, 10, ":x", "SELECT 1, :x;", false},
		{"quotes", db.Statement{SQL: "SELECT $1", Args: []any{"it's"}}, 0, "", "SELECT 'it''s';", false},
		{"a value missing", db.Statement{SQL: "SELECT $2", Args: []any{1}}, 0, "", "", true},
		{"a value with no literal", db.Statement{SQL: "SELECT $1", Args: []any{1.5}}, 0, "", "", true},
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
