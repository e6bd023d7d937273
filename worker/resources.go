package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/internal/informer"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// ResourceWatcher turns RunnerDeployment and RunnerSet changes into signals: a
// create or update signal-with-starts the pool workflow with the new spec, a delete
// sends `delete`. An invalid resource gets a status condition and an event instead.
type ResourceWatcher struct {
	Kube        kubernetes.Interface
	Dynamic     dynamic.Interface
	Temporal    client.Client
	RunnerURL   string
	Namespace   string // empty: all namespaces
	Autoscaling hraspec.Options
	Log         *slog.Logger
	// Metrics, when set, exports ARC's per-resource gauges from the caches.
	Metrics *ResourceMetrics
	// RunnerTimings are the lifecycle waits of every pool's runners; zero
	// values take the defaults.
	RunnerTimings workflows.RunnerTimings
	// Credentials, when set, validates the githubAPICredentialsFrom Secrets the
	// resources name.
	Credentials CredentialsChecker
	// VolumeIdleTimeout is how long a RunnerSet keeps a free volume slot.
	VolumeIdleTimeout time.Duration
	// PoolDeletionGrace bounds how long a deleted pool waits for its busy
	// runners (--pool-deletion-grace-period).
	PoolDeletionGrace time.Duration
	// PoolStatusInterval paces each pool's writes of changed replica counts
	// (--pool-status-interval).
	PoolStatusInterval time.Duration
	// ARC, when set, holds every pool and autoscaler back while ARC's
	// controller-manager runs (see arcgate.go).
	ARC *ARCController
	// Budgets, when set, gives the GitHub client whose call budget a
	// credential ref spends ("" is the worker's own), for the HRAs'
	// GitHubBudget condition (budgetcondition.go).
	Budgets func(ctx context.Context, ref string) (Throttler, error)
	// WorkflowCheckPeriod is how often the leader starts again the workflows
	// of accepted resources that Temporal no longer runs (lostworkflows.go);
	// zero: never.
	WorkflowCheckPeriod time.Duration
	// lastBudgetCheck is when checkBudgets last looked (only its goroutine
	// touches it).
	lastBudgetCheck time.Time

	// TemporalNamespace is the namespace the client calls, for the
	// conditions that say it is missing.
	TemporalNamespace string

	hras, rds, rss cache.GenericLister
	queue          workqueue.TypedRateLimitingInterface[resourceKey]
	waiting        waitingForTemporal
	arcGate        arcGate
	listenerSpecs  sentListenerSpecs
}

var resourceOf = map[string]schema.GroupVersionResource{
	v1alpha1.KindRunnerDeployment: v1alpha1.RunnerDeploymentResource,
	v1alpha1.KindRunnerSet:        v1alpha1.RunnerSetResource,
	kindHRA:                       v1alpha1.HorizontalRunnerAutoscalerResource,
}

const kindHRA = "HorizontalRunnerAutoscaler"

