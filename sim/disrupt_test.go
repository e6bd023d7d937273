package sim

import (
	"context"
	"testing"

	gh "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// runnerPod is a Running runner pod of runner name on node, as kwok leaves it,
// with a docker sidecar when asked.
func runnerPod(name, node, token string, sidecar bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci", UID: types.UID("uid-" + name), Labels: map[string]string{activities.LabelRunner: ""}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "runner", Env: []corev1.EnvVar{
			{Name: "RUNNER_NAME", Value: name}, {Name: activities.TokenSecretKey, Value: token}, {Name: "RUNNER_LABELS", Value: name},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "runner", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
	if sidecar {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "docker"})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: "docker", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return pod
}

// busyRunners is a fake GitHub whose runners, one per pod, each run a job,
// and Runners that play them on a fake clientset (no informer: the helpers
// act on their own).
func busyRunners(t *testing.T, objects func(token string) []*corev1.Pod, extra ...*corev1.Node) (*Runners, *kubefake.Clientset, map[string]fakegithub.JobInfo) {
	t.Helper()
	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := gh.NewClient(gh.WithAuthToken("ghp_test"), gh.WithURLs(&srv.URL, &srv.URL))
	require.NoError(t, err)
	tok, _, err := c.Actions.CreateRegistrationToken(context.Background(), "octo", "app")
	require.NoError(t, err)
	kube := kubefake.NewClientset()
	for _, n := range extra {
		_, err := kube.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	jobs := map[string]fakegithub.JobInfo{}
	for _, pod := range objects(tok.GetToken()) {
		_, err := kube.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
		if _, isRunner := pod.Labels[activities.LabelRunner]; !isRunner {
			continue
		}
		_, err = srv.Register(tok.GetToken(), pod.Name, []string{pod.Name}, true)
		require.NoError(t, err)
		job := srv.QueueJob("octo/app", "build", []string{pod.Name})
		jobs[pod.Name], err = srv.StartJob(job.ID, pod.Name)
		require.NoError(t, err)
	}
	return &Runners{Kube: kube, GitHub: srv}, kube, jobs
}

func jobState(t *testing.T, srv *fakegithub.Server, id int64) fakegithub.JobInfo {
	t.Helper()
	for _, j := range srv.Jobs() {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no job %d", id)
	return fakegithub.JobInfo{}
}

func TestLoseNodeFailsItsJobsAndDoesWhatPodGCDoes(t *testing.T) {
	nodes := []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	r, kube, jobs := busyRunners(t, func(token string) []*corev1.Pod {
		return []*corev1.Pod{runnerPod("a", "n1", token, false), runnerPod("b", "n2", token, false), other}
	}, nodes...)
	ctx := context.Background()

	require.NoError(t, r.LoseNode(ctx, "n1"))

	_, err := kube.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the Node object is gone")
	for _, name := range []string{"a", "web"} {
		var updated *corev1.Pod
		var deleted *clienttesting.DeleteActionImpl
		for _, a := range kube.Actions() {
			switch a := a.(type) {
			case clienttesting.UpdateActionImpl:
				if p := a.Object.(*corev1.Pod); a.Subresource == "status" && p.Name == name {
					updated = p
				}
			case clienttesting.DeleteActionImpl:
				if a.Resource.Resource == "pods" && a.Name == name {
					deleted = &a
				}
			}
		}
		require.NotNil(t, updated, "pod GC marks %s failed first", name)
		require.Equal(t, corev1.PodFailed, updated.Status.Phase)
		cond := updated.Status.Conditions[len(updated.Status.Conditions)-1]
		require.Equal(t, corev1.DisruptionTarget, cond.Type)
		require.Equal(t, corev1.ConditionTrue, cond.Status)
		require.Equal(t, "DeletionByPodGC", cond.Reason)
		require.NotNil(t, deleted, "then deletes %s", name)
		require.Equal(t, int64(0), *deleted.DeleteOptions.GracePeriodSeconds)
	}
	_, err = kube.CoreV1().Pods("ci").Get(ctx, "b", metav1.GetOptions{})
	require.NoError(t, err, "a pod of another node stays")

	require.Equal(t, "failure", jobState(t, r.GitHub, jobs["a"].ID).Conclusion)
	require.Equal(t, "in_progress", jobState(t, r.GitHub, jobs["b"].ID).Status)
	lost := r.Lost()
	require.Len(t, lost, 1)
	require.Equal(t, LostJob{JobID: jobs["a"].ID, Runner: "a", Pod: "ci/a", Node: "n1", Cause: LossNodeLost, At: lost[0].At}, lost[0])
	require.Empty(t, r.Violations())
	require.Zero(t, r.Interrupted())
}

func TestOOMKillFailsTheRunnerContainerAndItsJob(t *testing.T) {
	r, kube, jobs := busyRunners(t, func(token string) []*corev1.Pod {
		return []*corev1.Pod{runnerPod("alone", "n1", token, false), runnerPod("dind", "n1", token, true)}
	})
	ctx := context.Background()

	for _, name := range []string{"alone", "dind"} {
		require.NoError(t, r.OOMKill(ctx, "ci", name))
		pod, err := kube.CoreV1().Pods("ci").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		exit := pod.Status.ContainerStatuses[0].State.Terminated
		require.NotNil(t, exit)
		require.Equal(t, "OOMKilled", exit.Reason)
		require.Equal(t, int32(137), exit.ExitCode)
		require.Equal(t, "failure", jobState(t, r.GitHub, jobs[name].ID).Conclusion)
		runner, registered := r.GitHub.Runner(name)
		require.False(t, registered && runner.Online, "the runner is gone")
	}
	alone, _ := kube.CoreV1().Pods("ci").Get(ctx, "alone", metav1.GetOptions{})
	require.Equal(t, corev1.PodFailed, alone.Status.Phase, "restartPolicy Never, no container left")
	dind, _ := kube.CoreV1().Pods("ci").Get(ctx, "dind", metav1.GetOptions{})
	require.Equal(t, corev1.PodRunning, dind.Status.Phase, "the docker sidecar still runs")

	require.Len(t, r.Lost(), 2)
	require.Equal(t, LossOOMKilled, r.Lost()[1].Cause)
	require.Empty(t, r.Violations())
	require.Error(t, r.OOMKill(ctx, "ci", "missing"))
}
