package charttest

import "testing"

// Values an operator may well set render into valid objects too.
func TestValueVariants(t *testing.T) {
	off := map[string]any{}
	for _, r := range []string{"topic", "topicMessages", "messageByTimestamp", "schedules", "graphql", "explorer", "dashboard", "docs", "consensus"} {
		off[r] = false
	}
	for name, values := range map[string]map[string]any{
		"every route off": {"routes": off, "global": map[string]any{"gateway": map[string]any{"enabled": true}}},
		"fixed replicas": {"hpa": map[string]any{"enabled": false}, "replicas": 3, "podDisruptionBudget": map[string]any{"enabled": false},
			"serviceAccount": map[string]any{"create": false}},
		"no pause, drain in minutes": {"lifecycle": nil, "config": map[string]any{"SHUTDOWN_GRACE": "1m"}, "terminationGracePeriodSeconds": 75},
		"https only, everything on": {"global": map[string]any{"gateway": map[string]any{"enabled": true, "http": map[string]any{"enabled": false},
			"https": map[string]any{"enabled": true}}, "middleware": true},
			"prometheusRules": map[string]any{"enabled": true}, "serviceMonitor": map[string]any{"enabled": true},
			"grafana": map[string]any{"dashboards": map[string]any{"enabled": true}}, "ingress": map[string]any{"enabled": false},
			"config": map[string]any{"LIVE_MAX_SUBSCRIPTIONS": 2000}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, values)
			for _, o := range objs {
				typed(t, o)
			}
			if name == "every route off" && (len(find(objs, "Ingress")) > 0 || len(find(objs, "HTTPRoute")) > 0 || len(find(objs, "GRPCRoute")) > 0) {
				t.Error("routes rendered with every route off")
			}
		})
	}
	if _, err := tryRender(map[string]any{"config": map[string]any{"SHUTDOWN_GRACE": "1m"}, "terminationGracePeriodSeconds": 60}); err == nil {
		t.Error("a one-minute drain fit in sixty seconds")
	}
}
