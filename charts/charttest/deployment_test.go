package charttest

import (
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	traefikv1 "github.com/traefik/traefik/v3/pkg/provider/kubernetes/crd/traefikio/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"mirrorql/config"
)

func deployment(t *testing.T, objs []object) *appsv1.Deployment {
	t.Helper()
	ds := find(objs, "Deployment")
	if len(ds) != 1 {
		t.Fatalf("%d Deployments, want 1", len(ds))
	}
	return typed(t, ds[0]).(*appsv1.Deployment)
}

// The pod runs as the mirror node's modules do: probed, locked down, sized,
// its credentials from Secrets, its settings ones the service knows, and
// given longer to stop than the service takes to drain.
func TestDeployment(t *testing.T) {
	for set := range valueSets {
		t.Run(set, func(t *testing.T) {
			d := deployment(t, renderSet(t, set))
			pod := d.Spec.Template.Spec
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers", len(pod.Containers))
			}
			c := pod.Containers[0]
			if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health/liveness" || p.HTTPGet.Port.String() != "http" {
				t.Errorf("liveness probe %+v", p)
			}
			if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health/readiness" || p.HTTPGet.Port.String() != "http" {
				t.Errorf("readiness probe %+v", p)
			}
			ports := map[string]int32{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
			}
			if ports["http"] != 8080 || ports["grpc"] != 5600 || len(ports) != 2 {
				t.Errorf("ports %v, want http 8080 and grpc 5600", ports)
			}
			ps, cs := pod.SecurityContext, c.SecurityContext
			if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil ||
				ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod security context %+v", ps)
			}
			if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
				cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
				cs.Capabilities == nil || len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" {
				t.Errorf("container security context %+v", cs)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("no %s request", r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("no %s limit", r)
				}
			}
			known := config.Names()
			grace := config.Defaults().ShutdownGrace
			fromSecret := map[string]bool{}
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, config.Prefix) && !known[e.Name] {
					t.Errorf("%s: the service refuses to start on a variable it does not know", e.Name)
				}
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					fromSecret[e.Name] = true
				}
				if strings.Contains(e.Value, "://") && strings.Contains(e.Value, "@") || strings.Contains(e.Value, "$(") {
					t.Errorf("%s: a URL with credentials, or one the kubelet puts together, in plain text", e.Name)
				}
				if e.Name == config.Prefix+"SHUTDOWN_GRACE" {
					g, err := time.ParseDuration(e.Value)
					if err != nil {
						t.Fatal(err)
					}
					grace = g
				}
			}
			// Beside a mirror node (both sets) the login comes from the REST
			// API's in the umbrella's Secret mirror-passwords, each part a
			// variable of its own.
			for _, v := range []string{"MIRRORQL_DB_HOST", "MIRRORQL_DB_NAME", "MIRRORQL_DB_USERNAME", "MIRRORQL_DB_PASSWORD"} {
				if !fromSecret[v] {
					t.Errorf("%s does not come from the Secret", v)
				}
			}
			if u := env(c.Env, config.Prefix+"DATABASE_URL"); u != "" {
				t.Errorf("%sDATABASE_URL %q beside the separate settings", config.Prefix, u)
			}
			if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
				t.Errorf("service links on: a Service named mirrorql or mirrorql-db would hand the pod MIRRORQL_ variables")
			}
			if set == "mirror-node" && (!fromSecret[config.Prefix+"REDIS_URL"] || !fromSecret[config.Prefix+"LIVE_REDIS_URL"]) {
				t.Errorf("the Redis URLs do not come from a Secret: %v", fromSecret)
			}
			pause := time.Duration(0)
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				pause = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			}
			if tg := pod.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second <= grace+pause {
				t.Errorf("terminationGracePeriodSeconds %v, want more than the drain %v and the pause %v", tg, grace, pause)
			}
		})
	}
}

