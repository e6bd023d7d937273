package worker

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

type budgetState struct {
	throttled bool
	reset     time.Time
}

func (b *budgetState) ThrottledSince(time.Time) bool { return b.throttled }
func (b *budgetState) BudgetReset() time.Time        { return b.reset }

// kubeWithNamedEvents is a fake clientset that names the events it is given
// (the fake does not generate names, and two unnamed events would collide).
func kubeWithNamedEvents() *kubefake.Clientset {
	kube := kubefake.NewClientset()
	named := 0
	kube.PrependReactor("create", "events", func(action k8stesting.Action) (bool, runtime.Object, error) {
		e := action.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		named++
		e.Name = e.GenerateName + strconv.Itoa(named)
		return false, nil, nil
	})
	return kube
}

// While arcflow throttles itself the HRA says so in a GitHubBudget condition
// and one Warning event; once the window reset, the condition turns True with
// one Normal event. The Accepted condition's writes keep it.
func TestGitHubBudgetConditionFollowsTheThrottling(t *testing.T) {
	hra := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": kindHRA,
		"metadata": map[string]any{"name": "app", "namespace": "ci", "generation": int64(1)},
	}}
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
	}, hra)
	kube := kubeWithNamedEvents()
	w := &ResourceWatcher{Dynamic: dyn, Kube: kube, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	current := func() *unstructured.Unstructured {
		u, err := dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Get(ctx, "app", metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	events := func() []corev1.Event {
		list, err := kube.CoreV1().Events("ci").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return list.Items
	}
	budget := &budgetState{}
	_, changed := budgetCondition(current(), budget, time.Time{})
	require.False(t, changed, "an HRA never throttled has no condition")

	budget.throttled, budget.reset = true, time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	c, changed := budgetCondition(current(), budget, time.Time{})
	require.True(t, changed)
	w.writeBudgetCondition(ctx, current(), c)
	got, ok := conditionOf(current(), gitHubBudget)
	require.True(t, ok)
	require.Equal(t, metav1.ConditionFalse, got.Status)
	require.Equal(t, "Throttled", got.Reason)
	require.Contains(t, got.Message, "2026-11-26T06:00:00Z")
	_, changed = budgetCondition(current(), budget, time.Time{})
	require.False(t, changed, "written once while it lasts")
	require.Len(t, events(), 1)
	require.Equal(t, corev1.EventTypeWarning, events()[0].Type)
	require.Equal(t, "GitHubBudgetThrottled", events()[0].Reason)

	w.setConditions(ctx, kindHRA, current(), metav1.ConditionTrue, "Accepted", "accepted", nil)
	got, ok = conditionOf(current(), gitHubBudget)
	require.True(t, ok, "the Accepted condition's write keeps it")
	require.Equal(t, "Throttled", got.Reason)
	require.Equal(t, "True", conditionStatus(current(), "Accepted"))

	budget.throttled = false
	c, changed = budgetCondition(current(), budget, time.Time{})
	require.True(t, changed)
	w.writeBudgetCondition(ctx, current(), c)
	require.Equal(t, "True", conditionStatus(current(), gitHubBudget))
	require.Len(t, events(), 2)
	require.Equal(t, "GitHubBudgetRecovered", events()[1].Reason)
	require.Equal(t, corev1.EventTypeNormal, events()[1].Type)
	_, changed = budgetCondition(current(), budget, time.Time{})
	require.False(t, changed)
}
