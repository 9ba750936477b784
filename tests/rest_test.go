package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"mirrorql/tests/testdb"
)

// conformanceDir holds the in-repository copy of the project's shared
// conformance suite (see testdata/README.md), so a clone alone runs it.
const conformanceDir = "testdata/conformance"

// conformanceCase is one recorded request and the mirror node's answer.
type conformanceCase struct {
	URL     string            `json:"url"`
	Status  int               `json:"status"`
	Body    any               `json:"body"`
	Headers map[string]string `json:"headers"`
}

type conformanceDirMeta struct {
	Profile  string   `json:"profile"`
	Truncate []string `json:"truncate"`
}

// conformanceFolders lists the recorded case folders; an empty list fails.
func conformanceFolders(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(conformanceDir, "*", "cases.json"))
	if len(dirs) == 0 {
		t.Fatalf("no conformance cases at %s (see testdata/README.md)", conformanceDir)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	sort.Strings(dirs)
	return dirs
}

// loadConformanceData empties every table any case uses and loads one
// folder's data.sql unchanged.
func loadConformanceData(t *testing.T, b *bun.DB, dir string) conformanceDirMeta {
	t.Helper()
	var meta conformanceDirMeta
	readJSON(t, filepath.Join(dir, "meta.json"), &meta)
	ctx := context.Background()
	if _, err := b.DB.ExecContext(ctx, "TRUNCATE entity, schedule, transaction_signature, topic_message, topic_message_lookup, transaction, topic, custom_fee"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := testdb.LoadDump(ctx, b, string(data)); err != nil {
		t.Fatalf("%s/data.sql: %v", dir, err)
	}
	return meta
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// restEnv is a database and, on it, a server with the default settings and
// one with small response limits.
type restEnv struct {
	dbURL        string
	b            *bun.DB
	def, limited *server
}

// newRESTEnv starts a restEnv on a database of the test's own. Default
// settings, response cache included: the tests reload the tables under the
// same servers, as the conformance runner does, and the cache must never
// replay the answer of the data before.
func newRESTEnv(t *testing.T) restEnv {
	t.Helper()
	dbURL, b := testdb.New(t)
	return restEnv{dbURL: dbURL, b: b, def: startServer(t, dbURL),
		limited: startServer(t, dbURL, "MIRRORQL_RESPONSE_LIMIT_DEFAULT=2", "MIRRORQL_RESPONSE_LIMIT_MAX=4")}
}

// TestREST: the conformance cases (by the official runner and replayed in
// Go), the repository's own cases, and random requests. Each group reloads
// the tables under its servers, so each has a restEnv of its own: the two
// conformance groups run side by side once the body (the other two) is done.
func TestREST(t *testing.T) {
	t.Parallel()

	// The official runner, both profiles, against the built binary.
	t.Run("conformance run.sh", func(t *testing.T) {
		t.Parallel()
		conformanceFolders(t)
		for _, tool := range []string{"bash", "psql", "curl", "python3"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Fatalf("run.sh needs %s on PATH (.ci/run installs it)", tool)
			}
		}
		e := newRESTEnv(t)
		cmd := exec.Command("bash", filepath.Join(conformanceDir, "run.sh"))
		// Its psql loads each data.sql as a restore does, triggers off
		// (testdb.LoadDump): the dumps carry the importer's own lookup rows.
		cmd.Env = append(os.Environ(), "BASE_URL="+e.def.URL, "BASE_URL_LIMIT="+e.limited.URL, "DATABASE_URL="+e.dbURL,
			"PATH="+interpreterFirst(t, "python3"), "PGOPTIONS=-c session_replication_role=replica")
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		t.Logf("run.sh: %s", last)
		if err != nil || !strings.HasSuffix(last, " 0 failed") || strings.Contains(string(out), "SKIP") {
			t.Fatalf("conformance failed (%v):\n%s", err, out)
		}
	})

	// The same cases replayed in Go: bodies compared structurally, the CORS
	// and content-type headers checked (get validates every body against
	// our openapi.yml).
	t.Run("conformance replay", func(t *testing.T) {
		t.Parallel()
		folders := conformanceFolders(t)
		e := newRESTEnv(t)
		for _, dir := range folders {
			meta := loadConformanceData(t, e.b, dir)
			base := e.def.URL
			if meta.Profile == "limit" {
				base = e.limited.URL
			}
			var cases []conformanceCase
			readJSON(t, filepath.Join(dir, "cases.json"), &cases)
			for i, c := range cases {
				status, hdr, body := get(t, base+c.URL)
				name := filepath.Base(dir) + "#" + string(rune('0'+i)) + " " + c.URL
				if status != c.Status {
					t.Errorf("%s: status %d, want %d: %s", name, status, c.Status, body)
					continue
				}
				var got any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Errorf("%s: body is not JSON: %s", name, body)
					continue
				}
				if !reflect.DeepEqual(got, c.Body) {
					t.Errorf("%s:\n got %s\nwant %s", name, body, mustJSON(c.Body))
				}
				for k, v := range c.Headers {
					if hdr.Get(k) != v {
						t.Errorf("%s: header %s = %q, want %q", name, k, hdr.Get(k), v)
					}
				}
				if hdr.Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("%s: no Access-Control-Allow-Origin: *", name)
				}
				if ct := hdr.Get("Content-Type"); ct != "application/json; charset=utf-8" {
					t.Errorf("%s: content-type %q", name, ct)
				}
			}
		}
	})

	e := newRESTEnv(t)
	seedREST(t, e.b)
	for _, tc := range restCases {
		t.Run(tc.name, func(t *testing.T) {
			base := e.def.URL
			if tc.limited {
				base = e.limited.URL
			}
			status, hdr, body := get(t, base+tc.url, tc.header...)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.body != "" {
				assertJSONEqual(t, body, tc.body)
			}
			for k, v := range tc.headers {
				if got := hdr.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}

	// Random garbage on every route: never a 5xx, and every 4xx carries the
	// documented error body.
	t.Run("random requests", func(t *testing.T) {
		rng := rand.New(rand.NewSource(20261121))
		for i := 0; i < 3000; i++ {
			u := randomRequest(rng)
			status, _, body := get(t, e.def.URL+u)
			if status >= 500 {
				t.Fatalf("%s: %d %s", u, status, body)
			}
			if status >= 400 {
				var e struct {
					Status struct {
						Messages []struct {
							Message string `json:"message"`
						} `json:"messages"`
					} `json:"_status"`
				}
				if err := json.Unmarshal(body, &e); err != nil || len(e.Status.Messages) == 0 || e.Status.Messages[0].Message == "" {
					t.Fatalf("%s: %d with undocumented body %s", u, status, body)
				}
			}
		}
	})
}

// interpreterFirst is PATH with the directory of the interpreter that name
// runs put first. run.sh starts python3 for every case; where python3 on PATH
// is a version manager's shim (pyenv's starts a shell and pyenv itself), each
// start costs seconds on a loaded machine, the interpreter alone a fraction.
func interpreterFirst(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(name, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	path := os.Getenv("PATH")
	if exe := strings.TrimSpace(string(out)); exe != "" {
		path = filepath.Dir(exe) + string(os.PathListSeparator) + path
	}
	return path
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body is not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

var randomPieces = struct {
	paths, values, keys []string
}{
	paths: []string{
		"/api/v1/topics/%s/messages", "/api/v1/topics/%s/messages/%s", "/api/v1/topics/messages/%s",
		"/api/v1/topics/%s", "/api/v1/schedules", "/api/v1/schedules/%s", "/API/V1/TOPICS/%s/MESSAGES/",
		"/api/v1/%s", "/%s",
	},
	values: []string{
		"7", "0.0.7", "0.7", "00007", "-5", "0", "1", "0.0.-3", "a.b.c", "0.0.0.1", "274877906943", "274877906944",
		"9223372036854775807", "9223372036854775808", "92233720368547758080", "1234567890.000000001",
		"9999999999.999999999", "1.", ".1", "0x0000000000000000000000000000000000000007",
		"0xabcdefabcdefabcdefabcdefabcdefabcdefabcd", "gt:1", "lt:2:3", "%ZZ", "%E2%82", "%F0%9F%98%80", "x%00y",
		"", " ", "+", "1e3", "utf-8", "BASE64", "asc", "DESC", "1023.65535.274877906943", "1024.0.1",
	},
	keys: []string{
		"limit", "order", "encoding", "sequencenumber", "sequenceNumber", "timestamp", "account.id", "schedule.id",
		"topic.id", "a[b]", "a[b][c]", "limit[]", "limit[x]", "LIMIT", "toString", "",
	},
}

func randomRequest(rng *rand.Rand) string {
	pick := func(s []string) string { return s[rng.Intn(len(s))] }
	path := randomPieces.paths[rng.Intn(len(randomPieces.paths))]
	for strings.Contains(path, "%s") {
		path = strings.Replace(path, "%s", url.PathEscape(pick(randomPieces.values)), 1)
	}
	var q bytes.Buffer
	for n := rng.Intn(5); n > 0; n-- {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		op := pick([]string{"", "gt:", "lte:", "ne:", "eq:", "xx:"})
		q.WriteString(url.QueryEscape(pick(randomPieces.keys)) + "=" + url.QueryEscape(op+pick(randomPieces.values)))
	}
	if rng.Intn(20) == 0 {
		q.WriteString(strings.Repeat("&limit=1", 101))
	}
	if q.Len() == 0 {
		return path
	}
	return path + "?" + q.String()
}

// TestConformanceCopyMatchesShared: the in-repository copy of the conformance
// suite (testdata/conformance) is byte-identical to the project's
// shared/conformance whenever that folder is beside the repository. A clone
// alone has no ../shared: there is nothing to compare, and the copy is what
// every conformance test runs.
func TestConformanceCopyMatchesShared(t *testing.T) {
	t.Parallel()
	const shared = "../../shared/conformance"
	if _, err := os.Stat(shared); err != nil {
		t.Logf("no %s beside the repository: nothing to compare the copy with", shared)
		return
	}
	files := func(root string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			m[rel] = data
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want, got := files(shared), files(conformanceDir)
	for name, data := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: missing from %s", name, conformanceDir)
		} else if !bytes.Equal(g, data) {
			t.Errorf("%s: differs from %s (refresh the copy, see testdata/README.md)", name, shared)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: in %s but not in %s", name, conformanceDir, shared)
		}
	}
}