func env(vars []corev1.EnvVar, name string) string {
	for _, e := range vars {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// The database from the mirror node's Secret mirror-passwords under the keys
// the umbrella chart writes for its rest module, each part a variable of its
// own (no URL put together); host and name from values win; TLS files from a
// Secret of the operator's, mounted; alone, a Secret with the whole URL.
func TestDatabase(t *testing.T) {
	c := deployment(t, render(t, map[string]any{})).Spec.Template.Spec.Containers[0]
	keys := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			if e.ValueFrom.SecretKeyRef.Name != "mirror-passwords" {
				t.Errorf("%s from Secret %s", e.Name, e.ValueFrom.SecretKeyRef.Name)
			}
			keys[e.Name] = e.ValueFrom.SecretKeyRef.Key
		}
	}
	want := map[string]string{"MIRRORQL_DB_HOST": "HIERO_MIRROR_REST_DB_HOST", "MIRRORQL_DB_NAME": "HIERO_MIRROR_REST_DB_NAME",
		"MIRRORQL_DB_USERNAME": "HIERO_MIRROR_REST_DB_USERNAME", "MIRRORQL_DB_PASSWORD": "HIERO_MIRROR_REST_DB_PASSWORD"}
	for v, k := range want {
		if keys[v] != k {
			t.Errorf("%s from key %q, want %q", v, keys[v], k)
		}
	}
	if p, m := env(c.Env, "MIRRORQL_DB_PORT"), env(c.Env, "MIRRORQL_DB_SSLMODE"); p != "5432" || m != "" {
		t.Errorf("port %q, sslmode %q; want 5432 and the service's default", p, m)
	}
	if len(c.VolumeMounts) != 0 {
		t.Errorf("volume mounts %+v without database.tls", c.VolumeMounts)
	}

	c = deployment(t, render(t, map[string]any{"database": map[string]any{"host": "{{ .Release.Name }}-citus-reads", "name": "mirror", "sslmode": "require"}})).Spec.Template.Spec.Containers[0]
	if h, n, m := env(c.Env, "MIRRORQL_DB_HOST"), env(c.Env, "MIRRORQL_DB_NAME"), env(c.Env, "MIRRORQL_DB_SSLMODE"); h != release+"-citus-reads" || n != "mirror" || m != "require" {
		t.Errorf("host %q, name %q, sslmode %q from values", h, n, m)
	}

	d := deployment(t, render(t, map[string]any{"database": map[string]any{"tls": map[string]any{"secret": "{{ .Release.Name }}-db-tls", "cert": "tls.crt", "key": "tls.key"}}}))
	c = d.Spec.Template.Spec.Containers[0]
	for v, want := range map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": "/etc/mirrorql/database-tls/ca.crt",
		"MIRRORQL_DB_TLS_CERT": "/etc/mirrorql/database-tls/tls.crt", "MIRRORQL_DB_TLS_KEY": "/etc/mirrorql/database-tls/tls.key"} {
		if got := env(c.Env, v); got != want {
			t.Errorf("%s %q, want %q", v, got, want)
		}
	}
	if m := c.VolumeMounts; len(m) != 1 || m[0].MountPath != "/etc/mirrorql/database-tls" || !m[0].ReadOnly {
		t.Errorf("volume mounts %+v", m)
	}
	if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Secret == nil || v[0].Secret.SecretName != release+"-db-tls" ||
		v[0].Secret.DefaultMode == nil || *v[0].Secret.DefaultMode != 0o440 || v[0].Name != c.VolumeMounts[0].Name {
		t.Errorf("volumes %+v", v)
	}
	c = deployment(t, render(t, map[string]any{"database": map[string]any{"tls": map[string]any{"secret": "ca-only"}}})).Spec.Template.Spec.Containers[0]
	if env(c.Env, "MIRRORQL_DB_TLS_CA") == "" || env(c.Env, "MIRRORQL_DB_TLS_CERT") != "" || env(c.Env, "MIRRORQL_DB_TLS_KEY") != "" {
		t.Errorf("a CA alone: %+v", c.Env)
	}

	d = deployment(t, render(t, map[string]any{"database": map[string]any{"urlSecret": map[string]any{"name": "mirrorql-database"},
		"tls": map[string]any{"secret": "db-tls"}}}))
	c = d.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "MIRRORQL_DB_") && e.Name != "MIRRORQL_DB_POOL_SIZE" {
			t.Errorf("%s set beside urlSecret", e.Name)
		}
		if e.Name == config.Prefix+"DATABASE_URL" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != "mirrorql-database" || e.ValueFrom.SecretKeyRef.Key != "MIRRORQL_DATABASE_URL") {
			t.Errorf("%s %+v", e.Name, e)
		}
	}
	if len(c.VolumeMounts) != 1 {
		t.Errorf("urlSecret with tls.secret: the files are not mounted for the URL to name: %+v", c.VolumeMounts)
	}
}

// A setting that carries a password is refused in values, and a grace the
// drain does not fit in is refused too.
func TestValuesRefused(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"database URL in config":        {"config": map[string]any{"DATABASE_URL": "postgres://u:secret@db/mirror_node"}},
		"password in config":            {"config": map[string]any{"db_password": "secret"}},
		"database host in config":       {"config": map[string]any{"DB_HOST": "db"}},
		"database.params":               {"database": map[string]any{"params": "sslmode=require"}},
		"a certificate without its key": {"database": map[string]any{"tls": map[string]any{"secret": "s", "cert": "tls.crt"}}},
		"redis URL in config":           {"config": map[string]any{"redis_url": "redis://:secret@redis:6379"}},
		"short grace":                   {"config": map[string]any{"SHUTDOWN_GRACE": "30s"}, "terminationGracePeriodSeconds": 30},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := tryRender(values); err == nil {
				t.Error("rendered")
			}
		})
	}
}

