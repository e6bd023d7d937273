package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/world"
)

// jitImageManifest is a JIT RunnerDeployment of one runner, with the runner
// image line given (or none).
func jitImageManifest(image string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: jit-image
  annotations:
    arcflow.dev/jit-config: "true"
spec:
  replicas: 1
  template:
    spec:
      repository: octo-org/app
      labels: [linux, jit-image]
%s`, image)
}

// A JIT pool on summerwind's image, whose entrypoint needs a registration
// token and never reads a JIT configuration, is told so (RunnerImageUnfit,
// with a Warning event) and no runner of it comes online; with the image
// left out, the default (GitHub's image with run.sh) starts, and the
// condition goes.
func TestAJITPoolOnSummerwindsImageIsToldAndTheDefaultStarts(t *testing.T) {
	parallel(t)
	const ns, rd = "jit-image", "jit-image"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 1,
	})
	unfit := func(field string) string { return conditionField(ctx, ns, "rdeploy", rd, "RunnerImageUnfit", field) }

	require.NoError(t, w.Apply(ctx, jitImageManifest("      image: summerwind/actions-runner:latest\n")))
	require.Eventually(t, func() bool { return unfit("reason") == "TokenOnlyImage" }, 30*time.Second, 100*time.Millisecond,
		"the RunnerImageUnfit condition")
	require.Equal(t, "True", unfit("status"))
	require.Contains(t, unfit("message"), `command: ["/home/runner/run.sh"]`)
	require.Equal(t, "True", acceptedField(ctx, ns, "rdeploy", rd, "status"), "the pool runs")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=TokenOnlyImage", "-o", "name")
	require.NoError(t, err)
	require.NotEmpty(t, strings.Fields(events), "a Warning event")
	require.Eventually(t, func() bool { return len(w.Runners.PodTimes()) >= 1 }, 30*time.Second, 100*time.Millisecond, "a first pod")
	require.Never(t, func() bool { return w.IdleRunners() > 0 }, 5*time.Second, 100*time.Millisecond,
		"a runner started from summerwind's entrypoint")
	failed := len(w.Runners.PodTimes())
	require.LessOrEqual(t, failed, 2, "the pool backs off after a pod that failed before it took a job (10 s, then 20 s), not one pod per failure")
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(ctx, "get", "rdeploy", rd, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="RunnersFailing")].status}`)
		return out == "True"
	}, 30*time.Second, 100*time.Millisecond, "and says so: RunnersFailing")

	require.NoError(t, w.Apply(ctx, jitImageManifest("")))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 90*time.Second, 100*time.Millisecond,
		"the default image's runner starts")
	require.Eventually(t, func() bool { return unfit("status") == "" }, 30*time.Second, 100*time.Millisecond,
		"the condition goes with the image")
	pods, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=" + rd})
	require.NoError(t, err)
	found := false
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			if c.Name == "runner" && c.Image == activities.DefaultJITRunnerImage {
				found = true
				require.Equal(t, []string{activities.JITRunnerCommand}, c.Command)
			}
		}
	}
	require.True(t, found, "a pod of GitHub's runner image")
	t.Logf("%d pods failed on summerwind's image before the default's runner started", failed)
}
