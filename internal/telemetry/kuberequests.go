package telemetry

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// KubernetesRequests counts the worker's own Kubernetes API requests by verb and
// resource, so the cost of a job in API writes can be measured.
type KubernetesRequests struct {
	total *prometheus.CounterVec
}

// NewKubernetesRequests registers arcflow_kubernetes_requests_total with reg.
func NewKubernetesRequests(reg prometheus.Registerer) *KubernetesRequests {
	k := &KubernetesRequests{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arcflow_kubernetes_requests_total",
		Help: "Kubernetes API requests made by this process, by verb (get, list, watch, create, update, patch, delete), resource and status code.",
	}, []string{"verb", "resource", "code"})}
	reg.MustRegister(k.total)
	return k
}

// Instrument makes every client built from cfg count its requests.
func (k *KubernetesRequests) Instrument(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			code := "error"
			if err == nil {
				code = strconv.Itoa(resp.StatusCode)
			}
			k.total.WithLabelValues(requestVerb(r), requestResource(r.URL.Path), code).Inc()
			return resp, err
		})
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// requestVerb names a request the way the API server's audit log does.
func requestVerb(r *http.Request) string {
	switch r.Method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	if r.URL.Query().Get("watch") == "true" {
		return "watch"
	}
	return "get"
}

// requestResource finds the resource (and subresource) in an API path such as
// /api/v1/namespaces/ns/pods/name/status or /apis/group/v1/things.
func requestResource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "other"
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			return "namespaces"
		}
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return "discovery"
	}
	if len(parts) >= 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}
