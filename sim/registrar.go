package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github/fake"
)

// Registrar plays the runner inside each runner pod: once the pod is Running, it
// reads the registration token from the pod's Secret and registers with the fake
// GitHub, as config.sh would, under the pod's name.
type Registrar struct {
	Kube   kubernetes.Interface
	GitHub *fake.Server
	Log    *slog.Logger
	// Namespace limits the runners to one namespace; empty means all.
	Namespace string

	mu         sync.Mutex
	registered map[string]bool // by pod UID
}

// Run registers runners until ctx ends.
func (r *Registrar) Run(ctx context.Context) error {
	r.registered = map[string]bool{}
	factory := informers.NewSharedInformerFactoryWithOptions(r.Kube, 0, informers.WithNamespace(r.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = activities.LabelRunner }))
	informer := factory.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			if err := r.register(ctx, pod); err != nil {
				r.Log.Warn("simulated runner could not register", "runner", pod.Name, "error", err)
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		return fmt.Errorf("registrar: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return errors.New("registrar: cache did not sync")
	}
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

func (r *Registrar) register(ctx context.Context, pod *corev1.Pod) error {
	r.mu.Lock()
	done := r.registered[string(pod.UID)]
	r.registered[string(pod.UID)] = true
	r.mu.Unlock()
	if done {
		return nil
	}
	env := map[string]corev1.EnvVar{}
	for _, c := range pod.Spec.Containers {
		if c.Name == "runner" {
			for _, e := range c.Env {
				env[e.Name] = e
			}
		}
	}
	ref := env["RUNNER_TOKEN"].ValueFrom
	if ref == nil || ref.SecretKeyRef == nil {
		return errors.New("pod has no RUNNER_TOKEN secret reference")
	}
	secret, err := r.Kube.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.SecretKeyRef.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read token secret: %w", err)
	}
	token := string(secret.Data[ref.SecretKeyRef.Key])
	labels := splitLabels(env["RUNNER_LABELS"].Value)
	_, err = r.GitHub.Register(token, env["RUNNER_NAME"].Value, labels, env["RUNNER_EPHEMERAL"].Value == "true")
	return err
}

func splitLabels(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
