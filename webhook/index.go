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

// Find applies ARC's matching (reference §4.3): repository runners first; then,
// unless the repository belongs to a user, organization and enterprise runners in
// the order org default group, enterprise default group, org custom group,
// enterprise custom group. Within a level the first HRA (by namespace/name) whose
// only trigger is workflowJob and whose target has every job label (ignoring
// self-hosted, case-insensitively) wins. An HRA whose target is missing or broken is
// skipped, never fatal for the others.
func (ix *Index) Find(job Job) (Match, bool) {
	cands := ix.candidates()
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
	for _, level := range levels {
		for _, c := range cands {
			if level(c.target.Config) && scalesOnJobs(c.hra) && github.LabelsFit(job.Labels, c.target.Config.Labels, false) {
				return Match{HRA: c.hra, Target: c.target}, true
			}
		}
	}
	return Match{}, false
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
