package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/world"
)

// finalCounts is what a run leaves behind once drained. A run with faults must
// leave exactly what the same workload leaves undisturbed.
type finalCounts struct {
	succeeded, failed int
	// What must be gone: runner pods and registration-token Secrets in the
	// namespace, runners registered at GitHub.
	pods, secrets, runners int
	// desired is the autoscaler's status.desiredReplicas; replicas the
	// RunnerDeployment's status.replicas.
	desired, replicas string
}

func (f finalCounts) orphans() int { return f.pods + f.secrets + f.runners }

func (f finalCounts) orphanText() string {
	return fmt.Sprintf("%d pods, %d Secrets, %d registered runners", f.pods, f.secrets, f.runners)
}

func (f finalCounts) String() string {
	return fmt.Sprintf("%d jobs succeeded, %d failed; %s; HRA desired %s, RunnerDeployment replicas %s",
		f.succeeded, f.failed, f.orphanText(), f.desired, f.replicas)
}

// readFinalCounts reads the counts from GitHub and the API server.
func readFinalCounts(ctx context.Context, s *session, w *world.World) (finalCounts, error) {
	var f finalCounts
	for _, j := range w.GitHub.Jobs() {
		if j.Conclusion == "success" {
			f.succeeded++
		} else {
			f.failed++
		}
	}
	f.runners = len(w.GitHub.Runners())
	runnerLabel := metav1.ListOptions{LabelSelector: activities.LabelRunner}
	pods, err := w.Kube.CoreV1().Pods(w.Namespace()).List(ctx, runnerLabel)
	if err != nil {
		return f, fmt.Errorf("list runner pods: %w", err)
	}
	secrets, err := w.Kube.CoreV1().Secrets(w.Namespace()).List(ctx, runnerLabel)
	if err != nil {
		return f, fmt.Errorf("list runner Secrets: %w", err)
	}
	f.pods, f.secrets = len(pods.Items), len(secrets.Items)
	if f.desired, err = s.stack.JSONPath(ctx, w.Namespace(), "hra", "chaos", "{.status.desiredReplicas}"); err != nil {
		return f, fmt.Errorf("read the HRA's status: %w", err)
	}
	if f.replicas, err = s.stack.JSONPath(ctx, w.Namespace(), "rdeploy", "chaos", "{.status.replicas}"); err != nil {
		return f, fmt.Errorf("read the RunnerDeployment's status: %w", err)
	}
	if f.replicas == "" {
		f.replicas = "0" // status.replicas is omitted at zero
	}
	return f, nil
}