func TestServiceAndScaling(t *testing.T) {
	objs := renderSet(t, "mirror-node")
	services := map[string]*corev1.Service{}
	for _, o := range find(objs, "Service") {
		services[o.Name] = typed(t, o).(*corev1.Service)
	}
	svc := services[release+"-mirrorql"]
	if svc == nil {
		t.Fatalf("no Service %s-mirrorql among %v", release, services)
	}
	// Traefik speaks h2c to the gRPC port only: the http port carries the
	// WebSocket upgrades, which stay HTTP/1.1.
	ir := typed(t, find(objs, "IngressRoute")[0]).(*traefikv1.IngressRoute)
	for _, r := range ir.Spec.Routes {
		for _, b := range r.Services {
			if services[b.Name] == nil {
				t.Fatalf("route %s: no Service %s", r.Match, b.Name)
			}
			if (b.Scheme == "h2c") != (b.Port.String() == "grpc") {
				t.Errorf("route %s: port %s, scheme %q", r.Match, b.Port.String(), b.Scheme)
			}
		}
	}
	proto := map[string]string{}
	for _, p := range svc.Spec.Ports {
		if p.AppProtocol != nil {
			proto[p.Name] = *p.AppProtocol
		}
	}
	if proto["http"] != "http" || proto["grpc"] != "kubernetes.io/h2c" {
		t.Errorf("appProtocol %v", proto)
	}
	hpa := typed(t, find(objs, "HorizontalPodAutoscaler")[0]).(*autoscalingv2.HorizontalPodAutoscaler)
	m := hpa.Spec.Metrics
	if len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != corev1.ResourceCPU ||
		m[0].Resource.Target.AverageUtilization == nil || *m[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("HPA metrics %+v, want 80%% CPU", m)
	}
	sm := typed(t, find(objs, "ServiceMonitor")[0]).(*monitoringv1.ServiceMonitor)
	if e := sm.Spec.Endpoints; len(e) != 1 || e[0].Path != "/metrics" || e[0].Port != "http" {
		t.Errorf("ServiceMonitor endpoints %+v", e)
	}
	if d := deployment(t, objs); d.Spec.Replicas != nil {
		t.Errorf("replicas %d set beside the HPA", *d.Spec.Replicas)
	}
}

// The helm test asks readiness, then a route mirrorql serves, and with a
// host on the IngressRoute a path only mirrorql serves through it; its labels
// are the chart's with a name of its own, so the Service does not select it.
func TestHelmTest(t *testing.T) {
	for set, through := range map[string]string{
		"default":     "",
		"mirror-node": "https://mainnet.mirrornode.example.com/dashboard",
	} {
		t.Run(set, func(t *testing.T) {
			pods := find(renderSet(t, set), "Pod")
			if len(pods) != 1 {
				t.Fatalf("%d test pods", len(pods))
			}
			pod := typed(t, pods[0]).(*corev1.Pod)
			if pod.Annotations["helm.sh/hook"] != "test-success" && pod.Annotations["helm.sh/hook"] != "test" {
				t.Errorf("hook %q", pod.Annotations["helm.sh/hook"])
			}
			args := strings.Join(pod.Spec.Containers[0].Args, " ")
			if !strings.Contains(args, "/health/readiness") || !strings.Contains(args, "/api/v1/schedules") {
				t.Errorf("args %s", args)
			}
			if through != "" && !strings.Contains(args, through) {
				t.Errorf("args %s: not through %s", args, through)
			}
			if through == "" && strings.Contains(args, "://mainnet") {
				t.Errorf("args %s: through a host the values do not set", args)
			}
			if pod.Labels["app.kubernetes.io/name"] != "mirrorql-test" || pod.Labels["app.kubernetes.io/instance"] != release {
				t.Errorf("labels %v", pod.Labels)
			}
		})
	}
}

// Defaults as the mirror node's modules have them: no HPA and no
// PodDisruptionBudget unless turned on, inhibition rules off.
func TestModuleDefaults(t *testing.T) {
	objs := render(t, map[string]any{})
	for _, k := range []string{"HorizontalPodAutoscaler", "PodDisruptionBudget", "AlertmanagerConfig", "HTTPRoute", "HealthCheckPolicy"} {
		if len(find(objs, k)) > 0 {
			t.Errorf("%s rendered with the defaults", k)
		}
	}
}
