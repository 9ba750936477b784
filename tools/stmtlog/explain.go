package stmtlog

// Plan shows the plans of the statements the query layer sends (Log), for
// the index tests and the benchmark report. It is a diagnostic: nothing a
// request reaches calls it.

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"mirrorql/db"
)

// Plan is the text of EXPLAIN (options) for st on conn, one line per plan
// line. A statement with parameters is prepared and explained as EXECUTE
// with the plan the service's sessions get (db.SetPlanMode: the generic
// plan, or on a Citus coordinator the plan for its values), or, for one the
// service never prepares, with the plan for its values.
func Plan(ctx context.Context, conn *sql.Conn, st Statement, options string) (string, error) {
	explain := "EXPLAIN "
	if options != "" {
		explain += "(" + options + ") "
	}
	if len(st.Args) == 0 {
		return lines(ctx, conn, explain+st.SQL)
	}
	values := make([]string, len(st.Args))
	for i, a := range st.Args {
		v, err := literal(a)
		if err != nil {
			return "", err
		}
		values[i] = v
	}
	setMode := db.SetPlanMode
	if st.Unprepared { // the service has it planned for its values every time
		setMode = "SET plan_cache_mode = force_custom_plan"
	}
	if _, err := conn.ExecContext(ctx, setMode); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "RESET plan_cache_mode") //nolint:errcheck
	if _, err := conn.ExecContext(ctx, "PREPARE mirrorql_explain AS "+st.SQL); err != nil {
		return "", fmt.Errorf("prepare %s: %w", st.SQL, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DEALLOCATE mirrorql_explain") //nolint:errcheck
	return lines(ctx, conn, explain+"EXECUTE mirrorql_explain("+strings.Join(values, ", ")+")")
}

// literal writes a statement argument as SQL text: the query layer binds
// only integers and text.
func literal(a any) (string, error) {
	switch v := a.(type) {
	case int64:
		return strconv.FormatInt(v, 10), nil
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
	}
	return "", fmt.Errorf("explain: no literal for %T", a)
}

func lines(ctx context.Context, conn *sql.Conn, query string) (string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return "", fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var out []string
	for rows.Next() {
		if len(cols) != 1 { // an EXECUTE's result rows: read and dropped
			continue
		}
		var line sql.NullString
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		out = append(out, line.String)
	}
	return strings.Join(out, "\n"), rows.Err()
}
