package apispec

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	specPath       = "../../openapi.yml"
	conformanceDir = "../testdata/conformance" // in-repository copy of shared/conformance
)

func loadSpec(t *testing.T) *Spec {
	t.Helper()
	s, err := Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDocumentIsValid(t *testing.T) {
	s := loadSpec(t)
	if err := s.Doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yml: %v", err)
	}
	if got := s.Doc.OpenAPI; got != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", got)
	}
	if got := s.Doc.Info.Extensions["x-mirror-node-api-version"]; got != "0.154.0" {
		t.Errorf("info.x-mirror-node-api-version = %v, want 0.154.0", got)
	}
	for _, want := range []string{"compatible with the mirror node REST API 0.154.0", "response cache", "max-age"} {
		if !strings.Contains(s.Doc.Info.Description, want) {
			t.Errorf("info.description does not mention %q", want)
		}
	}
	for _, p := range []string{
		"/api/v1/topics/{topicId}/messages",
		"/api/v1/topics/{topicId}/messages/{sequenceNumber}",
		"/api/v1/topics/messages/{timestamp}",
		"/api/v1/topics/{topicId}",
		"/api/v1/schedules",
		"/api/v1/schedules/{scheduleId}",
		"/health/liveness",
		"/health/readiness",
		"/api/v1/docs/openapi.yml",
		"/graphql",
		"/metrics",
	} {
		if s.Doc.Paths.Value(p) == nil {
			t.Errorf("path %s is not documented", p)
		}
	}
	for _, name := range []string{
		"TopicMessage", "TopicMessagesResponse", "Schedule", "SchedulesResponse", "Topic", "Key", "Links",
		"Error", "EntityId", "Timestamp", "ChunkInfo", "TransactionId", "ConsensusCustomFees", "FixedCustomFee",
	} {
		if s.Doc.Components.Schemas[name] == nil {
			t.Errorf("schema %s is missing", name)
		}
	}
}

func TestRoute(t *testing.T) {
	s := loadSpec(t)
	tests := []struct {
		method, url, want string
	}{
		{"GET", "/api/v1/topics/messages/123.4", "/api/v1/topics/messages/{timestamp}"},
		{"GET", "/api/v1/topics/messages/1234567890.000000002?limit=2", "/api/v1/topics/messages/{timestamp}"},
		{"GET", "/api/v1/topics/messages/messages", "/api/v1/topics/messages/{timestamp}"},
		{"GET", "/api/v1/topics/7/messages/3", "/api/v1/topics/{topicId}/messages/{sequenceNumber}"},
		{"GET", "/api/v1/topics/0.0.7/messages/1234567890.000000002", "/api/v1/topics/{topicId}/messages/{sequenceNumber}"},
		{"GET", "/api/v1/topics/7/messages", "/api/v1/topics/{topicId}/messages"},
		{"GET", "/API/V1/Topics/7/Messages/", "/api/v1/topics/{topicId}/messages"},
		{"GET", "http://127.0.0.1:8080/api/v1/topics/0.0.7", "/api/v1/topics/{topicId}"},
		{"GET", "/api/v1/schedules?limit=2", "/api/v1/schedules"},
		{"GET", "/api/v1/schedules/0.0.2000", "/api/v1/schedules/{scheduleId}"},
		{"GET", "/api/v1/docs/openapi.yml", "/api/v1/docs/openapi.yml"},
		{"POST", "/graphql", "/graphql"},
		{"GET", "/graphql?query=%7Bx%7D", "/graphql"},
		{"GET", "/health/readiness", "/health/readiness"},
		{"GET", "/metrics", "/metrics"},
	}
	for _, tt := range tests {
		r, params, err := s.Route(tt.method, tt.url)
		if err != nil {
			t.Errorf("%s %s: %v", tt.method, tt.url, err)
			continue
		}
		if r.Path != tt.want {
			t.Errorf("%s %s matched %s (params %v), want %s", tt.method, tt.url, r.Path, params, tt.want)
		}
	}
	for _, bad := range []struct{ method, url string }{
		{"GET", "/api/v1/topics/7/messages/3/extra"},
		{"GET", "/api/v1/nothing"},
		{"POST", "/api/v1/schedules"},
	} {
		if r, _, err := s.Route(bad.method, bad.url); err == nil {
			t.Errorf("%s %s matched %s, want no route", bad.method, bad.url, r.Path)
		}
	}
}

