package restdiff

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(38, 500), Generate(38, 500)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave other requests")
	}
	if reflect.DeepEqual(Generate(38, 1500)[1000:], Generate(39, 1500)[1000:]) {
		t.Error("another seed gave the same random requests")
	}
	classes := map[string]bool{}
	for _, r := range Generate(38, 3000) {
		classes[r.Via] = true
		if r.Target == "" || r.Target[0] != '/' {
			t.Errorf("target %q", r.Target)
		}
	}
	for _, c := range []string{"ordinary", "path value", "path suffix", "path insert", "segment spelling", "prefix", "parameter", "qs syntax", "size", "random"} {
		if !classes[c] {
			t.Errorf("no %s requests", c)
		}
	}
}

func TestDiff(t *testing.T) {
	page := Answer{Status: 200, ContentType: "application/json; charset=utf-8", JSON: json.RawMessage(`{"a":1,"b":[1,2]}`)}
	tests := []struct {
		name string
		got  Answer
		want string // a part of the difference, "" for none
	}{
		{"key order ignored", Answer{Status: 200, ContentType: page.ContentType, JSON: json.RawMessage(`{"b":[1,2],"a":1}`)}, ""},
		{"array order kept", Answer{Status: 200, ContentType: page.ContentType, JSON: json.RawMessage(`{"a":1,"b":[2,1]}`)}, "body"},
		{"status", Answer{Status: 400, ContentType: page.ContentType, JSON: page.JSON}, "status 400, want 200"},
		{"text against JSON", Answer{Status: 200, ContentType: page.ContentType, Text: `{"a":1}x`}, "body"},
		{"a header", Answer{Status: 200, ContentType: page.ContentType, JSON: page.JSON, Link: "</x>"}, "link"},
	}
	for _, tc := range tests {
		d := Diff(page, tc.got)
		if (tc.want == "") != (d == "") || !strings.Contains(d, tc.want) {
			t.Errorf("%s: %q", tc.name, d)
		}
	}
}

func TestDecide(t *testing.T) {
	errBody := func(m string) json.RawMessage {
		return json.RawMessage(`{"_status":{"messages":[{"message":"` + m + `"}]}}`)
	}
	emptyPage := json.RawMessage(`{"messages":[],"links":{"next":null}}`)
	tests := []struct {
		target     string
		node, ours Answer
		want       string
	}{
		{"/api/v1/topics/7", Answer{Status: 404}, Answer{Status: 200}, DecisionRestJava},
		{"/api/v1/schedules/%zz", Answer{Status: 500}, Answer{Status: 400, JSON: errBody("Invalid parameter: scheduleid")}, DecisionUpstream5xx},
		{"/api/v1/topics/7/messages?timestamp=9999999999.999999999", Answer{Status: 503}, Answer{Status: 400, JSON: errBody("x")}, DecisionTimestampRange},
		{"/api/v1/topics/7/messages/1.5", Answer{Status: 400}, Answer{Status: 404}, DecisionTimestampPath},
		{"/api/v1/topics/7/messages/0", Answer{Status: 400}, Answer{Status: 404}, DecisionSequenceZero},
		{"/api/v1/topics/7/messages?sequencenumber=gt:0", Answer{Status: 400}, Answer{Status: 200}, DecisionSequenceZero},
		{"/api/v1/topics/7/messages?encoding=ne:utf-8", Answer{Status: 200}, Answer{Status: 400}, DecisionEncodingOp},
		{"/api/v1/topics/8/messages", Answer{Status: 200, JSON: emptyPage}, Answer{Status: 404, JSON: errBody("No such topic id - 8")}, DecisionNoSuchTopic},
		{"/api/v1/schedules?schedule.id=ne:100", Answer{Status: 200, Link: "<a>"}, Answer{Status: 200, Link: "<b>"}, DecisionNextAdvances},
		{"/api/v1/topics/7/messages?sequencenumber=ne:1", Answer{Status: 400, JSON: errBody("Not equal (ne) operator is not supported for sequencenumber")}, Answer{Status: 200}, DecisionLookupNe},
		// what no decision covers stays unexplained
		{"/api/v1/topics/7/messages?limit=2", Answer{Status: 200, Link: "<a>"}, Answer{Status: 200, Link: "<b>"}, ""},
		{"/api/v1/schedules/1/x", Answer{Status: 404}, Answer{Status: 400, JSON: errBody("x")}, ""},
		{"/api/v1/topics/7/messages/1", Answer{Status: 500}, Answer{Status: 500, JSON: errBody("Internal error")}, ""},
	}
	for _, tc := range tests {
		c := Case{Request: Request{Target: tc.target}, Node: tc.node, Ours: &tc.ours}
		if got := Decide(&c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
}
