package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/kubelet"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

const repoScope = "octo/app"

func startRunner(t *testing.T, ctx context.Context, w *arcflowWorld, ns, name string, ephemeral bool) client.WorkflowRun {
	t.Helper()
	spec := v1alpha1.RunnerSpec{RunnerConfig: v1alpha1.RunnerConfig{
		Repository: repoScope, Labels: []string{"linux", "e2e"}, Ephemeral: ptr.To(ephemeral),
	}}
	in := workflows.RunnerInput{
		Pod:       activities.RunnerPodInput{Namespace: ns, Name: name, Pool: "e2e", Kind: v1alpha1.KindRunnerDeployment, Spec: spec, GitHubURL: w.client.RunnerURL()},
		Scope:     github.Scope{Repository: repoScope},
		Ephemeral: ephemeral,
	}
	run, err := w.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: contract.RunnerWorkflowID(ns, name), TaskQueue: contract.TaskQueue,
	}, workflows.RunnerWorkflow, in)
	require.NoError(t, err)
	return run
}

// awaitPhase waits until the runner workflow's state query reports the phase. A
// query has no push form, so this asks every 100 ms.
func awaitPhase(t *testing.T, ctx context.Context, w *arcflowWorld, run client.WorkflowRun, phase workflows.RunnerPhase) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, err := w.temporal.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), contract.QueryState)
		if err != nil {
			return false
		}
		var state workflows.RunnerState
		return v.Get(&state) == nil && state.Phase == phase
	}, time.Minute, 100*time.Millisecond, "runner never reached %s", phase)
}

func history(t *testing.T, ctx context.Context, w *arcflowWorld, run client.WorkflowRun) []*historypb.HistoryEvent {
	iter := w.temporal.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	return events
}

func TestStaticRunnerRegistersThenUnregistersBeforeItsPodIsDeleted(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	w := startWorld(t, "runner-static")
	createNamespace(t, ctx, "runner-static")

	run := startRunner(t, ctx, w, "runner-static", "static-1", false)
	awaitPhase(t, ctx, w, run, workflows.PhaseIdle)
	registered, ok := w.github.Runner("static-1")
	require.True(t, ok)
	require.Equal(t, "repos/octo/app", registered.Scope)
	require.Equal(t, []string{"linux", "e2e"}, registered.Labels)

	pod, err := w.kube.CoreV1().Pods("runner-static").Get(ctx, "static-1", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
	var tokenRef *corev1.SecretKeySelector
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == activities.TokenSecretKey {
			tokenRef = e.ValueFrom.SecretKeyRef
		}
	}
	require.NotNil(t, tokenRef, "the token comes from a Secret")
	secret, err := w.kube.CoreV1().Secrets("runner-static").Get(ctx, tokenRef.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "e2e", secret.Labels[activities.LabelPool], "the pool's token Secret")
	require.Equal(t, "true", secret.Labels[activities.LabelPoolToken])
	require.NotEmpty(t, secret.Data[activities.TokenSecretKey])

	// Record when the pod starts going away, from the API server's own events.
	podWatch, err := w.kube.CoreV1().Pods("runner-static").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=static-1"})
	require.NoError(t, err)
	defer podWatch.Stop()
	deletedAt := make(chan time.Time, 1)
	go func() {
		for ev := range podWatch.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) {
				deletedAt <- time.Now()
				return
			}
		}
	}()

	w.github.ResetCalls()
	require.NoError(t, w.temporal.SignalWorkflow(ctx, run.GetID(), "", contract.SignalStop, workflows.StopRequest{Reason: "e2e"}))
	var done workflows.RunnerDone
	require.NoError(t, run.Get(ctx, &done))
	require.Equal(t, workflows.EndStopped, done.Reason)

	var removedAt time.Time
	for _, c := range w.github.Calls() {
		if c.Method == "DELETE" {
			require.Equal(t, 204, c.Status)
			removedAt = c.At
		}
	}
	require.False(t, removedAt.IsZero(), "RemoveRunner was called")
	podGone := <-deletedAt
	require.True(t, removedAt.Before(podGone), "unregistered (%v) before the pod was deleted (%v)", removedAt, podGone)
	_, still := w.github.Runner("static-1")
	require.False(t, still)
	_, err = w.kube.CoreV1().Secrets("runner-static").Get(ctx, tokenRef.Name, metav1.GetOptions{})
	require.NoError(t, err, "the pool's token Secret stays for its next runner")

	events := history(t, ctx, w, run)
	t.Logf("static runner: %d history events; GitHub calls by endpoint after registration: %v", len(events), w.github.CallCounts())
	requireNoTokenIn(t, w, events)
}

func TestEphemeralRunnerFinishesItsJobWithoutRemoveRunner(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	w := startWorld(t, "runner-ephemeral")
	createNamespace(t, ctx, "runner-ephemeral")

	run := startRunner(t, ctx, w, "runner-ephemeral", "eph-1", true)
	awaitPhase(t, ctx, w, run, workflows.PhaseIdle)

	// A job runs on it; then the runner exits, as an ephemeral runner does.
	job := w.github.QueueJob(repoScope, "build", []string{"linux"})
	_, err := w.github.StartJob(job.ID, "eph-1")
	require.NoError(t, err)
	_, err = w.github.CompleteJob(job.ID, "success")
	require.NoError(t, err)
	require.NoError(t, kubelet.EndPod(ctx, w.kube, "runner-ephemeral", "eph-1", corev1.PodSucceeded))

	var done workflows.RunnerDone
	require.NoError(t, run.Get(ctx, &done))
	require.Equal(t, workflows.EndCompleted, done.Reason)
	counts := w.github.CallCounts()
	require.Zero(t, counts["DELETE /repos/{owner}/{repo}/actions/runners/{id}"], "GitHub removed the runner itself")

	events := history(t, ctx, w, run)
	t.Logf("ephemeral runner: %d history events; GitHub calls by endpoint: %v", len(events), counts)
	requireNoTokenIn(t, w, events)
}

// requireNoTokenIn proves that no registration token the fake GitHub ever issued
// appears anywhere in a workflow history.
func requireNoTokenIn(t *testing.T, w *arcflowWorld, events []*historypb.HistoryEvent) {
	t.Helper()
	var all strings.Builder
	for _, ev := range events {
		data, err := protojson.Marshal(ev)
		require.NoError(t, err)
		all.Write(data)
	}
	text := all.String()
	require.NotEmpty(t, w.github.IssuedTokens())
	for _, token := range w.github.IssuedTokens() {
		require.NotContains(t, text, token)
		// Payloads are base64 inside the JSON: check that form too.
		require.NotContains(t, text, base64Of(token))
	}
}
