package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// A job a runner scale set assigned, whose runner is OOM-killed while it
// runs, is re-run once. The service names no workflow run (workflowRunId 0,
// as github.com often sends) and names the job by an id of its own: arcflow
// finds GitHub's job by its runner's name. A job that failed by itself is not
// re-run.
func TestAScaleSetsJobLostToInfrastructureIsRerun(t *testing.T) {
	parallel(t)
	const ns = "scaleset-lost"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 47,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second, RequestIDZero: true},
		JobDurations: func(j fakegithub.JobInfo) time.Duration {
			if j.Name == "lost" && j.RunAttempt == 1 {
				return 5 * time.Minute // until its runner is killed
			}
			return 2 * time.Second
		},
		JobConclusion: failsWhenNamedFails,
	})
	logLostJobsOnFailure(t, w, ns)
	manifest := strings.Replace(scaleSetManifest, "    arcflow.dev/scale-set: arc-app\n",
		"    arcflow.dev/scale-set: arc-app\n    arcflow.dev/rerun-lost-jobs: \"true\"\n", 1)
	require.NoError(t, w.Apply(ctx, manifest))
	heldSet(t, w, "the listener holds the set's session")

	fails := w.GitHub.QueueJob("octo-org/app", "fails", []string{"arc-app"})
	lost := w.GitHub.QueueJob("octo-org/app", "lost", []string{"arc-app"})
	var running fakegithub.JobInfo
	require.Eventually(t, func() bool {
		running, _ = w.GitHub.Job(lost.ID)
		return running.Status == "in_progress"
	}, 60*time.Second, 100*time.Millisecond, "the job runs")
	kube, err := stack.Kube()
	require.NoError(t, err)
	require.NoError(t, w.Runners.OOMKill(ctx, ns, podOf(t, ctx, kube, ns, running.RunnerName)))

	require.Eventually(t, func() bool {
		for _, j := range w.GitHub.Jobs() {
			if j.RunID == lost.RunID && j.Name == "lost" && j.RunAttempt == 2 {
				return j.Status == "completed" && j.Conclusion == "success"
			}
		}
		return false
	}, 2*time.Minute, 200*time.Millisecond, "the lost job re-run, and its new attempt done")
	reruns := w.GitHub.Reruns()
	require.Len(t, reruns, 1, "one re-run: %+v", reruns)
	require.Equal(t, lost.ID, reruns[0].JobID, "GitHub's id of the lost job, found by its runner")
	failed, _ := w.GitHub.Job(fails.ID)
	require.Equal(t, "failure", failed.Conclusion, "the job that failed by itself is not re-run")

	events, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=app,reason=JobRerun"})
	require.NoError(t, err)
	require.NotEmpty(t, events.Items, "the RunnerDeployment says the job was re-run")
	t.Logf("%s; calls: %v", events.Items[0].Message, w.GitHub.CallCounts())
}
