package tests

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mirrorql/config"
	"mirrorql/tests/testdb"
)

// Settings of TestRandomRequests (MIRRORQL_TEST_ variables: the service
// ignores them, so they may stay in the environment it inherits).
const (
	envRandomRequests = "MIRRORQL_TEST_RANDOM_REQUESTS" // how many; default randomRequestsCI
	envRandomSeed     = "MIRRORQL_TEST_RANDOM_SEED"     // default randomSeed
	randomRequestsCI  = 5000
	randomSeed        = 20261121
	// randomDeadline is the least request deadline (the server's
	// MIRRORQL_REQUEST_TIMEOUT) of the test; on a busy machine the deadline
	// grows with what the warm-up measured (requestDeadline).
	randomDeadline = 5 * time.Second
)

// requestDeadline is the request deadline for a server whose slowest
// warm-up request took slowest: randomDeadline, or 20 times slowest when
// the machine is that busy (a warm-up request takes milliseconds on a quiet
// one), in whole seconds.
func requestDeadline(slowest time.Duration) time.Duration {
	return max(randomDeadline, (20 * slowest).Round(time.Second))
}

// TestRandomRequests sends seeded random requests (valid and malformed
// paths, query strings with garbage, huge numbers, unicode, percent-encoding,
// repeated keys up to and past the 100-value limit, bracket keys; odd
// methods and headers; GraphQL documents that are invalid, wrongly typed,
// unknown, aliased or nested to excess, or oversized) to a running server on
// a real database, from 16 clients at once, and checks that:
//   - no response is a 5xx;
//   - every 4xx of the REST face and of the service's own limits carries the
//     documented error body {"_status":{"messages":[{"message":...}]}}, and
//     every 4xx of /graphql a GraphQL error body {"errors":[{"message":...}]}
//     (or the documented one);
//   - no request takes longer than the request deadline;
//   - the server's goroutine count (go_goroutines on /metrics) is back at
//     its idle level afterwards.
//
// Request i is generated from (seed, i) alone, so a failure names a request
// that can be rebuilt whatever the concurrency. CI runs randomRequestsCI;
// by hand: MIRRORQL_TEST_RANDOM_REQUESTS=100000 go test ./tests -run TestRandomRequests -v
func TestRandomRequests(t *testing.T) {
	t.Parallel()
	n := envInt(t, envRandomRequests, randomRequestsCI)
	seed := uint64(envInt(t, envRandomSeed, randomSeed))
	dbURL, b := testdb.New(t)
	seedREST(t, b)
	// The deadline is measured on a server of its own first: a busy machine
	// (a CI runner with neighbours) makes every request slower.
	warmUp := func(s *server) (slowest time.Duration) {
		for i := 0; i < 50; i++ {
			start := time.Now()
			status, _, _ := get(t, s.URL+"/api/v1/topics/0.0.7/messages?limit=2")
			if status != http.StatusOK {
				t.Fatalf("warm-up: %d", status)
			}
			slowest = max(slowest, time.Since(start))
		}
		return slowest
	}
	slowestWarmUp := warmUp(startServer(t, dbURL, "MIRRORQL_LOG_LEVEL=warn"))
	deadline := requestDeadline(slowestWarmUp)
	t.Logf("request deadline %s (the slowest warm-up request took %s)", deadline, slowestWarmUp.Round(time.Millisecond))
	s := startServer(t, dbURL, "MIRRORQL_REQUEST_TIMEOUT="+deadline.String(), "MIRRORQL_LOG_LEVEL=warn")

	transport := &http.Transport{MaxIdleConnsPerHost: 32, DisableCompression: true}
	client := &http.Client{Transport: transport, Timeout: deadline + 5*time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Idle level: after a warm-up, with every connection closed.
	warmUp(s)
	idle, metricsOK := goroutines(t, s.URL)

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		failures []string
		slowest  time.Duration
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	start := time.Now()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				rr := genRandomRequest(rand.New(rand.NewPCG(seed, uint64(i))))
				status, took, problem := rr.send(client, s.URL, deadline)
				mu.Lock()
				statuses[status]++
				slowest = max(slowest, took)
				mu.Unlock()
				if problem != "" {
					fail("request %d (seed %d): %s %s: %s", i, seed, rr.method, trim(rr.target, 300), problem)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var hist []string
	for _, c := range codes {
		hist = append(hist, fmt.Sprintf("%d×%d", c, statuses[c]))
	}
	t.Logf("%d requests (seed %d) in %s (%.0f/s), slowest %s; statuses %s", n, seed,
		elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), slowest.Round(time.Millisecond), strings.Join(hist, " "))
	for _, f := range failures {
		t.Error(f)
	}

	transport.CloseIdleConnections()
	if !metricsOK {
		t.Logf("goroutine count not checked: the server has no go_goroutines on /metrics")
		return
	}
	// A request's goroutines end by its deadline at the latest.
	settle := deadline + patience // past the deadline, only a goroutine that stays
	settled := time.Now().Add(settle)
	var now int
	for {
		now, _ = goroutines(t, s.URL)
		if now <= idle+5 || time.Now().After(settled) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("server goroutines: %d idle before, %d after", idle, now)
	if now > idle+5 {
		t.Errorf("server goroutines did not return to idle: %d before, %d %s after the last request", idle, now, settle)
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// goroutines reads go_goroutines from the server's /metrics on a connection
// of its own (closed afterwards); false when it is not there.
func goroutines(t *testing.T, base string) (int, bool) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: patience}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err == nil
		}
	}
	return 0, false
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// fuzzRequest is one generated request.
type fuzzRequest struct {
	method string
	target string // request-target as sent: path and query, already encoded (or not)
	header http.Header
	body   []byte
}

// send sends rr to the server at base, whose request deadline is deadline.
func (rr fuzzRequest) send(client *http.Client, base string, deadline time.Duration) (status int, took time.Duration, problem string) {
	path, query, _ := strings.Cut(rr.target, "?")
	u, err := url.Parse(base)
	if err != nil {
		return 0, 0, err.Error()
	}
	u.Opaque, u.RawQuery = path, query // sent as is, escaped or not
	if query == "" && strings.HasSuffix(rr.target, "?") {
		u.ForceQuery = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline+5*time.Second)
	defer cancel()
	var body io.Reader
	if rr.body != nil {
		body = bytes.NewReader(rr.body)
	}
	req, err := http.NewRequestWithContext(ctx, rr.method, base, body)
	if err != nil {
		return 0, 0, "cannot build: " + err.Error()
	}
	req.URL = u
	req.Host = u.Host
	for k, vs := range rr.header {
		req.Header[k] = vs
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if (unparseableTarget(rr.target) || nodeRefuses(rr) != 0) && connectionCut(err) {
			return 0, time.Since(start), "" // refused and closed: see connectionCut
		}
		return 0, time.Since(start), "no response: " + err.Error()
	}
	var rd io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" && rr.method != http.MethodHead {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			resp.Body.Close()
			return resp.StatusCode, time.Since(start), "bad gzip: " + err.Error()
		}
		rd = zr
	}
	respBody, err := io.ReadAll(rd)
	resp.Body.Close()
	took = time.Since(start)
	status = resp.StatusCode
	if err != nil {
		if ((status == http.StatusBadRequest && unparseableTarget(rr.target)) || status == nodeRefuses(rr)) && connectionCut(err) {
			return status, took, "" // see connectionCut
		}
		return status, took, "reading the body: " + err.Error()
	}
	if took > deadline {
		return status, took, fmt.Sprintf("took %s, longer than the request deadline %s", took, deadline)
	}
	if status == http.StatusServiceUnavailable && path == "/health/readiness" && rr.method == http.MethodGet &&
		string(respBody) == `{"status":"DOWN"}`+"\n" {
		// Readiness's own answer when the database does not answer its
		// ping within 2 s: what it is for, on a machine busy enough. (The
		// path is written out: importing package service would link the
		// face's gRPC protos, whose timestamp.proto the SDK's registers
		// too, and the test binary would panic at init.)
		return status, took, ""
	}
	if status >= 500 {
		return status, took, fmt.Sprintf("%d %s", status, trim(string(respBody), 500))
	}
	if status < 400 || rr.method == http.MethodHead {
		return status, took, ""
	}
	if netHTTPRefusal(rr, status, resp.Header, respBody) || nodeHeadRefusal(rr, status, resp.Header, respBody) {
		return status, took, ""
	}
	graphql := strings.HasPrefix(strings.ToLower(path), "/graphql")
	if !documentedError(respBody) && !(graphql && graphQLError(respBody)) {
		return status, took, fmt.Sprintf("%d with an undocumented body: %s", status, trim(string(respBody), 500))
	}
	return status, took, ""
}

