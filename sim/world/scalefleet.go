package world

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// ScaleFleet is issue 25's fleet, as a large organization runs it: Pools
// pools spread over Namespaces namespaces, most with labels of their own; three
// that share one label set in priority order (spill-over: the first has a
// small maxReplicas, so its jobs overflow into the next); two with an idle
// buffer; the last a RunnerSet with a cache volume. Jobs ask for a label set
// chosen with weight 1/(rank+1), so the first few are hot and most are cold.
type ScaleFleet struct {
	Namespaces, Pools int
	// Org owns the one repository, Org/app, every job comes from; the RunnerSet
	// is the organization's.
	Org string
	// MaxReplicas and ScaleDownDelaySeconds go into every HRA but the first
	// shared pool's (SpillMaxReplicas) and the RunnerSet's (RunnerSetMax).
	MaxReplicas, ScaleDownDelaySeconds int
}

// The fixed roles of the fleet's pools, by index.
const (
	// fleetIdlePools are the pools with an idle buffer of fleetIdleRunners.
	fleetIdleRunners = 2
	// fleetSharedFirst is the first of fleetShared pools that take the label set
	// [linux, shared], with priorities 10, 5 and 0.
	fleetSharedFirst, fleetShared = 3, 3
	// SpillMaxReplicas is the first shared pool's maxReplicas: small, so its
	// jobs spill over into the next one.
	SpillMaxReplicas = 4
	// RunnerSetMax is the RunnerSet's maxReplicas, and the volumes offered to it.
	RunnerSetMax = 10
	// RunnerSetClass is the storage class of the RunnerSet's cache volumes.
	RunnerSetClass = "scale-cache"
)

var fleetIdlePools = []int{1, 2}

// FleetPool is one pool of the fleet: a RunnerDeployment (or the RunnerSet)
// and its HRA, both named Name.
type FleetPool struct {
	Namespace, Name, Kind string
	// Label is the pool's own runner label; shared pools have "shared".
	Label       string
	MaxReplicas int
	IdleRunners int
	// Priority is arcflow.dev/priority (shared pools only; 0 otherwise).
	Priority int
}

// Repository is where every job of the fleet is queued.
func (f ScaleFleet) Repository() string { return f.Org + "/app" }

// NamespaceOf is the namespace of pool i. The shared pools stay in the first
// one's namespace, so spill-over is between neighbours as in the example.
func (f ScaleFleet) NamespaceOf(i int) string {
	if i >= fleetSharedFirst && i < fleetSharedFirst+fleetShared {
		i = fleetSharedFirst
	}
	return fmt.Sprintf("scale-%d", i%max(f.Namespaces, 1))
}

// NamespaceNames lists the fleet's namespaces.
func (f ScaleFleet) NamespaceNames() []string {
	var out []string
	for i := range max(f.Namespaces, 1) {
		out = append(out, fmt.Sprintf("scale-%d", i))
	}
	return out
}

// PoolList is every pool of the fleet, by index.
func (f ScaleFleet) PoolList() []FleetPool {
	var out []FleetPool
	for i := range f.Pools {
		p := FleetPool{Namespace: f.NamespaceOf(i), Name: fmt.Sprintf("rd-%02d", i), Kind: v1alpha1.KindRunnerDeployment, MaxReplicas: f.MaxReplicas}
		p.Label = p.Name
		switch {
		case i == f.Pools-1:
			p.Name, p.Kind, p.MaxReplicas = "rs-cache", v1alpha1.KindRunnerSet, RunnerSetMax
			p.Label = p.Name
		case i >= fleetSharedFirst && i < fleetSharedFirst+fleetShared:
			p.Label = "shared"
			p.Priority = 10 - 5*(i-fleetSharedFirst)
			if i == fleetSharedFirst {
				p.MaxReplicas = SpillMaxReplicas
			}
		}
		for _, idle := range fleetIdlePools {
			if i == idle {
				p.IdleRunners = fleetIdleRunners
			}
		}
		out = append(out, p)
	}
	return out
}

// Targets are the label sets jobs ask for, one per pool but one for the
// shared pools together, in rank order; Weights are their chances.
func (f ScaleFleet) Targets() []string {
	var out []string
	for _, p := range f.PoolList() {
		if !slices.Contains(out, p.Label) {
			out = append(out, p.Label)
		}
	}
	return out
}

// Weights are the targets' chances, 1/(rank+1), normalized to sum to 1.
func (f ScaleFleet) Weights() []float64 {
	targets := f.Targets()
	w := make([]float64, len(targets))
	var total float64
	for i := range w {
		w[i] = 1 / float64(i+1)
		total += w[i]
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

// Pick draws a target's label for one job.
func (f ScaleFleet) Pick(rng *rand.Rand, targets []string, weights []float64) string {
	u := rng.Float64()
	for i, w := range weights {
		if u < w {
			return targets[i]
		}
		u -= w
	}
	return targets[len(targets)-1]
}

// JobLabels are the labels of a job for target.
func JobLabels(target string) []string { return []string{"self-hosted", "linux", target} }

// Manifests are the fleet's resources, by namespace.
func (f ScaleFleet) Manifests() map[string]string {
	docs := map[string][]string{}
	for _, p := range f.PoolList() {
		docs[p.Namespace] = append(docs[p.Namespace], f.poolManifest(p))
	}
	out := map[string]string{}
	for ns, d := range docs {
		out[ns] = strings.Join(d, "---\n")
	}
	return out
}

func (f ScaleFleet) poolManifest(p FleetPool) string {
	if p.Kind == v1alpha1.KindRunnerSet {
		return CachedRunnerSet(p.Name, f.Org, RunnerSetClass, p.MaxReplicas)
	}
	hra := WebhookHRA(p.Name, p.Kind, p.MaxReplicas, f.ScaleDownDelaySeconds)
	if p.IdleRunners > 0 {
		hra = WithIdleRunners(hra, p.Name, p.IdleRunners)
	}
	if p.Label == "shared" {
		hra = annotate(hra, "HorizontalRunnerAutoscaler", p.Name, v1alpha1.PriorityAnnotation, fmt.Sprint(p.Priority))
	}
	return RepoRunnerDeployment(p.Name, f.Repository(), p.Label) + "---\n" + hra
}

// PoolsIn lists the names of the HRAs of namespace ns, sorted.
func (f ScaleFleet) PoolsIn(ns string) []string {
	var out []string
	for _, p := range f.PoolList() {
		if p.Namespace == ns {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}