// Run watches until ctx ends.
func (w *ResourceWatcher) Run(ctx context.Context) error {
	informers := map[string]cache.SharedIndexInformer{}
	listers := map[string]cache.GenericLister{}
	for kind, gvr := range resourceOf {
		informers[kind], listers[kind] = informer.ForResource(w.Dynamic, gvr, w.Namespace)
	}
	w.hras, w.rds, w.rss = listers[kindHRA], listers[v1alpha1.KindRunnerDeployment], listers[v1alpha1.KindRunnerSet]
	w.queue = newResourceQueue()
	w.Metrics.use(w.hras, w.rds, w.rss)
	defer w.Metrics.use(nil, nil, nil)
	if w.ARC != nil {
		w.startARCGate(ctx)
	}
	for _, kindName := range []string{v1alpha1.KindRunnerDeployment, v1alpha1.KindRunnerSet, kindHRA} {
		_, err := informers[kindName].AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				w.enqueueObject(kindName, obj)
				w.refreshRerunReadiness(ctx, kindName, obj)
			},
			UpdateFunc: func(oldObj, obj any) {
				// An annotation or an HRA's trigger may change whether re-runs can
				// work; the check reads only the caches unless its condition changes.
				// A retargeted HRA's old target is looked at too.
				w.refreshRerunReadiness(ctx, kindName, obj)
				if kindName == kindHRA {
					w.refreshRerunReadiness(ctx, kindName, oldObj)
				}
				// Status writes (ours and the pool's) change neither the generation
				// nor the annotations and need no signal. arcflow's annotations
				// (jit-config, registration-only-runner, rerun-lost-jobs, ...) are
				// part of the spec it sends, yet change no generation.
				newU := obj.(*unstructured.Unstructured)
				oldU, ok := oldObj.(*unstructured.Unstructured)
				deleting := ok && oldU.GetDeletionTimestamp() == nil && newU.GetDeletionTimestamp() != nil
				if ok && oldU.GetGeneration() == newU.GetGeneration() && maps.Equal(oldU.GetAnnotations(), newU.GetAnnotations()) && !deleting {
					if kindName != kindHRA && failingChanged(oldU, newU) {
						w.refreshRunnersFailing(ctx, kindName, newU)
					}
					if kindName != kindHRA && takenOverChanged(oldU, newU) {
						w.refreshTakenOver(ctx, kindName, newU)
					}
					return
				}
				w.enqueue(kindName, newU)
			},
			DeleteFunc: func(obj any) {
				w.enqueueObject(kindName, obj)
				w.refreshRerunReadiness(ctx, kindName, obj)
			},
		})
		if err != nil {
			return fmt.Errorf("resource watcher: %w", err)
		}
	}
	synced, wait := informer.Run(ctx, informers[v1alpha1.KindRunnerDeployment], informers[v1alpha1.KindRunnerSet], informers[kindHRA])
	defer wait()
	if !synced {
		return errors.New("resource watcher: caches did not sync")
	}
	w.runSyncs(ctx)
	if w.ARC != nil {
		go w.watchARC(ctx)
	}
	go w.watchBudgets(ctx)
	go w.watchLostWorkflows(ctx)
	go w.watchStale(ctx)
	go w.watchTemporalReturn(ctx)
	<-ctx.Done()
	return nil
}

// enqueueObject enqueues an informer's object, a deleted one's last state included.
func (w *ResourceWatcher) enqueueObject(kind string, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		w.enqueue(kind, u)
	}
}

// upsert hands a resource's spec to its workflow. It returns an error only
// for what a retry can mend (Temporal's answer); a bad spec or Secret is
// reported on the resource instead.
func (w *ResourceWatcher) upsert(ctx context.Context, kind string, u *unstructured.Unstructured) error {
	if kind == kindHRA {
		return w.upsertHRA(ctx, u)
	}
	if u.GetDeletionTimestamp() != nil {
		return w.poolDeleting(ctx, kind, u)
	}
	defer w.refreshHRAsOf(kind, u.GetNamespace(), u.GetName())
	log := w.Log.With("pool", u.GetNamespace()+"/"+u.GetName(), "kind", kind)
	spec, problem := w.poolSpec(kind, u)
	if problem != nil {
		log.Warn("invalid resource; its pool is left as it is", "error", problem)
		w.setConditions(ctx, kind, u, metav1.ConditionFalse, "InvalidSpec", problem.Error(), nil)
		return nil
	}
	if problem := w.credentialsProblem(ctx, spec.Scope.Credentials); problem != nil {
		log.Warn("the resource's GitHub credentials are unusable; its pool is left as it is", "error", problem)
		w.setConditions(ctx, kind, u, metav1.ConditionFalse, "InvalidCredentials", problem.Error(), nil)
		w.queue.AddAfter(keyOf(kind, u), credentialsRecheck)
		return nil
	}
	spec.RegistrationOnly = u.GetAnnotations()[v1alpha1.RegistrationOnlyAnnotation] == "true"
	release, blocked := w.arcHold(ctx, kind, u, nil)
	defer release()
	if blocked {
		return nil
	}
	id := contract.PoolWorkflowID(u.GetNamespace(), kind, u.GetName())
	_, err := w.Temporal.SignalWithStartWorkflow(ctx, id, contract.SignalSpec, spec, client.StartWorkflowOptions{
		ID: id, TaskQueue: contract.ControlTaskQueue, Memo: contract.PoolMemo(u.GetNamespace(), kind, u.GetName(), spec.Scope.String()),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.SearchAttrKind.ValueSet("pool"),
			contract.SearchAttrPool.ValueSet(u.GetNamespace()+"/"+u.GetName()),
			contract.SearchAttrScope.ValueSet(spec.Scope.String()),
		),
	}, workflows.PoolWorkflow, workflows.PoolInput{Spec: spec})
	if err != nil {
		return w.temporalFailed(ctx, kind, u, nil, fmt.Errorf("signal the pool workflow %s: %w", id, err))
	}
	if err := w.scaleSetFollows(ctx, kind, u, spec); err != nil {
		return w.temporalFailed(ctx, kind, u, nil, err)
	}
	if err := activities.EnsurePoolFinalizer(ctx, w.Dynamic, kind, u); err != nil {
		log.Warn("cannot add arcflow's finalizer: deleting the resource would not wait for its busy runners", "error", err)
	}
	w.setConditions(ctx, kind, u, metav1.ConditionTrue, "Accepted", "the pool workflow "+id+" runs this resource", nil)
	return nil
}

