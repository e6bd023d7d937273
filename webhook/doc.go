// Package webhook is the echo server that receives GitHub workflow_job webhooks,
// verifies them and signals the matching autoscaler workflow.
package webhook
