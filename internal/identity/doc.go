// Package identity names this process to Temporal and in its Kubernetes
// Leases: host and PID, the same string in both, so the leader can match an
// expired worker Lease to the activities Temporal says that worker holds.
package identity