// poolDeleting tells the pool of a resource being deleted to drain. With no
// pool workflow running for it, nothing holds runners, and arcflow's
// finalizer goes at once.
func (w *ResourceWatcher) poolDeleting(ctx context.Context, kind string, u *unstructured.Unstructured) error {
	if err := w.stopScaleSet(ctx, kind, u.GetNamespace(), u.GetName()); err != nil {
		return w.temporalFailed(ctx, kind, u, nil, err)
	}
	id := contract.PoolWorkflowID(u.GetNamespace(), kind, u.GetName())
	err := w.Temporal.SignalWorkflow(ctx, id, "", contract.SignalDelete, nil)
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		ref := activities.PoolResourceRef{Namespace: u.GetNamespace(), Kind: kind, Name: u.GetName()}
		if err := activities.RemovePoolFinalizer(ctx, w.Dynamic, ref); err != nil {
			return fmt.Errorf("remove arcflow's finalizer from %s, which has no pool workflow: %w", id, err)
		}
	case err != nil:
		return w.temporalFailed(ctx, kind, u, nil, fmt.Errorf("signal delete to the pool workflow %s: %w", id, err))
	}
	return nil
}

// poolSpec decodes and validates a resource.
func (w *ResourceWatcher) poolSpec(kind string, u *unstructured.Unstructured) (workflows.PoolSpec, error) {
	switch kind {
	case v1alpha1.KindRunnerSet:
		var rs v1alpha1.RunnerSet
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rs); err != nil {
			return workflows.PoolSpec{}, fmt.Errorf("decode RunnerSet: %w", err)
		}
		if err := rs.Validate(); err != nil {
			return workflows.PoolSpec{}, err
		}
		spec, err := RunnerSetPoolSpec(&rs, w.RunnerURL)
		spec.RunnerTimings, spec.VolumeIdleTimeout = w.RunnerTimings, w.VolumeIdleTimeout
		spec.DeletionGracePeriod, spec.StatusInterval = w.PoolDeletionGrace, w.PoolStatusInterval
		return spec, err
	default:
		var rd v1alpha1.RunnerDeployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rd); err != nil {
			return workflows.PoolSpec{}, fmt.Errorf("decode RunnerDeployment: %w", err)
		}
		if err := rd.Validate(); err != nil {
			return workflows.PoolSpec{}, err
		}
		spec, err := RunnerDeploymentPoolSpec(&rd, w.RunnerURL)
		spec.RunnerTimings, spec.DeletionGracePeriod, spec.StatusInterval = w.RunnerTimings, w.PoolDeletionGrace, w.PoolStatusInterval
		return spec, err
	}
}

// deleted tells the workflow of a resource gone from the cluster. Its
// workflow may be gone already: a pool's ends once it has drained.
func (w *ResourceWatcher) deleted(ctx context.Context, key resourceKey) error {
	id := contract.PoolWorkflowID(key.namespace, key.kind, key.name)
	if key.kind == kindHRA {
		id = contract.AutoscalerWorkflowID(key.namespace, key.name)
	}
	err := w.Temporal.SignalWorkflow(ctx, id, "", contract.SignalDelete, nil)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		w.waiting.add(key) // sent again as soon as Temporal answers (temporalreturn.go)
		return fmt.Errorf("signal delete to the workflow %s: %w", id, err)
	}
	if key.kind != kindHRA {
		return w.stopScaleSet(ctx, key.kind, key.namespace, key.name)
	}
	return nil
}

