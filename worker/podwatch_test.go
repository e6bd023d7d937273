package worker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

func TestOnlyChangesARunnerActsOnAreSignalled(t *testing.T) {
	pod := func(phase corev1.PodPhase, ready, deleting bool) activities.PodState {
		return activities.PodState{UID: "u", Exists: true, Phase: phase, Ready: ready, Deleting: deleting}
	}
	gone := activities.PodState{UID: "u", ResourceVersion: "deleted/9"}
	unschedulable := pod(corev1.PodPending, false, false)
	unschedulable.Unschedulable = true
	var added activities.PodState
	for _, c := range []struct {
		name     string
		old, cur activities.PodState
		want     bool
	}{
		{"a new Pending pod: its runner created it", added, pod(corev1.PodPending, false, false), false},
		{"a pod first seen Running (a restarted watcher)", added, pod(corev1.PodRunning, true, false), true},
		{"a pod first seen Succeeded", added, pod(corev1.PodSucceeded, false, false), true},
		{"a new pod no node can take", added, unschedulable, true},
		{"a Pending pod found unschedulable", pod(corev1.PodPending, false, false), unschedulable, true},
		{"an unschedulable pod scheduled after all", unschedulable, pod(corev1.PodPending, false, false), true},
		{"Pending to Running and Ready", pod(corev1.PodPending, false, false), pod(corev1.PodRunning, true, false), true},
		{"a change of nothing the runner reads", pod(corev1.PodRunning, true, false), pod(corev1.PodRunning, true, false), false},
		{"Running to Succeeded", pod(corev1.PodRunning, true, false), pod(corev1.PodSucceeded, false, false), true},
		{"a Running pod deleted by someone", pod(corev1.PodRunning, true, false), pod(corev1.PodRunning, true, true), true},
		{"a Running pod gone", pod(corev1.PodRunning, true, true), gone, true},
		{"a Succeeded pod being deleted by its runner", pod(corev1.PodSucceeded, false, false), pod(corev1.PodSucceeded, false, true), false},
		{"a Failed pod gone", pod(corev1.PodFailed, false, false), gone, false},
	} {
		require.Equal(t, c.want, signalWorthy(c.old, c.cur), c.name)
	}
}

// The pod GC marks a lost node's pod DisruptionTarget and then deletes it:
// the deleted pod's signal carries that cause, for the runner to report.
func TestADeletedPodsSignalCarriesItsLossCause(t *testing.T) {
	w := NewPodWatcher(nil, nil, "", nil)
	defer w.queue.ShutDown()
	pod := fullPod(func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: "DeletionByPodGC"})
	})
	w.enqueue(pod, activities.PodStateOf(pod), true)
	require.Equal(t, 1, w.queue.Len())
	item, _ := w.queue.Get()
	require.Equal(t, activities.PodState{UID: "uid-1", ResourceVersion: "deleted/42", Cause: activities.CauseNodeLost}, item.state)
}

// A pod marked ready-untold is signalled only when its runner needs it: its
// end, its deletion, a change of whether a node can take it.
func TestAReadyUntoldPodIsSignalledOnlyWhatItsRunnerNeeds(t *testing.T) {
	pod := func(phase corev1.PodPhase, ready bool) activities.PodState {
		return activities.PodState{UID: "u", Exists: true, Phase: phase, Ready: ready}
	}
	unschedulable := pod(corev1.PodPending, false)
	unschedulable.Unschedulable = true
	deleting := pod(corev1.PodRunning, true)
	deleting.Deleting = true
	var added activities.PodState
	for _, c := range []struct {
		name     string
		old, cur activities.PodState
		want     bool
	}{
		{"a pod first seen Running", added, pod(corev1.PodRunning, true), false},
		{"Pending to Running and Ready", pod(corev1.PodPending, false), pod(corev1.PodRunning, true), false},
		{"Ready lost", pod(corev1.PodRunning, true), pod(corev1.PodRunning, false), false},
		{"a new pod no node can take", added, unschedulable, true},
		{"Running to Succeeded", pod(corev1.PodRunning, true), pod(corev1.PodSucceeded, false), true},
		{"a pod first seen Failed", added, pod(corev1.PodFailed, false), true},
		{"a Running pod deleted by someone", pod(corev1.PodRunning, true), deleting, true},
		{"a Running pod gone", deleting, activities.PodState{UID: "u"}, true},
	} {
		require.Equal(t, c.want, podSignalWorthy(c.old, c.cur, true), c.name)
		require.Equal(t, signalWorthy(c.old, c.cur), podSignalWorthy(c.old, c.cur, false), "%s: unmarked pods as before", c.name)
	}
}

// A pool's start creates a runner's pod just before the runner's workflow, so
// a young pod's signal that finds no workflow is tried again; an older one's
// is dropped (not arcflow's runner, or its workflow ended).
func TestAYoungPodsSignalWaitsForItsWorkflow(t *testing.T) {
	temporal := mocks.NewClient(t)
	temporal.On("SignalWorkflow", mock.Anything, "runner/ci/app-abc", "", contract.SignalPod, mock.Anything).
		Return(serviceerror.NewNotFound("workflow not found"))
	w := NewPodWatcher(nil, temporal, "", nil)
	defer w.queue.ShutDown()
	ended := activities.PodState{UID: "uid-1", Exists: true, Phase: corev1.PodFailed}

	young := podSignal{namespace: "ci", name: "app-abc", state: ended, created: time.Now().Add(-time.Second)}
	require.ErrorIs(t, w.signal(context.Background(), young), errNoWorkflowYet)
	old := young
	old.created = time.Now().Add(-2 * workflowStartGrace)
	require.NoError(t, w.signal(context.Background(), old))
}
