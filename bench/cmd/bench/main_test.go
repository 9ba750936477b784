package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	section := beginMarker + "\nfigures 1\n" + endMarker + "\n"
	if err := writeSection(path, section); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "# Benchmarks\n\n"+beginMarker) {
		t.Fatalf("new file:\n%s", b)
	}
	prose := "# Benchmarks\n\nbefore\n\n" + beginMarker + "\nold\n" + endMarker + "\n\nafter\n"
	if err := os.WriteFile(path, []byte(prose), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, strings.Replace(section, "1", "2", 1)); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	want := "# Benchmarks\n\nbefore\n\n" + beginMarker + "\nfigures 2\n" + endMarker + "\n\nafter\n"
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
}

func TestBuildRoutes(t *testing.T) {
	for _, o := range []struct {
		name string
		hot  string
	}{{"large", "500000"}, {"small", "5000"}} {
		opts := largeOptions(20_000)
		if o.name == "small" {
			opts = smallOptions()
		}
		routes := buildRoutes(opts, "127.0.0.1:1", hotWindow{})
		if len(routes) != 15 {
			t.Fatalf("%d routes", len(routes))
		}
		ts := regexp.MustCompile(`^GET /api/v1/topics/messages/\d{10}\.\d{9} HTTP/1\.1\r\n`)
		seq := regexp.MustCompile(`^GET /api/v1/topics/0\.0\.2001/messages/(\d+) HTTP/1\.1\r\n`)
		for _, r := range routes {
			if len(r.reqs) != requestsPerRoute {
				t.Fatalf("%s: %d requests", r.name, len(r.reqs))
			}
			for _, req := range r.reqs[:200] {
				switch r.name {
				case "by-timestamp":
					if !ts.Match(req) {
						t.Fatalf("%s: %q", r.name, req)
					}
				case "by-sequence":
					m := seq.FindSubmatch(req)
					if m == nil || len(m[1]) > len(o.hot) || (len(m[1]) == len(o.hot) && string(m[1]) > o.hot) {
						t.Fatalf("%s %s: %q", o.name, r.name, req)
					}
				case "gql-message", "gql-page", "gql-list-gt-100", "gql-topic-page", "gql-schedules", "gql-activity":
					if !strings.HasPrefix(string(req), "POST /graphql HTTP/1.1\r\n") || !strings.Contains(string(req), `"variables":{`) {
						t.Fatalf("%s: %q", r.name, req)
					}
				}
			}
		}
	}
}

// TestListGt100Route: the GraphQL list asks for list-gt-100's page of the
// hot topic with the fields REST returns, from a random sequence number that
// leaves a full page.
func TestListGt100Route(t *testing.T) {
	routes := buildRoutes(smallOptions(), "127.0.0.1:1", hotWindow{})
	i := slices.IndexFunc(routes, func(r route) bool { return r.name == "gql-list-gt-100" })
	if i < 0 {
		t.Fatal("no gql-list-gt-100 route")
	}
	r := routes[i]
	if !r.graphql || r.check == nil || !strings.Contains(r.title, "first 100") {
		t.Fatalf("route %+v", r)
	}
	gt := regexp.MustCompile(`"gt":(\d+)`)
	hot := smallOptions().TopicMessages(0)
	for _, req := range r.reqs[:200] {
		body := string(req)
		for _, want := range []string{"first: 100", "sequenceNumber: {gt: $gt}", `"t":"0.0.2001"`, "runningHashVersion", "chunkInfo",
			"pageInfo { hasNextPage endCursor }"} {
			if !strings.Contains(body, want) {
				t.Fatalf("request lacks %s: %q", want, body)
			}
		}
		m := gt.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no $gt: %q", body)
		}
		if n, _ := strconv.ParseInt(m[1], 10, 64); n < 0 || n > hot-100 {
			t.Fatalf("$gt %d outside [0, %d]", n, hot-100)
		}
	}
	if rounds := slices.Index(targetRoutes, "gql-list-gt-100"); rounds < 0 || !slices.Contains(targetRoutes, "list-gt-100") {
		t.Fatal("the paired rounds do not run both lists")
	}
}

func TestTimestamp(t *testing.T) {
	if got := timestamp(1_700_000_000_000_000_123); got != "1700000000.000000123" {
		t.Fatal(got)
	}
}

func TestActivityRoute(t *testing.T) {
	w := hotWindow{from: 1_700_000_000_000_000_001, to: 1_700_000_100_000_000_000, messages: 12}
	routes := buildRoutes(smallOptions(), "127.0.0.1:1", w)
	i := slices.IndexFunc(routes, func(r route) bool { return r.name == "gql-activity" })
	if i < 0 {
		t.Fatal("no gql-activity route")
	}
	r := routes[i]
	req := string(r.reqs[0])
	for _, want := range []string{`"from":"1700000000.000000001"`, `"to":"1700000100.000000000"`, `"b":96`, `"t":"0.0.2001"`} {
		if !strings.Contains(req, want) {
			t.Errorf("request lacks %s: %q", want, req)
		}
	}
	if string(r.reqs[len(r.reqs)-1]) != req || !r.scaling || !r.graphql || r.verify == nil {
		t.Errorf("route %+v", r)
	}
	bucket := `{"messages":0}`
	body := func(first int) []byte {
		b := `{"data":{"topic":{"activity":[{"messages":` + strconv.Itoa(first) + `}`
		for range activityBuckets - 1 {
			b += "," + bucket
		}
		return []byte(b + `]}}}`)
	}
	if err := r.verify(body(12)); err != nil {
		t.Error(err)
	}
	if err := r.verify(body(11)); err == nil {
		t.Error("a short count passed")
	}
	if err := r.verify([]byte(`{"data":{"topic":null}}`)); err == nil {
		t.Error("a null topic passed")
	}
	// The uncached list sends the cached one's requests to a service of its own.
	j := slices.IndexFunc(routes, func(r route) bool { return r.name == "schedules-uncached" })
	k := slices.IndexFunc(routes, func(r route) bool { return r.name == "schedules" })
	if j < 0 || k < 0 || &routes[j].reqs[0] != &routes[k].reqs[0] || len(routes[j].serviceEnv) != 1 || !routes[j].firstConnsOnly {
		t.Errorf("schedules-uncached: %+v", routes[j])
	}
}
