package charttest

import (
	"strings"
	"testing"

	traefikv1 "github.com/traefik/traefik/v3/pkg/provider/kubernetes/crd/traefikio/v1alpha1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// umbrellaValues are what a hedera-mirror umbrella release gives mirrorql
// as one more module: the umbrella's global.* as its values.yaml and an
// operator set them, and the module's switch as its values-prod.yaml sets
// them for the others.
const umbrellaValues = `
global:
  gateway:
    enabled: true
    hostnames: [mainnet.mirrornode.example.com]
    http: {enabled: true, port: 80}
    https: {enabled: true, port: 443}
  hostname: mainnet.mirrornode.example.com
  image:
    registry: registry.example.com
  middleware: true
  namespaceOverride: mirror-apps
mirrorql:
  enabled: true
  alertmanager:
    inhibitRules:
      enabled: true
`

// renderAsSubchart renders mirrorql as a dependency (alias mirrorql) of an
// umbrella chart named like the mirror node's, in release "mirror", and
// returns mirrorql's objects.
func renderAsSubchart(t *testing.T, values string) []object {
	t.Helper()
	sub, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	umbrella := &chart.Chart{Metadata: &chart.Metadata{
		APIVersion: chart.APIVersionV2, Name: "hedera-mirror", Version: "0.154.0", Type: "application",
		Dependencies: []*chart.Dependency{{Name: "mirrorql", Alias: "mirrorql", Condition: "mirrorql.enabled", Version: ">=0.1.0"}},
	}}
	umbrella.AddDependency(sub)
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(umbrella, vals); err != nil {
		t.Fatal(err)
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}
	rv, err := chartutil.ToRenderValues(umbrella, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(umbrella, rv)
	if err != nil {
		t.Fatal(err)
	}
	return objects(t, files, "hedera-mirror/charts/mirrorql/templates/")
}

// As a subchart of the umbrella, mirrorql takes its global.*: the hostname
// (its IngressRoute's Host and the helm test's), the middleware chain, the
// image registry, the namespace, the Gateway (named after the release, as
// the umbrella names its own), and the database login from mirror-passwords.
func TestSubchart(t *testing.T) {
	objs := renderAsSubchart(t, umbrellaValues)
	if len(objs) == 0 {
		t.Fatal("mirrorql rendered nothing as a subchart")
	}
	for _, o := range objs {
		typed(t, o)
		var meta struct{ Metadata struct{ Namespace string } }
		if err := yaml.Unmarshal(o.YAML, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Metadata.Namespace != "mirror-apps" {
			t.Errorf("%s %s in namespace %q, want global.namespaceOverride", o.Kind, o.Name, meta.Metadata.Namespace)
		}
	}
	d := deployment(t, objs)
	if d.Name != "mirror-mirrorql" {
		t.Errorf("Deployment %s, want mirror-mirrorql", d.Name)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, "registry.example.com/") {
		t.Errorf("image %s, want global.image.registry's", c.Image)
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && strings.HasPrefix(e.Name, "MIRRORQL_DB_") &&
			e.ValueFrom.SecretKeyRef.Name != "mirror-passwords" {
			t.Errorf("%s from %s", e.Name, e.ValueFrom.SecretKeyRef.Name)
		}
	}

	irs := find(objs, "IngressRoute")
	if len(irs) != 1 {
		t.Fatalf("%d IngressRoutes", len(irs))
	}
	ir := typed(t, irs[0]).(*traefikv1.IngressRoute)
	for _, r := range ir.Spec.Routes {
		if !strings.HasPrefix(r.Match, "Host(`mainnet.mirrornode.example.com`) && ") {
			t.Errorf("route %s without global.hostname", r.Match)
		}
		if len(r.Middlewares) == 0 || r.Middlewares[0].Name != "mirror-mirrorql" || r.Middlewares[0].Namespace != "mirror-apps" {
			t.Errorf("route %s: middlewares %+v, want the chain", r.Match, r.Middlewares)
		}
	}
	if len(find(objs, "Middleware")) == 0 || len(find(objs, "AlertmanagerConfig")) != 1 {
		t.Error("no middleware or no inhibition rules")
	}
	for _, o := range find(objs, "HTTPRoute") {
		for _, p := range typed(t, o).(*gatewayv1.HTTPRoute).Spec.ParentRefs {
			if p.Name != release {
				t.Errorf("HTTPRoute %s attaches to %s, want the umbrella's Gateway %s", o.Name, p.Name, release)
			}
		}
	}
	pod := typed(t, find(objs, "Pod")[0]).(*corev1.Pod)
	if args := strings.Join(pod.Spec.Containers[0].Args, " "); !strings.Contains(args, "http://mainnet.mirrornode.example.com/dashboard") {
		t.Errorf("helm test args %s: not through global.hostname", args)
	}
}

// Installed beside the umbrella as a release of its own, the routes attach
// to the umbrella's Gateway by gateway.name (its release, not this one).
func TestGatewayName(t *testing.T) {
	objs := render(t, map[string]any{"gateway": map[string]any{"name": "umbrella"},
		"global": map[string]any{"gateway": map[string]any{"enabled": true}}})
	kinds := 0
	for _, o := range append(find(objs, "HTTPRoute"), find(objs, "GRPCRoute")...) {
		kinds++
		var r struct {
			Spec struct{ ParentRefs []struct{ Name string } }
		}
		if err := yaml.Unmarshal(o.YAML, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Spec.ParentRefs) != 1 || r.Spec.ParentRefs[0].Name != "umbrella" {
			t.Errorf("%s %s: parentRefs %+v", o.Kind, o.Name, r.Spec.ParentRefs)
		}
	}
	if kinds == 0 {
		t.Fatal("no Gateway API route rendered")
	}
}
