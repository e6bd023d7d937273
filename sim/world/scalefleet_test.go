package world

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func TestScaleFleetHasIssue25sShape(t *testing.T) {
	f := ScaleFleet{Namespaces: 5, Pools: 50, Org: "o", MaxReplicas: 200, ScaleDownDelaySeconds: 30}
	pools := f.PoolList()
	if len(pools) != 50 {
		t.Fatalf("%d pools", len(pools))
	}
	namespaces, idle, shared, sets := map[string]int{}, 0, 0, 0
	for _, p := range pools {
		namespaces[p.Namespace]++
		if p.IdleRunners > 0 {
			idle++
		}
		if p.Label == "shared" {
			shared++
		}
		if p.Kind == v1alpha1.KindRunnerSet {
			sets++
		}
	}
	if len(namespaces) != 5 || idle != 2 || shared != 3 || sets != 1 {
		t.Errorf("namespaces %v, %d idle buffers, %d sharing a label set, %d RunnerSets; want 5, 2, 3, 1", namespaces, idle, shared, sets)
	}
	if got := len(f.Targets()); got != 48 {
		t.Errorf("%d label sets, want 48 (three pools share one)", got)
	}
	manifests := f.Manifests()
	all := strings.Join([]string{manifests["scale-0"], manifests["scale-1"], manifests["scale-2"], manifests["scale-3"], manifests["scale-4"]}, "---\n")
	if n := strings.Count(all, "kind: HorizontalRunnerAutoscaler"); n != 50 {
		t.Errorf("%d HRAs in the manifests", n)
	}
	if n := strings.Count(all, v1alpha1.PriorityAnnotation); n != 3 {
		t.Errorf("%d priority annotations", n)
	}
	if n := strings.Count(all, v1alpha1.IdleRunnersAnnotation); n != 2 {
		t.Errorf("%d idle-runner annotations", n)
	}
}

// Jobs pick label sets by weight 1/(rank+1): the hottest gets 1/H(48) ≈ 22 %.
func TestScaleFleetPicksHotLabelSetsMostOften(t *testing.T) {
	f := ScaleFleet{Namespaces: 5, Pools: 50}
	targets, weights := f.Targets(), f.Weights()
	rng := rand.New(rand.NewPCG(7, 8))
	counts := map[string]int{}
	const n = 200_000
	for range n {
		counts[f.Pick(rng, targets, weights)]++
	}
	for i, w := range weights {
		got := float64(counts[targets[i]]) / n
		if math.Abs(got-w) > 0.005 {
			t.Errorf("%s: share %.4f, want %.4f", targets[i], got, w)
		}
	}
	if weights[0] < 0.2 || weights[0] > 0.25 {
		t.Errorf("the hottest label set's share %.3f, want about 0.22", weights[0])
	}
}
