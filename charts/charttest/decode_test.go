package charttest

import (
	"fmt"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	traefikv1 "github.com/traefik/traefik/v3/pkg/provider/kubernetes/crd/traefikio/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kinds maps each apiVersion/kind the chart may render to a new value of its
// Go type. A kind missing here fails the test: every object is checked.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                                func() any { return &appsv1.Deployment{} },
	"v1/Service":                                        func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                                 func() any { return &corev1.ServiceAccount{} },
	"v1/ConfigMap":                                      func() any { return &corev1.ConfigMap{} },
	"v1/Pod":                                            func() any { return &corev1.Pod{} },
	"autoscaling/v2/HorizontalPodAutoscaler":            func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"policy/v1/PodDisruptionBudget":                     func() any { return &policyv1.PodDisruptionBudget{} },
	"gateway.networking.k8s.io/v1/HTTPRoute":            func() any { return &gatewayv1.HTTPRoute{} },
	"gateway.networking.k8s.io/v1/GRPCRoute":            func() any { return &gatewayv1.GRPCRoute{} },
	"monitoring.coreos.com/v1/ServiceMonitor":           func() any { return &monitoringv1.ServiceMonitor{} },
	"monitoring.coreos.com/v1/PrometheusRule":           func() any { return &monitoringv1.PrometheusRule{} },
	"traefik.io/v1alpha1/Middleware":                    func() any { return &traefikv1.Middleware{} },
	"traefik.io/v1alpha1/IngressRoute":                  func() any { return &traefikv1.IngressRoute{} },
	"networking.gke.io/v1/HealthCheckPolicy":            func() any { return &gkeHealthCheckPolicy{} },
	"monitoring.coreos.com/v1alpha1/AlertmanagerConfig": func() any { return &monitoringv1alpha1.AlertmanagerConfig{} },
}

// decodeStrict decodes a manifest into out as the API server's strict field
// validation would: an unknown field, a field in the wrong case or a field
// given twice is an error.
func decodeStrict(doc []byte, out any) error {
	// YAMLToJSONStrict refuses a key given twice in a mapping, which the
	// conversion to JSON would otherwise drop silently.
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, out, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("strict decoding: %v", strict)
	}
	return nil
}

// typed decodes o into its Go type.
func typed(t *testing.T, o object) any {
	t.Helper()
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(o.YAML, &head); err != nil {
		t.Fatal(err)
	}
	newObj, ok := kinds[head.APIVersion+"/"+head.Kind]
	if !ok {
		t.Fatalf("%s: %s/%s has no Go type to check it against", o.Template, head.APIVersion, head.Kind)
	}
	v := newObj()
	if err := decodeStrict(o.YAML, v); err != nil {
		t.Fatalf("%s (%s %s): %v\n%s", o.Template, o.Kind, o.Name, err, o.YAML)
	}
	return v
}

// Every rendered object decodes strictly, hooks (the helm test's Pod)
// included: Helm's kube client and kubectl refuse what fails here.
func TestDecodeStrict(t *testing.T) {
	for set := range valueSets {
		t.Run(set, func(t *testing.T) {
			objs := renderSet(t, set)
			seen := map[string]bool{}
			hooks := 0
			for _, o := range objs {
				typed(t, o)
				seen[o.Kind] = true
				if strings.Contains(string(o.YAML), "helm.sh/hook:") {
					hooks++
				}
			}
			if hooks == 0 {
				t.Error("no hook decoded")
			}
			// The defaults need Traefik's CRDs (the IngressRoute); the
			// mirror node's values bring every object the chart has.
			want := []string{"Deployment", "Service", "ServiceAccount", "IngressRoute", "Pod"}
			if set == "mirror-node" {
				want = append(want, "HTTPRoute", "GRPCRoute", "ServiceMonitor", "PrometheusRule", "Middleware", "ConfigMap",
					"HorizontalPodAutoscaler", "PodDisruptionBudget", "AlertmanagerConfig", "HealthCheckPolicy")
			}
			for _, k := range want {
				if !seen[k] {
					t.Errorf("no %s rendered", k)
				}
			}
		})
	}
}

// The strict decoder is what catches a misspelt field: prove it does.
func TestDecodeStrictRejects(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, targetport: http}]}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {portz: []}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: x, name: y}\n",
		// a key twice in a block mapping, as the test Pod's labels once had it
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    app.kubernetes.io/name: a\n    app.kubernetes.io/name: a-test\n",
	} {
		if err := decodeStrict([]byte(doc), &corev1.Service{}); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}

// gkeHealthCheckPolicy is the part of GKE's HealthCheckPolicy
// (networking.gke.io/v1) the chart renders, with the field names of GKE's
// documentation; decoded strictly, a misspelt field fails.
type gkeHealthCheckPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Default struct {
			CheckIntervalSec   *int `json:"checkIntervalSec,omitempty"`
			TimeoutSec         *int `json:"timeoutSec,omitempty"`
			HealthyThreshold   *int `json:"healthyThreshold,omitempty"`
			UnhealthyThreshold *int `json:"unhealthyThreshold,omitempty"`
			LogConfig          *struct {
				Enabled bool `json:"enabled"`
			} `json:"logConfig,omitempty"`
			Config struct {
				Type            string `json:"type"`
				HTTPHealthCheck *struct {
					PortSpecification string `json:"portSpecification,omitempty"`
					Port              int    `json:"port,omitempty"`
					Host              string `json:"host,omitempty"`
					RequestPath       string `json:"requestPath,omitempty"`
					Response          string `json:"response,omitempty"`
					ProxyHeader       string `json:"proxyHeader,omitempty"`
				} `json:"httpHealthCheck,omitempty"`
			} `json:"config"`
		} `json:"default"`
		TargetRef struct {
			Group string `json:"group"`
			Kind  string `json:"kind"`
			Name  string `json:"name"`
		} `json:"targetRef"`
	} `json:"spec"`
}
