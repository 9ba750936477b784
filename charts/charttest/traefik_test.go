package charttest

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// traefikMiddleware is the part of Traefik's Middleware CRD
// (traefik.io/v1alpha1) the chart renders, with the field names of Traefik's
// own types. Traefik's Go module brings its whole proxy along, so the few
// fields are spelt out here; decoded strictly, a field Traefik does not know
// still fails.
type traefikMiddleware struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Chain *struct {
			Middlewares []struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace,omitempty"`
			} `json:"middlewares"`
		} `json:"chain,omitempty"`
		CircuitBreaker *struct {
			Expression       string `json:"expression"`
			CheckPeriod      string `json:"checkPeriod,omitempty"`
			FallbackDuration string `json:"fallbackDuration,omitempty"`
			RecoveryDuration string `json:"recoveryDuration,omitempty"`
			ResponseCode     int    `json:"responseCode,omitempty"`
		} `json:"circuitBreaker,omitempty"`
		Retry *struct {
			Attempts        int    `json:"attempts"`
			InitialInterval string `json:"initialInterval,omitempty"`
		} `json:"retry,omitempty"`
	} `json:"spec"`
}
