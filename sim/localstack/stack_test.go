package localstack_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/sim/kubelet"
	"github.com/arcflow/arcflow/sim/localstack"
)

var stack *localstack.Stack

func TestMain(m *testing.M) {
	os.Exit(localstack.Run(m, localstack.Options{Kubernetes: true, Temporal: true}, &stack))
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, err := stack.Kube()
	require.NoError(t, err)
	return client
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "runner", Image: "summerwind/actions-runner:latest"}},
		},
	}
}

func TestPodBecomesRunningOnTheFakeNode(t *testing.T) {
	ctx, client := testContext(t), kube(t)
	_, err := client.CoreV1().Pods("default").Create(ctx, pod("runs"), metav1.CreateOptions{})
	require.NoError(t, err)

	running, err := localstack.WaitPod(ctx, client, "default", "runs", localstack.PodRunningAndReady)
	require.NoError(t, err)
	require.Equal(t, localstack.FakeNodeName, running.Spec.NodeName, "the scheduler binds pods to the kwok node")
}

func TestEndPodFinishesAPodAsARunnerExit(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		t.Run(string(phase), func(t *testing.T) {
			ctx, client := testContext(t), kube(t)
			name := "ends-" + map[corev1.PodPhase]string{corev1.PodSucceeded: "ok", corev1.PodFailed: "failed"}[phase]
			_, err := client.CoreV1().Pods("default").Create(ctx, pod(name), metav1.CreateOptions{})
			require.NoError(t, err)
			_, err = localstack.WaitPod(ctx, client, "default", name, localstack.PodRunningAndReady)
			require.NoError(t, err)

			require.NoError(t, kubelet.EndPod(ctx, client, "default", name, phase))
			ended, err := localstack.WaitPod(ctx, client, "default", name, func(p *corev1.Pod) bool { return p.Status.Phase == phase })
			require.NoError(t, err)
			require.NotNil(t, ended.Status.ContainerStatuses[0].State.Terminated)

			// kwok must not flip it back to Running.
			got, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, phase, got.Status.Phase)
		})
	}
}

func TestDeletedPodGoesAway(t *testing.T) {
	ctx, client := testContext(t), kube(t)
	_, err := client.CoreV1().Pods("default").Create(ctx, pod("deleted"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = localstack.WaitPod(ctx, client, "default", "deleted", localstack.PodRunningAndReady)
	require.NoError(t, err)

	w, err := client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=deleted"})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, client.CoreV1().Pods("default").Delete(ctx, "deleted", metav1.DeleteOptions{}))
	for ev := range w.ResultChan() {
		if ev.Type == "DELETED" {
			break
		}
	}
	_, err = client.CoreV1().Pods("default").Get(ctx, "deleted", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "kwok completes the deletion of a pod on its node: %v", err)
}

func TestOneReplicaStatefulSetGetsItsPod(t *testing.T) {
	ctx, client := testContext(t), kube(t)
	labels := map[string]string{"app": "one-replica"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "one-replica", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: "one-replica",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod("").Spec,
			},
		},
	}
	sts.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	_, err := client.AppsV1().StatefulSets("default").Create(ctx, sts, metav1.CreateOptions{})
	require.NoError(t, err)

	// kube-controller-manager creates the pod; kwok runs it.
	running, err := localstack.WaitPod(ctx, client, "default", "one-replica-0", localstack.PodRunningAndReady)
	require.NoError(t, err)
	require.Equal(t, "StatefulSet", running.OwnerReferences[0].Kind)
}

// waitThenGreet is a workflow with a timer and an activity, to prove the dev server
// runs both.
func waitThenGreet(ctx workflow.Context, name string) (string, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return "", err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	err := workflow.ExecuteActivity(ctx, greet, name).Get(ctx, &greeting)
	return greeting, err
}

func greet(_ context.Context, name string) (string, error) { return "hello " + name, nil }

func TestTemporalRunsAWorkflowWithATimerAndAnActivity(t *testing.T) {
	ctx := testContext(t)
	c, err := client.Dial(client.Options{HostPort: stack.TemporalAddress})
	require.NoError(t, err)
	defer c.Close()

	w := worker.New(c, "localstack", worker.Options{})
	w.RegisterWorkflow(waitThenGreet)
	w.RegisterActivity(greet)
	require.NoError(t, w.Start())
	defer w.Stop()

	started := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "localstack/greet", TaskQueue: "localstack"}, waitThenGreet, "arcflow")
	require.NoError(t, err)
	var greeting string
	require.NoError(t, run.Get(ctx, &greeting))
	require.Equal(t, "hello arcflow", greeting)
	require.GreaterOrEqual(t, time.Since(started), time.Second, "the timer really fired on the server")

	history := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
	var timers, activities int
	for history.HasNext() {
		ev, err := history.Next()
		require.NoError(t, err)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			timers++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			activities++
		}
	}
	require.Equal(t, 1, timers)
	require.Equal(t, 1, activities)
}
