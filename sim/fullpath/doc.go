// Package fullpath is the full-path scenario that test/e2e runs on the Temporal dev
// server and test/cluster on a Temporal cluster with PostgreSQL: signed
// workflow_job webhooks, the autoscaler, the pool, simulated runners taking the
// jobs, and the scale-down to zero.
package fullpath