type conformanceCase struct {
	URL     string            `json:"url"`
	Status  int               `json:"status"`
	Body    json.RawMessage   `json:"body"`
	Headers map[string]string `json:"headers"`
}

// TestConformanceCases validates every recorded 2xx and 4xx answer of the
// shared conformance suite against openapi.yml.
func TestConformanceCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(conformanceDir, "*", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no conformance cases under %s (see ../testdata/README.md)", conformanceDir)
	}
	s := loadSpec(t)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []conformanceCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			if c.Status/100 != 2 && c.Status/100 != 4 {
				continue
			}
			h := http.Header{}
			h.Set("Content-Type", "application/json")
			for k, v := range c.Headers {
				h.Set(k, v)
			}
			if err := s.ValidateResponse("GET", c.URL, c.Status, h, c.Body); err != nil {
				t.Errorf("%s: %v", filepath.Base(filepath.Dir(f)), err)
			}
			n++
		}
	}
	t.Logf("validated %d recorded responses", n)
	for _, c := range s.Coverage() {
		t.Logf("%-6s %-52s validated %v, never seen %v", c.Method, c.Path, c.Validated, c.Missing)
	}
}

// TestDocumentedBehaviour validates answers that the recorded cases do not
// show but that docs/reference/behavior.md and docs/reference/DECISIONS.md describe, and checks that wrong
// answers are rejected.
func TestDocumentedBehaviour(t *testing.T) {
	s := loadSpec(t)
	const message = `{"chunk_info":null,"consensus_timestamp":"1234567890.000000003","message":"bWVzc2FnZQ==",` +
		`"payer_account_id":"0.0.3","running_hash":"cnVubmluZ19oYXNo","running_hash_version":2,` +
		`"sequence_number":3,"topic_id":"0.0.7"}`
	const schedule = `{"admin_key":null,"consensus_timestamp":"1234567890.000000001","creator_account_id":"0.0.1024",` +
		`"executed_timestamp":null,"expiration_time":null,"payer_account_id":"0.0.1024","schedule_id":"0.0.2000",` +
		`"signatures":[{"consensus_timestamp":"1234567890.000000001","public_key_prefix":"AQEB",` +
		`"signature":"MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEy\nMzQ1Njc4OTAxMjM=",` +
		`"type":"UNKNOWN"}],"transaction_body":"AQECAgMD","wait_for_expiry":false}`
	const topic = `{"admin_key":{"_type":"ED25519","key":"15706b229b3ba33d4a5a41ff54ce1cfe0a3d308672a33ff382f81583e02bd743"},` +
		`"auto_renew_account":null,"auto_renew_period":null,"created_timestamp":"0.0",` +
		`"custom_fees":{"created_timestamp":null,"fixed_fees":[{"amount":100,"collector_account_id":"0.0.274877906943","denominating_token_id":null}]},` +
		`"deleted":null,"fee_exempt_key_list":[{"_type":"ProtobufEncoded","key":""}],"fee_schedule_key":null,` +
		`"memo":"","submit_key":{"_type":"ECDSA_SECP256K1","key":"02b5ffadf88d625cd9074fa01e5280b773a60ed2de55b0d6f94460c0b5a001a258"},` +
		`"timestamp":{"from":"1234567890.000000001","to":null},"topic_id":"0.0.7"}`
	replace := func(body, old, new string) string {
		t.Helper()
		if !strings.Contains(body, old) {
			t.Fatalf("test body has no %q", old)
		}
		return strings.Replace(body, old, new, 1)
	}
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	tests := []struct {
		name   string
		method string
		url    string
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"payer null (DECISIONS 6)", "GET", "/api/v1/topics/messages/1234567890.000000003", 200, json,
			replace(message, `"payer_account_id":"0.0.3"`, `"payer_account_id":null`), true},
		{"legacy chunk info", "GET", "/api/v1/topics/7/messages/3", 200, json,
			replace(message, `"chunk_info":null`, `"chunk_info":{"initial_transaction_id":{"account_id":"0.0.10","nonce":null,"scheduled":null,"transaction_valid_start":"1234567890.000000000"},"number":1,"total":2}`), true},
		{"chunk initial_transaction_id as a string is wrong", "GET", "/api/v1/topics/7/messages/3", 200, json,
			replace(message, `"chunk_info":null`, `"chunk_info":{"initial_transaction_id":"0.0.10-1234567890-000000321","number":1,"total":2}`), false},
		{"int64 sequence number", "GET", "/api/v1/topics/7/messages?limit=1", 200,
			http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Cache-Control": {"public, max-age=1"},
				"Link": {`</api/v1/topics/7/messages?limit=1&timestamp=gt:1234567890.000000003>; rel="next"`}},
			`{"messages":[` + replace(message, `"sequence_number":3`, `"sequence_number":9223372036847275807`) +
				`],"links":{"next":"/api/v1/topics/7/messages?limit=1&timestamp=gt:1234567890.000000003"}}`, true},
		{"message missing a field", "GET", "/api/v1/topics/7/messages/3", 200, json,
			replace(message, `"running_hash_version":2,`, ``), false},
		{"topic not found (DECISIONS 2)", "GET", "/api/v1/topics/7/messages", 404, json,
			`{"_status":{"messages":[{"message":"No such topic id - 7"}]}}`, true},
		{"service unavailable", "GET", "/api/v1/topics/7/messages", 503, json,
			`{"_status":{"messages":[{"message":"Service unavailable"}]}}`, true},
		{"undocumented status", "GET", "/api/v1/topics/7/messages", 418, json,
			`{"_status":{"messages":[{"message":"I'm a teapot"}]}}`, false},
		{"error without message", "GET", "/api/v1/schedules", 400, json, `{"_status":{"messages":[{}]}}`, false},
		{"schedule list without entity row", "GET", "/api/v1/schedules", 200, json,
			`{"schedules":[` + schedule + `],"links":{"next":null}}`, true},
		{"schedule without entity row", "GET", "/api/v1/schedules/2000", 200, json,
			replace(schedule, `"admin_key":null,`, `"admin_key":null,"deleted":null,"memo":null,`), true},
		{"bad cache-control", "GET", "/api/v1/schedules/2000", 200,
			http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}, schedule, false},
		{"topic details", "GET", "/api/v1/topics/0.0.7", 200, json, topic, true},
		{"topic details 400", "GET", "/api/v1/topics/0.0.0.2", 400, json,
			`{"_status":{"messages":[{"message":"Bad Request","detail":"Failed to convert 'id'"}]}}`, true},
		{"topic details 404", "GET", "/api/v1/topics/0.0.2", 404, json,
			`{"_status":{"messages":[{"message":"Not Found","detail":"Topic not found"}]}}`, true},
		{"graphql", "POST", "/graphql", 200, json,
			`{"data":{"topic":null},"errors":[{"message":"boom","path":["topic",0]}]}`, true},
		{"metrics", "GET", "/metrics", 200,
			http.Header{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}}, "go_goroutines 7\n", true},
		{"readiness down", "GET", "/health/readiness", 503, json, `{"status":"DOWN"}`, true},
	}
	for _, tt := range tests {
		err := s.ValidateResponse(tt.method, tt.url, tt.status, tt.header, []byte(tt.body))
		if tt.ok && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if !tt.ok && err == nil {
			t.Errorf("%s: accepted, want an error", tt.name)
		}
	}
}

func TestMatchingOrder(t *testing.T) {
	got := matchingOrder([]string{
		"/api/v1/topics/{topicId}/messages",
		"/api/v1/topics/{topicId}",
		"/api/v1/topics/messages/{timestamp}",
		"/api/v1/topics/{topicId}/messages/{sequenceNumber}",
	})
	want := []string{
		"/api/v1/topics/messages/{timestamp}",
		"/api/v1/topics/{topicId}",
		"/api/v1/topics/{topicId}/messages",
		"/api/v1/topics/{topicId}/messages/{sequenceNumber}",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("matchingOrder = %v, want %v", got, want)
	}
}
