package world

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// allNamespaces is Namespace and Namespaces, without repeats.
func (c Config) allNamespaces() []string {
	out := []string{c.Namespace}
	for _, ns := range c.Namespaces {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// spansNamespaces: the world has more than its one namespace.
func (c Config) spansNamespaces() bool { return len(c.allNamespaces()) > 1 }

// watchFlags are the worker's and webhook's namespace flags: one namespace, or
// none (every namespace, as the chart's default install watches) when the
// world spans several, since --watch-namespace takes only one.
func (c Config) watchFlags() []string {
	if c.spansNamespaces() {
		return nil
	}
	return []string{"--watch-namespace=" + c.Namespace}
}

// runnerNamespace is the simulator's namespace: "" (all) when the world spans
// several.
func (c Config) runnerNamespace() string {
	if c.spansNamespaces() {
		return ""
	}
	return c.Namespace
}

func createNamespaces(ctx context.Context, kube kubernetes.Interface, names []string) error {
	for _, name := range names {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}

// Namespaces are every namespace of the world, its first namespace first.
func (w *World) Namespaces() []string { return w.cfg.allNamespaces() }
