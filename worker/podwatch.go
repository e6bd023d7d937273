package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/internal/informer"
	"github.com/arcflow/arcflow/workflows/contract"
)

// PodWatcher turns runner pod changes into `pod` signals to runner workflows. It
// watches with an informer; nothing polls. Only changes a runner workflow acts on
// (phase, readiness, deletion) are sent, and each carries the pod's UID and
// resource version so the workflow ignores repeats.
type PodWatcher struct {
	kube      kubernetes.Interface
	temporal  client.Client
	log       *slog.Logger
	namespace string
	queue     workqueue.TypedRateLimitingInterface[podSignal]
}

type podSignal struct {
	namespace, name string
	state           activities.PodState
	created         time.Time // the pod's creation
}

// workflowStartGrace is how long a new pod's signals wait for its runner's
// workflow to exist: a pool's start creates the pod just before the workflow
// (activities.Workflows.CreateRunner), and a pod that ends, or that no node
// can take, in between must still be heard.
const workflowStartGrace = time.Minute

// errNoWorkflowYet retries the signal of a pod younger than workflowStartGrace.
var errNoWorkflowYet = errors.New("no runner workflow yet")

// NewPodWatcher builds a watcher of pods labelled as runners, in one namespace or,
// when namespace is empty, in all.
func NewPodWatcher(kube kubernetes.Interface, temporal client.Client, namespace string, log *slog.Logger) *PodWatcher {
	return &PodWatcher{
		kube: kube, temporal: temporal, log: log, namespace: namespace,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[podSignal]()),
	}
}

// Run watches until ctx ends, with the given number of signalling goroutines.
func (w *PodWatcher) Run(ctx context.Context, workers int) error {
	pods := w.kube.CoreV1().Pods(w.namespace)
	runnersOnly := func(o metav1.ListOptions) metav1.ListOptions { o.LabelSelector = activities.LabelRunner; return o }
	watched := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, runnersOnly(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, runnersOnly(o))
		},
	}, w.kube), &corev1.Pod{}, cache.SharedIndexInformerOptions{ObjectDescription: "runner pods"})
	_ = watched.SetTransform(SlimPod) // fails only once started
	_, err := watched.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.enqueue(obj.(*corev1.Pod), activities.PodState{}, false) },
		UpdateFunc: func(oldObj, newObj any) {
			w.enqueue(newObj.(*corev1.Pod), activities.PodStateOf(oldObj.(*corev1.Pod)), false)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				w.enqueue(pod, activities.PodStateOf(pod), true)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("pod watcher: %w", err)
	}
	defer w.queue.ShutDown()
	synced, wait := informer.Run(ctx, watched)
	defer wait()
	if !synced {
		return errors.New("pod watcher: cache did not sync")
	}
	for range workers {
		go w.work(ctx)
	}
	<-ctx.Done()
	return nil
}

// enqueue queues the signal of a pod change (old is the pod before it, zero
// when it was just added) if the pod's runner needs to hear of it.
func (w *PodWatcher) enqueue(pod *corev1.Pod, old activities.PodState, deleted bool) {
	cur := activities.PodStateOf(pod)
	if deleted {
		// The pod's last state may say what deleted it (the pod GC of a lost node).
		cur = activities.PodState{UID: string(pod.UID), ResourceVersion: "deleted/" + pod.ResourceVersion, Cause: cur.Cause}
	}
	if podSignalWorthy(old, cur, pod.Annotations[activities.AnnotationReadyUntold] == "true") {
		w.queue.Add(podSignal{pod.Namespace, pod.Name, cur, pod.CreationTimestamp.Time})
	}
}

// podSignalWorthy is signalWorthy, and for a pod marked ready-untold,
// untoldWorthy too.
func podSignalWorthy(old, cur activities.PodState, untold bool) bool {
	return signalWorthy(old, cur) && (!untold || untoldWorthy(old, cur))
}

// untoldWorthy says whether the runner of a pod marked ready-untold needs the
// change: its pod's end, deletion, or a change of whether it can be scheduled.
// Its start and readiness it reads itself when it needs them.
func untoldWorthy(old, cur activities.PodState) bool {
	return !cur.Exists || ended(cur) || cur.Deleting != old.Deleting || cur.Unschedulable != old.Unschedulable
}

// signalWorthy says whether a runner workflow acts on a change of its pod from
// old (zero: just added) to cur (not Exists: deleted), so that a signal, which
// costs the runner a workflow task, is worth sending.
func signalWorthy(old, cur activities.PodState) bool {
	switch {
	case !old.Exists:
		// A runner knows its new pod from its own create call; a pod that is only
		// Pending tells it nothing, unless no node can take it.
		return cur.Phase != corev1.PodPending || cur.Ready || cur.Deleting || cur.Unschedulable
	case ended(old):
		// Its runner acted on the end; the deletion, which that runner usually
		// made itself, would only race the runner's completion, which Temporal
		// then refuses (UnhandledCommand), and the runner's last calls run again.
		return false
	case !cur.Exists:
		return true
	}
	return old.Phase != cur.Phase || old.Ready != cur.Ready || old.Deleting != cur.Deleting || old.Unschedulable != cur.Unschedulable
}

// ended reports a pod that Succeeded or Failed.
func ended(pod activities.PodState) bool {
	return pod.Phase == corev1.PodSucceeded || pod.Phase == corev1.PodFailed
}

func (w *PodWatcher) work(ctx context.Context) {
	for {
		item, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		err := w.signal(ctx, item)
		switch {
		case err == nil:
			w.queue.Forget(item)
		case ctx.Err() != nil:
		case errors.Is(err, errNoWorkflowYet):
			// The workflow is usually a moment away: a tenth of the pod's
			// age, between 10 ms and 1 s.
			w.queue.AddAfter(item, min(max(time.Since(item.created)/10, 10*time.Millisecond), time.Second))
		default:
			w.log.Warn("pod signal failed; retrying", "runner", item.name, "namespace", item.namespace, "error", err)
			w.queue.AddRateLimited(item)
		}
		w.queue.Done(item)
	}
}

func (w *PodWatcher) signal(ctx context.Context, s podSignal) error {
	id := contract.RunnerWorkflowID(s.namespace, s.name)
	err := w.temporal.SignalWorkflow(ctx, id, "", contract.SignalPod, s.state)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		if time.Since(s.created) < workflowStartGrace {
			return errNoWorkflowYet
		}
		return nil // not arcflow's runner, or its workflow already ended
	}
	if err != nil {
		return fmt.Errorf("signal %s: %w", id, err)
	}
	return nil
}
