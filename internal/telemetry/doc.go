// Package telemetry exports what arcflow's Kubernetes and Temporal clients do as
// Prometheus metrics. Every arcflow process uses it, the webhook server included,
// so it links neither workflow code nor a typed Kubernetes client.
package telemetry
