// Package workflows holds arcflow's Temporal workflows: one autoscaler per
// HorizontalRunnerAutoscaler, one pool per RunnerDeployment or RunnerSet, and one
// runner workflow per runner. Workflow code is deterministic and does no I/O; the
// scaling math lives in plain functions beside the workflows.
package workflows