// netHTTPRefusal reports whether a 4xx is one net/http answers itself, in
// plain text, before any handler of ours runs: 400 for a request-target it
// cannot parse (an invalid %-escape in the path), 431 for a request head
// longer than the server's MaxHeaderBytes (config.MaxServerHeaderBytes, plus
// net/http's 4 KiB of slack). Nothing else may answer outside the documented
// shapes.
func netHTTPRefusal(rr fuzzRequest, status int, h http.Header, body []byte) bool {
	if !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		return false
	}
	switch status {
	case http.StatusBadRequest:
		return unparseableTarget(rr.target) && string(body) == "400 Bad Request"
	case http.StatusRequestHeaderFieldsTooLarge:
		head := len(rr.method) + len(rr.target) + len(" HTTP/1.1\r\n")
		for k, vs := range rr.header {
			for _, v := range vs {
				head += len(k) + len(v) + 4
			}
		}
		return head > config.MaxServerHeaderBytes && string(body) == "431 Request Header Fields Too Large"
	}
	return false
}

// nodeHeadRefusal reports whether a 4xx is one the mirror node's HTTP
// parser answers, with an empty body, to a head for its API
// (httpserver.NodeHeads; nodeRefuses).
func nodeHeadRefusal(rr fuzzRequest, status int, h http.Header, body []byte) bool {
	return len(body) == 0 && h.Get("Content-Type") == "" && status == nodeRefuses(rr)
}

