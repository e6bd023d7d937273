// Package worker wires arcflow's Temporal worker and its Kubernetes watcher, which
// turns custom-resource and pod changes into workflow signals.
package worker
