package rest

import (
	"reflect"
	"testing"
)

func TestNodeRoutes(t *testing.T) {
	want := [][]string{
		{"api", "v1", "topics", "", "messages"},
		{"api", "v1", "topics", "", "messages", ""},
		{"api", "v1", "topics", "messages", ""},
		{"api", "v1", "schedules"},
		{"api", "v1", "schedules", ""},
	}
	if !reflect.DeepEqual(nodeRoutes, want) {
		t.Errorf("nodeRoutes = %q", nodeRoutes)
	}
}

func TestWeakETag(t *testing.T) {
	// the etag package's value for the body "hello"
	if got, want := weakETag([]byte("hello")), `W/"5-qvTGHdzF6KLavt4PO0gs2a6pQ00"`; got != want {
		t.Errorf("weakETag = %s, want %s", got, want)
	}
}