// nodeRefuses is the status Node's parser refuses the head of rr with, 0
// if none: 400 for a target under /api holding a byte outside printable
// ASCII, 431 for a target and headers of 16 KiB together (as Node counts
// them; the client adds a few headers of its own, hence the slack).
func nodeRefuses(rr fuzzRequest) int {
	if len(rr.target) < 4 || !strings.EqualFold(rr.target[:4], "/api") {
		return 0
	}
	if strings.IndexFunc(rr.target, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return http.StatusBadRequest
	}
	head := len(rr.target)
	for k, vs := range rr.header {
		for _, v := range vs {
			head += len(k) + len(v)
		}
	}
	if head >= 16<<10-256 {
		return http.StatusRequestHeaderFieldsTooLarge
	}
	return 0
}

// connectionCut: for a request-target it cannot parse, net/http answers
// 400 and closes the connection at once, the rest of the request unread, so
// the kernel may reset it before the client has sent all or read the answer.
// Counted as status 0 in the histogram.
func connectionCut(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}

// unparseableTarget: net/http refuses the request-target (an invalid
// %-escape in the path).
func unparseableTarget(target string) bool {
	path, _, _ := strings.Cut(target, "?")
	_, err := url.ParseRequestURI(path)
	return err != nil
}

// documentedError: {"_status":{"messages":[{"message":"..."[,"detail":"..."]}, ...]}}.
func documentedError(body []byte) bool {
	var e struct {
		Status *struct {
			Messages []map[string]any `json:"messages"`
		} `json:"_status"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if dec.Decode(&e) != nil || e.Status == nil || len(e.Status.Messages) == 0 {
		return false
	}
	for _, m := range e.Status.Messages {
		if msg, ok := m["message"].(string); !ok || msg == "" {
			return false
		}
		for k, v := range m {
			if _, isString := v.(string); (k != "message" && k != "detail") || !isString {
				return false
			}
		}
	}
	return true
}

// graphQLError: {"errors":[{"message":"...",...}, ...], ...}.
func graphQLError(body []byte) bool {
	var e struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
		return false
	}
	for _, m := range e.Errors {
		if m.Message == "" {
			return false
		}
	}
	return true
}

// The material requests are made of.
var (
	rndPaths = []string{
		"/api/v1/topics/{id}/messages", "/api/v1/topics/{id}/messages/{v}", "/api/v1/topics/messages/{v}",
		"/api/v1/topics/{id}", "/api/v1/schedules", "/api/v1/schedules/{id}", "/API/V1/TOPICS/{id}/MESSAGES/",
		"/api/v1/topics/{id}/messages/", "/api/v1/schedules/", "/api/v1/{v}", "/api/v1/topics/{v}/{v}/{v}",
		"/api/v2/topics/{id}/messages", "/{v}", "/", "/health/liveness", "/health/readiness",
		"/api/v1/docs/openapi.yml", "/graphql", "/graphql/explorer/{v}", "//api/v1/schedules",
		"/api/v1/../v1/schedules", "/api/v1/./schedules", "/api%2Fv1%2Fschedules", "/api/v1/topics/{id}%2Fmessages",
	}
	rndIDs = []string{
		"0.0.7", "7", "0.7", "00007", "0.0.10", "0.0.100", "0.0.101", "0.0.999", "1023.65535.274877906943",
		"1024.0.1", "0.0.-3", "-1", "0", "a.b.c", "0.0.0.1", "274877906944", "9223372036854775807",
		"0x0000000000000000000000000000000000000007", "0xZZ", "0.0.7.", ".0.7", "0..7",
	}
	rndKeys = []string{
		"limit", "order", "encoding", "sequencenumber", "sequenceNumber", "timestamp", "account.id", "schedule.id",
		"topic.id", "LIMIT", "Order", "a[b]", "a[b][c]", "limit[]", "limit[0]", "timestamp[gt]", "account.id[lte]",
		"__proto__", "constructor", "toString", "hasOwnProperty", "", "é", "😀", "%00", "a%5Bb%5D", "limit%5B%5D",
		"q", "query", "variables", "operationName",
	}
	rndValues = []string{
		"1", "2", "25", "100", "101", "0", "-1", "1e3", "1.5", "asc", "desc", "DESC", "base64", "utf-8", "UTF8",
		"1700000000.000000001", "1700000000", "9999999999.999999999", "1234567890.0000000001", "-1.5", "0.0",
		"9223372036854775807", "9223372036854775808", "92233720368547758080", "1e400", "NaN", "Infinity",
		"0.0.7", "0.0.100", "0.0.2", "1023.65535.274877906943", "0x0000000000000000000000000000000000000007",
		"true", "null", "undefined", "[]", "{}", "é", "😀", "\u202e", "%", "%Z", "%ZZ", "%FF", "%C0%AF", "%E2%82",
		"%F0%9F%98%80", "%00", "%0A", "+", "%20", "a+b", "'", "%27%20OR%201=1--", "1;select", "\\", "\"",
	}
	rndOps = []string{"", "", "", "eq:", "ne:", "gt:", "gte:", "lt:", "lte:", "GT:", "xx:", ":", "gt:gt:", "lt:%20"}
)

func genRandomRequest(r *rand.Rand) fuzzRequest {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	rr := fuzzRequest{method: http.MethodGet, header: http.Header{}}
	switch x := r.IntN(100); {
	case x < 8:
		rr.method = http.MethodHead
	case x < 12:
		rr.method = http.MethodOptions
		if r.IntN(2) == 0 {
			rr.header.Set("Access-Control-Request-Method", pick([]string{"GET", "POST", "DELETE", "X"}))
		}
	case x < 16:
		rr.method = pick([]string{http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodPost, "PROPFIND"})
	}

	// Path.
	path := pick(rndPaths)
	for strings.Contains(path, "{id}") || strings.Contains(path, "{v}") {
		v := pick(rndIDs)
		if strings.Index(path, "{v}") >= 0 && (strings.Index(path, "{id}") < 0 || r.IntN(2) == 0) {
			v = randomValue(r, pick)
			path = strings.Replace(path, "{v}", escapeSome(r, v, true), 1)
			continue
		}
		path = strings.Replace(path, "{id}", escapeSome(r, v, true), 1)
	}
	if r.IntN(200) == 0 {
		path += "/" + strings.Repeat("a", r.IntN(20000)) // long paths, some past the URL limit
	}

	// Query string.
	var q []string
	for k := r.IntN(6); k > 0; k-- {
		q = append(q, randomParam(r, pick))
	}
	if r.IntN(15) == 0 { // repeated keys, up to and past the 100-value limit
		key, times := pick([]string{"sequencenumber", "timestamp", "account.id", "schedule.id", "limit", "order"}), 90+r.IntN(40)
		for i := 0; i < times; i++ {
			q = append(q, key+"="+pick(rndOps)+escapeSome(r, pick(rndValues), false))
		}
	}
	if r.IntN(300) == 0 {
		q = append(q, "x="+strings.Repeat("9", r.IntN(30000))) // huge, some past the URL limit
	}
	if r.IntN(40) == 0 {
		q = append(q, pick([]string{"&", "&&", "=", "==", "a==b", "=1", "a=1=2", "%", "&=&"}))
	}
	rr.target = path
	if len(q) > 0 || r.IntN(30) == 0 {
		rr.target += "?" + strings.Join(q, "&")
	}

	// GraphQL documents: POST bodies and GET query strings.
	if strings.HasPrefix(path, "/graphql") && path == "/graphql" {
		doc := randomGraphQL(r, pick)
		if rr.method == http.MethodPost || (rr.method == http.MethodGet && r.IntN(3) > 0) {
			rr.method = http.MethodPost
			rr.body = doc
			rr.header.Set("Content-Type", pick([]string{"application/json", "application/json", "application/graphql", "text/plain", ""}))
			rr.target = path
		} else if rr.method == http.MethodGet {
			rr.target = path + "?query=" + url.QueryEscape(string(doc))
		}
	}
	if rr.method == http.MethodPost && rr.body == nil && r.IntN(2) == 0 {
		rr.body = bytes.Repeat([]byte("x"), r.IntN(1<<16))
	}

	// Headers.
	if r.IntN(3) == 0 {
		rr.header.Set("Accept-Encoding", pick([]string{"gzip", "br", "gzip, deflate", "*", "identity;q=0", "garbage,,;q=x"}))
	}
	if r.IntN(5) == 0 {
		rr.header.Set("Origin", pick([]string{"https://example.com", "null", "*", "é"}))
	}
	if r.IntN(10) == 0 {
		rr.header.Set("X-Forwarded-For", pick([]string{"1.2.3.4", "::1", "garbage", "1.2.3.4, 5.6.7.8", strings.Repeat("9.", 500)}))
	}
	if r.IntN(10) == 0 {
		rr.header.Set("X-Request-Id", pick([]string{"abc", "", "\u00e9", strings.Repeat("r", 300), "a\tb"}))
	}
	if r.IntN(10) == 0 {
		rr.header.Set("If-None-Match", pick([]string{"*", `"x"`, `W/"1"`, "garbage"}))
	}
	if r.IntN(10) == 0 {
		rr.header.Set("Accept", pick([]string{"*/*", "application/xml", "text/html", "application/json;q=0", ";;;"}))
	}
	if r.IntN(50) == 0 { // big headers: many, or one large (some past the header limit)
		if r.IntN(2) == 0 {
			for i := 0; i < 20+r.IntN(100); i++ {
				rr.header.Set("X-H"+strconv.Itoa(i), strings.Repeat("h", r.IntN(400)))
			}
		} else {
			rr.header.Set("X-Big", strings.Repeat("b", r.IntN(48<<10)))
		}
	}
	return rr
}

func randomValue(r *rand.Rand, pick func([]string) string) string {
	switch r.IntN(10) {
	case 0:
		return strconv.FormatUint(r.Uint64(), 10) + "." + strconv.Itoa(r.IntN(1e9))
	case 1:
		return strconv.FormatInt(r.Int64N(1<<40)-1<<20, 10)
	case 2:
		return strings.Repeat(pick([]string{"9", "0", "a", "é", "%41"}), 1+r.IntN(200))
	}
	return pick(rndValues)
}

func randomParam(r *rand.Rand, pick func([]string) string) string {
	key := pick(rndKeys)
	if r.IntN(10) == 0 {
		return escapeSome(r, key, false) // no value
	}
	return escapeSome(r, key, false) + "=" + pick(rndOps) + escapeSome(r, randomValue(r, pick), false)
}

// escapeSome escapes a piece for the URL most of the time; sometimes sends it
// raw (percent signs and unicode as they are), sometimes double-escaped.
func escapeSome(r *rand.Rand, s string, path bool) string {
	switch r.IntN(10) {
	case 0:
		return strings.ReplaceAll(strings.ReplaceAll(s, " ", "%20"), "#", "%23") // raw
	case 1:
		return url.QueryEscape(url.QueryEscape(s))
	}
	if path {
		return url.PathEscape(s)
	}
	return url.QueryEscape(s)
}

func randomGraphQL(r *rand.Rand, pick func([]string) string) []byte {
	var doc string
	switch r.IntN(12) {
	case 0:
		doc = `{ topic(id: "0.0.7") { __typename } }`
	case 1:
		doc = `{ topics(first: 5) { __typename } }`
	case 2: // invalid syntax
		doc = pick([]string{"{", "}", "{ topic(id: ) }", "query {{", "{ topic(id: \"0.0.7\") { ", "\x00", "query Q($a: ) { x }", "😀"})
	case 3: // wrong types
		doc = pick([]string{`{ topic(id: 7.5) { __typename } }`, `{ topic(id: true) { __typename } }`, `{ topics(first: "x") { __typename } }`,
			`{ topics(first: 99999999999999999999) { __typename } }`, `{ topic(id: "x.y.z") { __typename } }`, `{ topics(first: -1) { __typename } }`})
	case 4: // unknown fields
		doc = pick([]string{`{ nope }`, `{ topic(id: "0.0.7") { nope } }`, `{ __schema { nope } }`, `mutation { x }`, `subscription { x }`})
	case 5: // many aliases
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < 10+r.IntN(3000); i++ {
			fmt.Fprintf(&b, " a%d: topic(id: \"0.0.7\") { __typename }", i)
		}
		b.WriteString(" }")
		doc = b.String()
	case 6: // deep nesting
		depth := 5 + r.IntN(500)
		doc = strings.Repeat("{ a ", depth) + strings.Repeat("} ", depth)
	case 7: // introspection
		doc = `{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`
	case 8: // oversized
		doc = `{ topic(id: "0.0.7") { __typename } } #` + strings.Repeat("x", r.IntN(200<<10))
	case 9: // batch
		n := 1 + r.IntN(300)
		ops := make([]string, n)
		for i := range ops {
			ops[i] = `{"query":"{ topic(id: \"0.0.7\") { __typename } }"}`
		}
		return []byte("[" + strings.Join(ops, ",") + "]")
	case 10: // not a GraphQL request body at all
		return []byte(pick([]string{"", "null", "[]", "{}", `{"query":5}`, `{"query":"{ __typename }","variables":"x"}`, "not json", `{"query":`}))
	default:
		doc = `query Q($id: EntityId!) { topic(id: $id) { __typename } }`
		vars := pick([]string{`{"id":"0.0.7"}`, `{"id":5}`, `{}`, `{"id":null}`, `"x"`})
		return []byte(`{"query":` + strconv.Quote(doc) + `,"variables":` + vars + `}`)
	}
	body, _ := json.Marshal(map[string]string{"query": doc})
	return body
}

// TestRequestLimits checks the request limits on the built binary: each
// answered with its 4xx in the documented body (not a dropped connection),
// and the optional per-client rate limit with 429 and Retry-After, the
// health probes exempt.
func TestRequestLimits(t *testing.T) {
	dbURL, b := testdb.New(t)
	seedREST(t, b)
	s := startServer(t, dbURL, "MIRRORQL_MAX_URL_LENGTH=1000", "MIRRORQL_MAX_HEADER_BYTES=4096",
		"MIRRORQL_MAX_BODY_BYTES=2048", "MIRRORQL_RATE_LIMIT=5", "MIRRORQL_RATE_BURST=20")
	check := func(name string, rr fuzzRequest, want int) *http.Response {
		t.Helper()
		req, err := http.NewRequest(rr.method, s.URL+rr.target, bytes.NewReader(rr.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range rr.header {
			req.Header[k] = vs
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: %d %s, want %d", name, resp.StatusCode, body, want)
		}
		if want >= 400 && !documentedError(body) {
			t.Errorf("%s: %d with an undocumented body %s", name, want, body)
		}
		return resp
	}
	long := "/api/v1/topics/0.0.7/messages?limit=1&x=" + strings.Repeat("9", 1000)
	check("long URL", fuzzRequest{method: "GET", target: long}, http.StatusRequestURITooLong)
	check("URL at the limit", fuzzRequest{method: "GET", target: long[:1000]}, http.StatusBadRequest) // x is unknown: the handler answers
	check("big headers", fuzzRequest{method: "GET", target: "/api/v1/schedules",
		header: http.Header{"X-Big": {strings.Repeat("b", 5000)}}}, http.StatusRequestHeaderFieldsTooLarge)
	check("big body", fuzzRequest{method: "POST", target: "/graphql", body: bytes.Repeat([]byte(" "), 3000),
		header: http.Header{"Content-Type": {"application/json"}}}, http.StatusRequestEntityTooLarge)

	// The GraphQL face's own, smaller limit answers in GraphQL's error shape.
	small := startServer(t, dbURL, "MIRRORQL_GRAPHQL_MAX_BODY_BYTES=1024")
	resp, err := http.Post(small.URL+"/graphql", "application/json",
		strings.NewReader(`{"query":"{ topic(id: \"7\") { id } }"`+strings.Repeat(" ", 1100)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	gqlBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(gqlBody), "REQUEST_TOO_LARGE") {
		t.Errorf("GraphQL body over MIRRORQL_GRAPHQL_MAX_BODY_BYTES: %d %s", resp.StatusCode, gqlBody)
	}

	// Burst of 20, 5/s: the rest of a quick run of 40 is refused.
	var refused *http.Response
	for i := 0; i < 40 && refused == nil; i++ {
		resp, err := http.Get(s.URL + "/api/v1/topics/0.0.7/messages?limit=1")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			refused = resp
		default:
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if refused == nil {
		t.Fatal("40 requests at once were all served under a 5/s, burst 20 rate limit")
	}
	check("rate limited", fuzzRequest{method: "GET", target: "/api/v1/schedules"}, http.StatusTooManyRequests)
	if ra := refused.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	check("liveness is exempt", fuzzRequest{method: "GET", target: "/health/liveness"}, http.StatusOK)
	check("readiness is exempt", fuzzRequest{method: "GET", target: "/health/readiness"}, http.StatusOK)
	time.Sleep(time.Second) // the scenario: wait exactly the Retry-After (1 s) the server asked for
	check("served again after Retry-After", fuzzRequest{method: "GET", target: "/api/v1/schedules"}, http.StatusOK)
}