// setConditions records whether arcflow accepted the resource and which of its
// fields it ignores, as status conditions, and a Warning event for a rejection. It
// writes only when something changed, computing the list from the newest
// object when u turns out to be stale (activities.PatchConditions).
func (w *ResourceWatcher) setConditions(ctx context.Context, kind string, u *unstructured.Unstructured, status metav1.ConditionStatus, reason, message string, unsupported []string) {
	var conds []metav1.Condition
	resources := w.Dynamic.Resource(resourceOf[kind]).Namespace(u.GetNamespace())
	before, wrote, err := activities.PatchConditions(ctx, resources, u, func(u *unstructured.Unstructured) (any, bool, error) {
		conds = wantedConditions(u, status, reason, message, unsupported)
		return conds, !conditionsUnchanged(u, conds), nil
	})
	if err != nil {
		w.Log.Warn("cannot write status conditions", "pool", u.GetNamespace()+"/"+u.GetName(), "error", err)
	}
	if !wrote {
		return
	}
	for _, c := range conds {
		switch {
		case c.Type == runnersFailing:
			w.reportFailingStart(ctx, kind, before, c)
		case c.Type == gitHubBudget, c.Type == runnersTakenOver, c.Type == activities.RerunLostJobsCondition, c.Type == activities.ScaleSetSessionCondition: // their events come from elsewhere
		case c.Status != metav1.ConditionTrue || c.Type == "UnsupportedFields" || c.Type == runnerImageUnfit:
			w.event(ctx, kind, u, c.Reason, c.Message)
		}
	}
}

// wantedConditions is the conditions list of u with Accepted (and
// UnsupportedFields) as given, RunnerImageUnfit from its template, the
// conditions derived from its status, and the other writers' conditions kept
// as they are.
func wantedConditions(u *unstructured.Unstructured, status metav1.ConditionStatus, reason, message string, unsupported []string) []metav1.Condition {
	conds := []metav1.Condition{{
		Type: "Accepted", Status: status, Reason: reason, Message: message,
		ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now(),
	}}
	if len(unsupported) > 0 {
		conds = append(conds, metav1.Condition{
			Type: "UnsupportedFields", Status: metav1.ConditionTrue, Reason: "Ignored",
			Message: "arcflow ignores: " + strings.Join(unsupported, "; "), ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now(),
		})
	}
	if unfit, ok := runnerImageCondition(u); ok {
		conds = append(conds, unfit)
	}
	if failing, ok := runnersFailingCondition(u); ok {
		conds = append(conds, failing)
	}
	if taken, ok := runnersTakenOverCondition(u); ok {
		conds = append(conds, taken)
	}
	for _, kept := range []string{gitHubBudget, activities.RerunLostJobsCondition, activities.ScaleSetSessionCondition} {
		if c, ok := conditionOf(u, kept); ok {
			conds = append(conds, c) // the budget watcher's and the re-run workflows', kept as they are
		}
	}
	return conds
}

// conditionsUnchanged compares type, status, reason, message and generation.
func conditionsUnchanged(u *unstructured.Unstructured, want []metav1.Condition) bool {
	have, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if len(have) != len(want) {
		return false
	}
	for i, c := range have {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != want[i].Type || m["status"] != string(want[i].Status) || m["reason"] != want[i].Reason ||
			m["message"] != want[i].Message || m["observedGeneration"] != want[i].ObservedGeneration {
			return false
		}
	}
	return true
}

func (w *ResourceWatcher) event(ctx context.Context, kind string, u *unstructured.Unstructured, reason, message string) {
	w.recordEvent(ctx, kind, u, corev1.EventTypeWarning, reason, message)
}

func (w *ResourceWatcher) normalEvent(ctx context.Context, kind string, u *unstructured.Unstructured, reason, message string) {
	w.recordEvent(ctx, kind, u, corev1.EventTypeNormal, reason, message)
}

func (w *ResourceWatcher) recordEvent(ctx context.Context, kind string, u *unstructured.Unstructured, eventType, reason, message string) {
	on := corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: kind, Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID()}
	if err := activities.RecordEvent(ctx, w.Kube, on, eventType, reason, message); err != nil {
		w.Log.Warn("cannot record the event", "error", err)
	}
}
