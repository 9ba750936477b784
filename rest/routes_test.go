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
