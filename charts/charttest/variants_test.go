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
		"hosts, no middleware, docs alone": {"ingress": map[string]any{"hosts": []any{map[string]any{"host": "a.example.com"}, map[string]any{"host": "b.example.com"}}},
			"docs": map[string]any{"besideMirrorNode": false}, "global": map[string]any{"gateway": map[string]any{"enabled": true, "name": "mirror"}}},
		"a Gateway of another release, no GKE policy": {"gateway": map[string]any{"name": "{{ .Release.Name }}-gw", "gcp": map[string]any{"enabled": false}},
			"global": map[string]any{"gateway": map[string]any{"enabled": true}}},
		"scaled, inhibition on": {"hpa": map[string]any{"enabled": true}, "podDisruptionBudget": map[string]any{"enabled": true},
			"alertmanager": map[string]any{"inhibitRules": map[string]any{"enabled": true}}},
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
			if name == "every route off" && (len(find(objs, "IngressRoute")) > 0 || len(find(objs, "HTTPRoute")) > 0 || len(find(objs, "GRPCRoute")) > 0) {
				t.Error("routes rendered with every route off")
			}
		})
	}
	if _, err := tryRender(map[string]any{"config": map[string]any{"SHUTDOWN_GRACE": "1m"}, "terminationGracePeriodSeconds": 60}); err == nil {
		t.Error("a one-minute drain fit in sixty seconds")
	}
}
