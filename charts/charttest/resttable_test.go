package charttest

import (
	"strings"
	"testing"

	mqrest "mirrorql/rest"
)

// chartSwitch is the chart's routes.* switch that claims each route of
// mirrorql's routing table (mqrest.Routes).
var chartSwitch = map[string]string{
	"topic":              "topic",
	"schedules":          "schedules",
	"schedule":           "schedules",
	"topicMessages":      "topicMessages",
	"topicMessage":       "topicMessages",
	"messageByTimestamp": "messageByTimestamp",
}

// TestPathTableIsTheRoutingTable: the chart claims exactly the REST paths
// mirrorql's routing table matches, Express's way (mqrest.Match): every path
// of the table under /api/v1 that the router gives a route, the chart sends
// to mirrorql under that route's switch, and no other; and every route of
// the routing table has a switch and a path in the table.
func TestPathTableIsTheRoutingTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range pathTable {
		path := sanitized(t, c.path)
		if !strings.HasPrefix(strings.ToLower(path), "/api/v1/") || c.route == "docs" || strings.HasPrefix(strings.ToLower(path), "/api/v1/docs") {
			continue
		}
		r, ok := mqrest.Match(path)
		want := ""
		if ok {
			want = chartSwitch[r.Name]
			seen[r.Name] = true
		}
		if c.route != want {
			t.Errorf("%s: the chart's table says %q, the routing table's route is %q (%v)", c.path, c.route, want, ok)
		}
	}
	for _, r := range mqrest.Routes() {
		if chartSwitch[r.Name] == "" {
			t.Errorf("route %s (%s) has no switch of the chart", r.Name, r.Path)
		}
		if !seen[r.Name] {
			t.Errorf("route %s (%s) has no path in the chart's table", r.Name, r.Path)
		}
	}
}
