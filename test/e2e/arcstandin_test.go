package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/world"
)

// arcStandInLabel marks the runner pods the ARC stand-in made.
const arcStandInLabel = "e2e.arcflow.dev/arc-stand-in"

// arcStandIn is NOT ARC: there is no ARC in this repository. It stands in for
// the part of ARC's legacy controller-manager that turns an HRA's
// capacityReservations into runners, as the reference describes it, for one
// webhook-driven HRA (no metrics, no scheduled overrides) and its
// RunnerDeployment of the same name:
//
//   - HRA controller (reference §3.2): desired = minReplicas + the sum of
//     replicas of the capacityReservations whose expirationTime is after now,
//     clamped to [min, max], written to the RunnerDeployment's spec.replicas;
//   - Runner controllers (§3.6, §5): keep that many live ephemeral runner
//     pods of the RunnerDeployment's repository, labels and nodeSelector,
//     with the registration token in plain env as ARC puts it, and delete a
//     pod whose runner exited; a new pod is held back while the last
//     creation is newer than the newest effectiveTime and under 10 minutes
//     old (ARC's recreation guard), so a finished runner is not replaced on
//     a count that still includes its job.
//
// ARC reacts to HRA changes through a watch; the stand-in reads every 250 ms.
// It scales up only: it never deletes an idle runner.
type arcStandIn struct {
	w        *world.World
	dyn      dynamic.Interface
	ns, name string
	token    string
	started  time.Time

	mu       sync.Mutex
	created  []time.Time // when each of its pods was created
	desired  int
	lastSync time.Time
	errs     []string
}

// startARCStandIn starts the stand-in; it stops with the test.
func startARCStandIn(t *testing.T, ctx context.Context, w *world.World, ns, name, repo string) *arcStandIn {
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	a := &arcStandIn{w: w, dyn: dyn, ns: ns, name: name, token: registrationToken(t, w.GitHub, "repos/"+repo), started: time.Now()}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := a.reconcile(runCtx); err != nil && runCtx.Err() == nil {
				a.mu.Lock()
				a.errs = append(a.errs, err.Error())
				a.mu.Unlock()
			}
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = w.Kube.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: arcStandInLabel})
	})
	return a
}

// reconcile is one pass of the stand-in's controllers.
func (a *arcStandIn) reconcile(ctx context.Context) error {
	u, err := a.dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(a.ns).Get(ctx, a.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get hra: %w", err)
	}
	var hra v1alpha1.HorizontalRunnerAutoscaler
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra); err != nil {
		return fmt.Errorf("read hra: %w", err)
	}
	now := time.Now()
	minReplicas, maxReplicas := 1, 0
	if hra.Spec.MinReplicas != nil && *hra.Spec.MinReplicas >= 0 {
		minReplicas = *hra.Spec.MinReplicas
	}
	if hra.Spec.MaxReplicas != nil {
		maxReplicas = *hra.Spec.MaxReplicas
	}
	desired, newest := minReplicas, time.Time{}
	for _, r := range hra.Spec.CapacityReservations {
		if r.ExpirationTime.After(now) {
			desired += r.Replicas
		}
		if r.EffectiveTime.After(newest) {
			newest = r.EffectiveTime.Time
		}
	}
	desired = max(minReplicas, min(desired, maxReplicas))
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": desired}})
	rd, err := a.dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace(a.ns).Patch(ctx, a.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("scale runnerdeployment: %w", err)
	}
	var target v1alpha1.RunnerDeployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rd.Object, &target); err != nil {
		return fmt.Errorf("read runnerdeployment: %w", err)
	}
	pods, err := a.w.Kube.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: arcStandInLabel})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	live := 0
	for _, p := range pods.Items {
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			_ = a.w.Kube.CoreV1().Pods(a.ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		case p.DeletionTimestamp == nil:
			live++
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.desired = desired
	if live >= desired || (!a.lastSync.IsZero() && a.lastSync.After(newest) && now.Before(a.lastSync.Add(10*time.Minute))) {
		return nil
	}
	for range desired - live {
		if err := a.createPod(ctx, &target); err != nil {
			return err
		}
	}
	a.lastSync = time.Now()
	return nil
}

// createPod makes one ephemeral runner pod of the RunnerDeployment's template.
func (a *arcStandIn) createPod(ctx context.Context, rd *v1alpha1.RunnerDeployment) error {
	spec := rd.Spec.Template.Spec
	name := fmt.Sprintf("%s-arc-%d", a.name, len(a.created))
	labels := ""
	for i, l := range spec.Labels {
		if i > 0 {
			labels += ","
		}
		labels += l
	}
	env := []corev1.EnvVar{
		{Name: "RUNNER_ORG", Value: spec.Organization}, {Name: "RUNNER_REPO", Value: spec.Repository}, {Name: "RUNNER_ENTERPRISE"},
		{Name: "RUNNER_LABELS", Value: labels}, {Name: "RUNNER_GROUP"}, {Name: "RUNNER_EPHEMERAL", Value: "true"},
		{Name: "RUNNER_NAME", Value: name}, {Name: "RUNNER_TOKEN", Value: a.token}, {Name: "GITHUB_URL", Value: a.w.GitHub.URL + "/"},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			activities.LabelRunner: "", activities.LabelRunnerDeployment: a.name, arcStandInLabel: "true"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: spec.NodeSelector,
			Containers: []corev1.Container{{Name: "runner", Image: "summerwind/actions-runner:latest", Env: env}}},
	}
	if _, err := a.w.Kube.CoreV1().Pods(a.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create runner pod %s: %w", name, err)
	}
	a.created = append(a.created, time.Now())
	return nil
}

// pods is how many runner pods the stand-in created, and when it created the
// last of them.
func (a *arcStandIn) pods() (int, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.created) == 0 {
		return 0, time.Time{}
	}
	return len(a.created), a.created[len(a.created)-1]
}

// errors are the passes that failed, for the test's log.
func (a *arcStandIn) errors() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.errs...)
}
