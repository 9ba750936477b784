package tests

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"mirrorql/tests/testdb"
)

// TestServeLocalNetwork runs serve on a database built as a local Hiero
// network builds its mirror node's (testdb.LocalNetwork: a database, schema
// and tables of an owner role of its own, not the server's admin; a
// read-only role with SELECT granted as init.sh grants it; init.sh's
// search_path), once as the owner and once as the read-only login: every
// REST case answers as on any database, and GraphQL reads without errors.
func TestServeLocalNetwork(t *testing.T) {
	t.Parallel()
	nw := testdb.LocalNetwork(t)
	seedREST(t, nw.DB)
	for _, who := range []struct{ name, url string }{
		{"the owner " + nw.Owner, nw.OwnerURL},
		{"the read-only " + nw.Reader, nw.ReaderURL},
	} {
		servesRESTCases(t, "as "+who.name, who.url)
	}
}

// TestLocalNetworkCommand runs `mirrorql local-network` on a database built
// as a local network builds it, named by MIRRORQL_DATABASE_URL as the
// read-only login: it says what it serves, every link of its banner
// answers, and its live topic is the one with the newest message, which its
// grpcurl address serves with the messages written after it. On a database
// without the mirror node's tables, or one nothing answers at, it stops at
// once and says why.
func TestLocalNetworkCommand(t *testing.T) {
	t.Parallel()
	nw := testdb.LocalNetwork(t)
	seedREST(t, nw.DB)
	// The importer writes on: topic 0.0.7 gets the newest message.
	appendMessages(t, nw.DB, liveRow{Topic: 7})

	addr, grpcAddr := freeAddr(t), freeAddr(t)
	d, _ := launchPersonal(t, "local-network", nil, addr,
		"MIRRORQL_DATABASE_URL="+nw.ReaderURL, "MIRRORQL_LISTEN="+addr, "MIRRORQL_GRPC_LISTEN="+grpcAddr)
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "/api/v1/docs") })
	waitFor(t, func() bool { return strings.Contains(d.out.String(), "grpcurl") })
	out := d.out.String()
	if !strings.Contains(out, "(MIRRORQL_DATABASE_URL) as "+nw.Reader+", read-only") {
		t.Errorf("local-network did not say what it serves, as whom:\n%s", out)
	}
	if links := checkBannerLinks(t, out); len(links) < 8 {
		t.Errorf("local-network printed %d links:\n%s", len(links), out)
	}
	if m := demoLiveTopic.FindStringSubmatch(out); m == nil || m[1] != "0.0.7" {
		t.Fatalf("the live topic is not 0.0.7, the newest message's:\n%s", out)
	}
	c := demoGRPCurl.FindStringSubmatch(out)
	if c == nil || c[2] != grpcAddr {
		t.Fatalf("no grpcurl command to %s:\n%s", grpcAddr, out)
	}
	var q struct{ TopicID struct{ TopicNum int64 } }
	if err := json.Unmarshal([]byte(c[1]), &q); err != nil || q.TopicID.TopicNum != 7 {
		t.Fatalf("grpcurl's request %s: %v", c[1], err)
	}
	events := grpcGo(grpcConn(t, grpcAddr))(t, fromEpoch(topicQuery(7)))
	consecutiveTopic(t, "topic 0.0.7 over gRPC", takeTopic(t, events, 6, patience), 1)
	appendMessages(t, nw.DB, liveRow{Topic: 7})
	consecutiveTopic(t, "topic 0.0.7's next message", takeTopic(t, events, 1, patience), 7)
	if status, _, body := get(t, d.base+"/api/v1/topics/0.0.7/messages/7"); status != http.StatusOK {
		t.Errorf("the message written while serving: %d %s", status, body)
	}
	d.stop(t)

	emptyURL, _ := testdb.Empty(t)
	for _, tc := range []struct {
		name, url string
		want      []string
	}{
		{"no mirror node tables", emptyURL, []string{"cannot read table(s) topic_message", "has its importer started?"}},
		{"nothing answers", "postgres://mirror_api:secret-pass@127.0.0.1:1/mirror_node?sslmode=disable",
			[]string{"postgres://mirror_api:xxxxx@127.0.0.1:1/mirror_node", "(MIRRORQL_DATABASE_URL)", "connection refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary(t), "local-network")
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "MIRRORQL_") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "MIRRORQL_DATABASE_URL="+tc.url, "MIRRORQL_LISTEN="+freeAddr(t), "MIRRORQL_GRPC_LISTEN=")
			b, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v (want status 1)\n%s", err, b)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the output lacks %q:\n%s", w, b)
				}
			}
			if strings.Contains(string(b), "secret-pass") {
				t.Errorf("the output shows the password:\n%s", b)
			}
		})
	}
}
