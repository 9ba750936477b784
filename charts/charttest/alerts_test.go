package charttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// tool finds a command the tests need. In CI (CI=true) a missing tool fails
// the test: what CI does not run, it must not report as passed.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	t.Skipf("%s is not installed (Debian: apt-get install prometheus)", name)
	return ""
}

// rules renders the PrometheusRule with values and returns its rules.
func rules(t *testing.T, values map[string]any) *monitoringv1.PrometheusRule {
	t.Helper()
	objs := find(render(t, values), "PrometheusRule")
	if len(objs) != 1 {
		t.Fatalf("%d PrometheusRules rendered, want 1", len(objs))
	}
	return typed(t, objs[0]).(*monitoringv1.PrometheusRule)
}

// rulesFile writes the PrometheusRule's groups as a Prometheus rule file,
// which is what the operator hands Prometheus.
func rulesFile(t *testing.T, dir string, pr *monitoringv1.PrometheusRule) string {
	t.Helper()
	b, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The alerts of each value set are valid rules for Prometheus, each with a
// summary and a description.
func TestAlertsCheck(t *testing.T) {
	promtool := tool(t, "promtool")
	for set, file := range valueSets {
		t.Run(set, func(t *testing.T) {
			values := readValues(t, file)
			values["prometheusRules"] = map[string]any{"enabled": true}
			pr := rules(t, values)
			for _, g := range pr.Spec.Groups {
				for _, r := range g.Rules {
					if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
						t.Errorf("%s: wants both a summary and a description", r.Alert)
					}
				}
			}
			out, err := exec.Command(promtool, "check", "rules", rulesFile(t, t.TempDir(), pr)).CombinedOutput()
			if err != nil {
				t.Fatalf("promtool check rules: %v\n%s", err, out)
			}
		})
	}
}

// promtool's unit tests (testdata/alerts-test.yaml) fire each alert on
// synthetic series and keep each quiet on healthy ones; every alert the
// chart has is expected both ways there.
func TestAlerts(t *testing.T) {
	promtool := tool(t, "promtool")
	pr := rules(t, readValues(t, valueSets["mirror-node"]))
	spec, err := os.ReadFile("testdata/alerts-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			Name          string
			AlertRuleTest []struct {
				Alertname string
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		}
	}
	if err := yaml.Unmarshal(spec, &tests); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("%s: testdata/alerts-test.yaml must expect it to fire (%v) and to stay quiet (%v)", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
	dir := t.TempDir()
	rulesFile(t, dir, pr)
	if err := os.WriteFile(filepath.Join(dir, "alerts-test.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "alerts-test.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// metricNames lists the metric names a PromQL expression reads: each
// identifier before a selector's brace, an absent() included.
var selectorName = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

func exprMetrics(expr string) []string {
	var out []string
	for _, m := range selectorName.FindAllStringSubmatch(expr, -1) {
		switch m[1] {
		case "by", "without", "on", "ignoring", "group_left", "group_right":
			continue
		}
		out = append(out, m[1])
	}
	return out
}
