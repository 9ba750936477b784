package rest

import (
	"testing"

	"mirrorql/app"
	"mirrorql/model"
)

func TestNextLink(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		query string
		key   string
		order model.Order
		last  string
		want  string // "" means null
	}{
		{name: "no params: key added at the end", path: "/api/v1/topics/0.0.7/messages", query: "",
			key: "timestamp", order: model.Asc, last: "1234567890.000000025",
			want: "/api/v1/topics/0.0.7/messages?timestamp=gt:1234567890.000000025"},
		{name: "non-matching bound kept in place, new one appended to it",
			path: "/api/v1/topics/7/messages", query: "sequencenumber=gt:2&timestamp=lte:1234567890.000000006&limit=2",
			key: "timestamp", order: model.Asc, last: "1234567890.000000004",
			want: "/api/v1/topics/7/messages?sequencenumber=gt:2&timestamp=lte:1234567890.000000006&timestamp=gt:1234567890.000000004&limit=2"},
		{name: "single replaced value moves to the end (desc)",
			path: "/api/v1/topics/7/messages", query: "sequencenumber=gt:2&timestamp=lte:1236567890.000000006&limit=3&order=desc",
			key: "timestamp", order: model.Desc, last: "1234567890.000000004",
			want: "/api/v1/topics/7/messages?sequencenumber=gt:2&limit=3&order=desc&timestamp=lt:1234567890.000000004"},
		{name: "repeated key keeps its place even when all values are replaced",
			path: "/api/v1/topics/7/messages", query: "timestamp=gt:1&timestamp=gte:2&limit=2",
			key: "timestamp", order: model.Asc, last: "3.000000000",
			want: "/api/v1/topics/7/messages?timestamp=gt:3.000000000&limit=2"},
		{name: "plain value advances (DECISIONS 7)",
			path: "/api/v1/topics/7/messages", query: "timestamp=5&limit=1",
			key: "timestamp", order: model.Asc, last: "5.000000000",
			want: "/api/v1/topics/7/messages?timestamp=5&timestamp=gt:5.000000000&limit=1"},
		{name: "ne value advances (DECISIONS 7)",
			path: "/api/v1/topics/7/messages", query: "timestamp=ne:5&limit=1",
			key: "timestamp", order: model.Desc, last: "9.000000000",
			want: "/api/v1/topics/7/messages?timestamp=ne:5&timestamp=lt:9.000000000&limit=1"},
		{name: "empty range gives null",
			path: "/api/v1/topics/7/messages", query: "timestamp=lte:5&limit=1",
			key: "timestamp", order: model.Asc, last: "5.000000000", want: ""},
		{name: "touching range is not empty",
			path: "/api/v1/topics/7/messages", query: "timestamp=lte:5.000000001&limit=1",
			key: "timestamp", order: model.Asc, last: "5.000000000",
			want: "/api/v1/topics/7/messages?timestamp=lte:5.000000001&timestamp=gt:5.000000000&limit=1"},
		{name: "trailing slash removed, path kept as written",
			path: "/API/v1/Topics/7/messages/", query: "Limit=1",
			key: "timestamp", order: model.Asc, last: "1.000000000",
			want: "/API/v1/Topics/7/messages?limit=1&timestamp=gt:1.000000000"},
		{name: "schedules", path: "/api/v1/schedules", query: "limit=2",
			key: "schedule.id", order: model.Asc, last: "0.0.3000",
			want: "/api/v1/schedules?limit=2&schedule.id=gt:0.0.3000"},
		{name: "schedules empty range uses encoded ids", path: "/api/v1/schedules", query: "schedule.id=lt:0.0.3001&limit=2",
			key: "schedule.id", order: model.Asc, last: "0.0.3000", want: ""},
	}
	ids := model.EntityDefaults{}
	bounds := map[string]func(string) (int64, bool){
		"timestamp": timestampBound,
		"schedule.id": func(s string) (int64, bool) {
			id, err := ids.ParseEntityID(s, true)
			return int64(id), err == nil
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got := nextLink(tt.path, q, tt.key, app.After(tt.order, tt.last), bounds[tt.key])
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("got %q, want null", *got)
			case tt.want != "" && (got == nil || *got != tt.want):
				t.Errorf("got %v, want %q", got, tt.want)
			}
		})
	}
}

func FuzzNextLink(f *testing.F) {
	f.Add("timestamp=gt:1&timestamp=lt:9&limit=2", "5.000000000", true)
	f.Add("timestamp=ne:gt:5&order=desc", "1.1", false)
	f.Fuzz(func(t *testing.T, raw, last string, asc bool) {
		q, err := ParseQuery(raw)
		if err != nil {
			return
		}
		order := model.Desc
		if asc {
			order = model.Asc
		}
		before := q.Encode()
		link := nextLink("/p", q, "timestamp", app.After(order, last), timestampBound)
		if q.Encode() != before {
			t.Fatal("nextLink modified the request query")
		}
		if link != nil && len(*link) < len("/p?timestamp=") {
			t.Fatalf("short link %q", *link)
		}
	})
}
