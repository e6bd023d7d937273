package sim

import (
	"context"
	"testing"
	"time"

	gh "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
)

// On a real kube-apiserver with kwok: each loss helper takes a busy runner the
// way Kubernetes would, its job fails as an expected loss, and only a plain
// deletion of a busy runner's pod is a violation. A job whose step fails ends
// "failure" and its runner exits normally.
func TestInfrastructureLossesOnTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver and kwok")
	}
	if _, err := localstack.ToolsDir(); err != nil {
		t.Skipf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stack, err := localstack.Start(ctx, localstack.Options{Kubernetes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.Stop()) })
	kube, err := stack.Kube()
	require.NoError(t, err)
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sim"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, AddNode(ctx, kube, "doomed"))

	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	client, err := gh.NewClient(gh.WithAuthToken("ghp_test"), gh.WithURLs(&srv.URL, &srv.URL))
	require.NoError(t, err)
	token, _, err := client.Actions.CreateRegistrationToken(ctx, "octo", "app")
	require.NoError(t, err)

	held := make(chan struct{})
	defer close(held)
	r := &Runners{Kube: kube, GitHub: srv, Namespace: "sim", RegisterDelay: time.Millisecond,
		JobDuration: func(fakegithub.JobInfo) time.Duration { return 10 * time.Millisecond },
		JobConclusion: func(j fakegithub.JobInfo) string {
			if j.Name == "fails" {
				return "failure" // its step exits 1
			}
			return "success"
		},
		JobHold: func(j fakegithub.JobInfo) <-chan struct{} {
			if j.Name == "fails" {
				return nil
			}
			return held // the others stay busy until infrastructure takes them
		}}
	events := make(chan fakegithub.JobEvent, 100)
	srv.OnJobEvent(func(e fakegithub.JobEvent) { r.Notice(e); events <- e })
	go func() { _ = r.Run(ctx) }()

	jobs := map[string]int64{}
	for pod, node := range map[string]string{"gone-with-node": "doomed", "evicted": localstack.FakeNodeName,
		"oom": localstack.FakeNodeName, "fails": localstack.FakeNodeName, "deleted": localstack.FakeNodeName} {
		createRunnerPod(ctx, t, kube, pod, node, token.GetToken())
		jobs[pod] = srv.QueueJob("octo/app", pod, []string{pod}).ID
	}
	seen := map[[2]any]fakegithub.JobEvent{}
	await := func(jobID int64, action string) fakegithub.JobEvent {
		t.Helper()
		for {
			if e, ok := seen[[2]any{jobID, action}]; ok {
				return e
			}
			select {
			case e := <-events:
				seen[[2]any{e.Job.ID, e.Action}] = e
			case <-ctx.Done():
				t.Fatalf("job %d never %s", jobID, action)
			}
		}
	}
	require.Equal(t, "failure", await(jobs["fails"], "completed").Job.Conclusion)
	_, err = localstack.WaitPod(ctx, kube, "sim", "fails", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	require.NoError(t, err, "a failed job's runner exits normally")
	for _, pod := range []string{"gone-with-node", "evicted", "oom", "deleted"} {
		await(jobs[pod], "in_progress")
	}
	require.Equal(t, "doomed", r.NodeOf("gone-with-node"))

	last := lastState(ctx, t, kube, "gone-with-node")
	require.NoError(t, r.LoseNode(ctx, "doomed"))
	require.Equal(t, "failure", await(jobs["gone-with-node"], "completed").Job.Conclusion)
	requireDisrupted(t, <-last, "DeletionByPodGC")
	_, err = kube.CoreV1().Nodes().Get(ctx, "doomed", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err))

	last = lastState(ctx, t, kube, "evicted")
	require.NoError(t, r.EvictPod(ctx, "sim", "evicted"))
	require.Equal(t, "failure", await(jobs["evicted"], "completed").Job.Conclusion)
	requireDisrupted(t, <-last, "EvictionByEvictionAPI")

	require.NoError(t, r.OOMKill(ctx, "sim", "oom"))
	require.Equal(t, "failure", await(jobs["oom"], "completed").Job.Conclusion)
	oom, err := localstack.WaitPod(ctx, kube, "sim", "oom", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	require.NoError(t, err)
	require.Equal(t, "OOMKilled", oom.Status.ContainerStatuses[0].State.Terminated.Reason)

	// Deletions reach the runners in order: once this one's violation is in,
	// the losses above were seen too, and none of them was one.
	require.NoError(t, kube.CoreV1().Pods("sim").Delete(ctx, "deleted", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(r.Violations()) > 0 }, time.Minute, 20*time.Millisecond)
	require.Len(t, r.Violations(), 1)
	require.Contains(t, r.Violations()[0], "sim/deleted")
	var causes []string
	for _, l := range r.Lost() {
		causes = append(causes, l.Runner+":"+l.Cause)
	}
	require.Equal(t, []string{"gone-with-node:" + LossNodeLost, "evicted:" + LossEvicted, "oom:" + LossOOMKilled}, causes)
}

func createRunnerPod(ctx context.Context, t *testing.T, kube kubernetes.Interface, name, node, token string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sim", Labels: map[string]string{activities.LabelRunner: ""}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "runner", Image: "runner", Env: []corev1.EnvVar{
				{Name: "RUNNER_NAME", Value: name}, {Name: activities.TokenSecretKey, Value: token}, {Name: "RUNNER_LABELS", Value: name},
			}}}},
	}
	_, err := kube.CoreV1().Pods("sim").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
}

// lastState watches a pod and yields its last state once it is deleted.
func lastState(ctx context.Context, t *testing.T, kube kubernetes.Interface, name string) <-chan *corev1.Pod {
	t.Helper()
	pod, err := kube.CoreV1().Pods("sim").Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	w, err := kube.CoreV1().Pods("sim").Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: pod.ResourceVersion})
	require.NoError(t, err)
	out := make(chan *corev1.Pod, 1)
	go func() {
		defer w.Stop()
		for e := range w.ResultChan() {
			if e.Type == watch.Deleted {
				out <- e.Object.(*corev1.Pod)
				return
			}
		}
		close(out)
	}()
	return out
}

func requireDisrupted(t *testing.T, pod *corev1.Pod, reason string) {
	t.Helper()
	require.NotNil(t, pod, "the pod was deleted")
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			require.Equal(t, corev1.ConditionTrue, c.Status)
			require.Equal(t, reason, c.Reason)
			return
		}
	}
	t.Fatalf("pod %s has no DisruptionTarget condition: %+v", pod.Name, pod.Status.Conditions)
}
