package tests

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mirrorql/tests/testdb"
)

// TestGraphQLOverHTTPAudit runs graphql-http's server audit (vendored in
// testdata/graphql-http) against /graphql: every audit must pass, so that
// clients that follow the GraphQL-over-HTTP specification get what it
// promises (200 with the errors for a request error to an application/json
// client, no `data` entry with application/graphql-response+json, 400 for
// invalid parameters).
func TestGraphQLOverHTTPAudit(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFailInCI(t, "node (Debian package nodejs) is needed for graphql-http's audit")
	}
	dbURL, _ := testdb.New(t)
	srv := startServer(t, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "testdata/graphql-http/audit.mjs", srv.URL+"/graphql").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}
