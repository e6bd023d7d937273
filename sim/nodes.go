package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/sim/kubelet"
)

// NodeLabel names the node AddNode made, so a pod template can select it.
const NodeLabel = "sim.arcflow.dev/node"

// AddNode adds a node that the test stack's kwok plays, like its shared node,
// and waits until it is Ready. It carries NodeLabel=name and taints, so a test
// can keep other tests' pods off a node it means to lose (LoseNode).
func AddNode(ctx context.Context, kube kubernetes.Interface, name string, taints ...corev1.Taint) error {
	node := kubelet.KwokNode(name, map[string]string{NodeLabel: name}, taints...)
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("add node %s: %w", name, err)
	}
	if err := kubelet.WaitNodeReady(ctx, kube, name); err != nil {
		return fmt.Errorf("add node %s: %w", name, err)
	}
	return nil
}
