package charttest

import (
	"fmt"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kinds maps each apiVersion/kind the chart may render to a new value of its
// Go type. A kind missing here fails the test: every object is checked.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"v1/ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1/Pod":                                  func() any { return &corev1.Pod{} },
	"networking.k8s.io/v1/Ingress":            func() any { return &networkingv1.Ingress{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"gateway.networking.k8s.io/v1/HTTPRoute":  func() any { return &gatewayv1.HTTPRoute{} },
	"gateway.networking.k8s.io/v1/GRPCRoute":  func() any { return &gatewayv1.GRPCRoute{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
	"monitoring.coreos.com/v1/PrometheusRule": func() any { return &monitoringv1.PrometheusRule{} },
	"traefik.io/v1alpha1/Middleware":          func() any { return &traefikMiddleware{} },
}

// decodeStrict decodes a manifest into out as the API server's strict field
// validation would: an unknown field, a field in the wrong case or a field
// given twice is an error.
func decodeStrict(doc []byte, out any) error {
	j, err := yaml.YAMLToJSON(doc)
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

func TestDecodeStrict(t *testing.T) {
	for set := range valueSets {
		t.Run(set, func(t *testing.T) {
			objs := renderSet(t, set)
			seen := map[string]bool{}
			for _, o := range objs {
				typed(t, o)
				seen[o.Kind] = true
			}
			// The defaults stand alone (no CRDs needed); the mirror node's
			// values bring every object the chart has.
			want := []string{"Deployment", "Service", "ServiceAccount", "Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Pod"}
			if set == "mirror-node" {
				want = append(want, "HTTPRoute", "GRPCRoute", "ServiceMonitor", "PrometheusRule", "Middleware", "ConfigMap")
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
	} {
		if err := decodeStrict([]byte(doc), &corev1.Service{}); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}
