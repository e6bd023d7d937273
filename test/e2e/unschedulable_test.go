package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/sim/world"
)

// unschedulableRunners is a RunnerDeployment of one runner that no node can take
// while nodeSelector names a label no node has.
func unschedulableRunners(nodeSelector string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: nowhere
spec:
  replicas: 1
  template:
    spec:
      repository: octo-org/app
      labels: [linux, nowhere]
      nodeSelector: %s
`, nodeSelector)
}

// A runner whose pod no node can take gives its slot up after the unschedulable
// timeout (5 s here), is replaced with the backoff, and shows in the
// RunnersFailing condition; once the template is fixed, the next runner
// registers within one backoff step.
func TestARunnerThatCannotBeScheduledIsReplacedWithBackoff(t *testing.T) {
	parallel(t)
	const ns = "unschedulable"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 1,
		Env: []string{"ARCFLOW_RUNNER_UNSCHEDULABLE_TIMEOUT=5s"},
	})
	require.NoError(t, w.Apply(ctx, unschedulableRunners(`{"arcflow.dev/no-such-node": "true"}`)))
	pods := func() string { // the pods' names, as kubectl get -o name
		list, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "runner-deployment-name=nowhere"})
		if err != nil {
			return ""
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, "pod/"+p.Name)
		}
		return strings.Join(names, "\n")
	}
	require.Eventually(t, func() bool { return pods() != "" }, 30*time.Second, 100*time.Millisecond, "a first pod")
	first := strings.TrimSpace(pods())
	require.Eventually(t, func() bool { return !strings.Contains(pods(), first) }, 30*time.Second, 200*time.Millisecond,
		"the unschedulable pod is deleted after the timeout")
	requireRunnersFailing(t, ctx, w, "nowhere", "PodUnschedulable", "pod-unschedulable")
	// The next runner comes 10 s after the failure, not at once.
	require.Never(t, func() bool { return pods() != "" }, 6*time.Second, 100*time.Millisecond, "a replacement within the backoff")

	fixed := time.Now()
	require.NoError(t, w.Apply(ctx, unschedulableRunners(`{}`)))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond,
		"the fixed template's runner registers")
	recovered := time.Since(fixed)
	// At worst a replacement of the old template was due first: its timeout,
	// then one backoff step (20 s), then the pod's start.
	require.Less(t, recovered, 40*time.Second, "recovered within one backoff step")
	requireRunnersRecovered(t, ctx, w, "nowhere")
	t.Logf("registered %v after the fix", recovered.Round(100*time.Millisecond))
}
