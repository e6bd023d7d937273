package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/internal/teststack"
)

// NodeLabel names the node AddNode made, so a pod template can select it.
const NodeLabel = "sim.arcflow.dev/node"

// AddNode adds a node that the test stack's kwok plays, like its shared node,
// and waits until it is Ready. It carries NodeLabel=name and taints, so a test
// can keep other tests' pods off a node it means to lose (LoseNode).
func AddNode(ctx context.Context, kube kubernetes.Interface, name string, taints ...corev1.Taint) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1k"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("1k"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok", NodeLabel: name},
		},
		Spec:   corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("add node %s: %w", name, err)
	}
	if err := teststack.WaitNodeReady(ctx, kube, name); err != nil {
		return fmt.Errorf("add node %s: %w", name, err)
	}
	return nil
}
