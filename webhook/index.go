package webhook

import (
	"context"
	"errors"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/internal/informer"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Job is what HRA matching needs of a workflow_job event.
type Job struct {
	Repository string // owner/name
	OwnerType  string // User or Organization
	Org        string
	Enterprise string
	Labels     []string
}

// Match is the autoscaler a job scales, with its target.
type Match struct {
	HRA    *v1alpha1.HorizontalRunnerAutoscaler
	Target hraspec.Target
	// Overflow are the workflow IDs of the other autoscalers that match the
	// job, in the order they are tried when the ones before are at maxReplicas.
	Overflow []string
}

// Finder finds the autoscaler for a job.
type Finder interface {
	Find(job Job) (Match, bool)
}

// Index finds HRAs from informer caches: no API call on the request path.
type Index struct {
	hras, rds, rss cache.GenericLister
	informers      []cache.SharedIndexInformer
}

// NewIndex builds an index over one namespace, or all when namespace is empty.
func NewIndex(dyn dynamic.Interface, namespace string) *Index {
	ix := &Index{}
	for _, r := range []struct {
		gvr    schema.GroupVersionResource
		lister *cache.GenericLister
	}{
		{v1alpha1.HorizontalRunnerAutoscalerResource, &ix.hras},
		{v1alpha1.RunnerDeploymentResource, &ix.rds},
		{v1alpha1.RunnerSetResource, &ix.rss},
	} {
		var inf cache.SharedIndexInformer
		inf, *r.lister = informer.ForResource(dyn, r.gvr, namespace)
		ix.informers = append(ix.informers, inf)
	}
	return ix
}

// Start fills the caches and keeps them current until ctx ends.
func (ix *Index) Start(ctx context.Context) error {
	if synced, _ := informer.Run(ctx, ix.informers...); !synced {
		return errors.New("hra index: caches did not sync")
	}
	return nil
}

type candidate struct {
	hra    *v1alpha1.HorizontalRunnerAutoscaler
	target hraspec.Target
}

// Find applies ARC's matching (reference §4.3) to every HRA whose only trigger is
// workflowJob and whose target has every job label (ignoring self-hosted,
// case-insensitively), and orders the matches: higher arcflow.dev/priority first;
// then ARC's levels, repository runners first and, unless the repository belongs
// to a user, organization and enterprise runners in the order org default group,
// enterprise default group, org custom group, enterprise custom group; then
// namespace/name. The first match scales the job, the others are its overflow.
// Without priority annotations the first is the HRA ARC would pick. An HRA whose
// target is missing or broken is skipped, never fatal for the others.
func (ix *Index) Find(job Job) (Match, bool) {
	levels := []func(c v1alpha1.RunnerConfig) bool{
		func(c v1alpha1.RunnerConfig) bool {
			return c.Repository != "" && strings.EqualFold(c.Repository, job.Repository)
		},
	}
	if job.OwnerType != "User" {
		org := func(c v1alpha1.RunnerConfig) bool { return job.Org != "" && strings.EqualFold(c.Organization, job.Org) }
		ent := func(c v1alpha1.RunnerConfig) bool {
			return job.Enterprise != "" && strings.EqualFold(c.Enterprise, job.Enterprise)
		}
		levels = append(levels,
			func(c v1alpha1.RunnerConfig) bool { return org(c) && c.Group == "" },
			func(c v1alpha1.RunnerConfig) bool { return ent(c) && c.Group == "" },
			func(c v1alpha1.RunnerConfig) bool { return org(c) && c.Group != "" },
			func(c v1alpha1.RunnerConfig) bool { return ent(c) && c.Group != "" },
		)
	}
	type ranked struct {
		candidate
		priority, level int
	}
	var matches []ranked
	for _, c := range ix.candidates() {
		if !scalesOnJobs(c.hra) || !github.LabelsFit(job.Labels, c.target.Config.Labels, false) {
			continue
		}
		for level, in := range levels {
			if in(c.target.Config) {
				priority, _ := c.hra.Priority() // a bad value is reported on the HRA and counts as 0
				matches = append(matches, ranked{c, priority, level})
				break
			}
		}
	}
	if len(matches) == 0 {
		return Match{}, false
	}
	sort.SliceStable(matches, func(i, j int) bool { // candidates come by namespace/name
		if matches[i].priority != matches[j].priority {
			return matches[i].priority > matches[j].priority
		}
		return matches[i].level < matches[j].level
	})
	first := matches[0]
	m := Match{HRA: first.hra, Target: first.target}
	for _, other := range matches[1:] {
		m.Overflow = append(m.Overflow, contract.AutoscalerWorkflowID(other.hra.Namespace, other.hra.Name))
	}
	return m, true
}

func scalesOnJobs(hra *v1alpha1.HorizontalRunnerAutoscaler) bool {
	t := hra.Spec.ScaleUpTriggers
	return hra.DeletionTimestamp == nil && len(t) == 1 && t[0].GitHubEvent != nil && t[0].GitHubEvent.WorkflowJob != nil
}

// candidates are the HRAs with a resolvable target, ordered by namespace/name.
func (ix *Index) candidates() []candidate {
	objs, err := ix.hras.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []candidate
	for _, obj := range objs {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		if decode(obj, &hra) != nil {
			continue
		}
		target, err := hraspec.ResolveTarget(&hra, ix.rds, ix.rss)
		if err != nil {
			continue // a broken HRA only loses its own events
		}
		out = append(out, candidate{&hra, target})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].hra, out[j].hra
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return out
}

func decode(obj runtime.Object, into any) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return errors.New("not an unstructured object")
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
