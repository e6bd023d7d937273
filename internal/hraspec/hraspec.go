package hraspec

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Target is what an autoscaler needs of its RunnerDeployment or RunnerSet.
type Target struct {
	Kind, Name string
	Config     v1alpha1.RunnerConfig
	// ScaleSet is the runner scale set the target's runners join
	// (v1alpha1.ScaleSetAnnotation); its listener, not webhooks, brings its jobs.
	ScaleSet string
}

// TargetOfRunnerDeployment and TargetOfRunnerSet read a target's runner config.
func TargetOfRunnerDeployment(rd *v1alpha1.RunnerDeployment) Target {
	return Target{Kind: v1alpha1.KindRunnerDeployment, Name: rd.Name, Config: rd.Spec.Template.Spec.RunnerConfig,
		ScaleSet: rd.Annotations[v1alpha1.ScaleSetAnnotation]}
}

func TargetOfRunnerSet(rs *v1alpha1.RunnerSet) Target {
	return Target{Kind: v1alpha1.KindRunnerSet, Name: rs.Name, Config: rs.Spec.RunnerConfig, ScaleSet: rs.Annotations[v1alpha1.ScaleSetAnnotation]}
}

// Options are the process-wide autoscaling settings (ARC's flags).
type Options struct {
	DefaultScaleDownDelay time.Duration // --default-scale-down-delay
	BatchWindow           time.Duration
	SyncPeriod            time.Duration // --sync-period
	ReconcilePeriod       time.Duration
}

// Of builds an autoscaler's spec from its HRA and target.
func Of(hra *v1alpha1.HorizontalRunnerAutoscaler, target Target, opts Options) (contract.AutoscalerSpec, error) {
	if err := hra.Validate(); err != nil {
		return contract.AutoscalerSpec{}, err
	}
	if target.Kind != hra.Spec.TargetKind() || target.Name != hra.Spec.ScaleTargetRef.Name {
		return contract.AutoscalerSpec{}, errors.New("the scale target does not match scaleTargetRef")
	}
	idle, err := hra.IdleRunnersSetting()
	if err != nil {
		return contract.AutoscalerSpec{}, err
	}
	if _, err := hra.Priority(); err != nil {
		return contract.AutoscalerSpec{}, err // only the webhook's order uses it, but a typo must not pass unseen
	}
	trigger, _ := hra.Spec.WorkflowJobTrigger()
	spec := contract.AutoscalerSpec{
		Namespace: hra.Namespace, Name: hra.Name, Generation: hra.Generation,
		TargetKind: target.Kind, TargetName: target.Name,
		Min: hra.Spec.MinReplicasOrDefault(), Max: *hra.Spec.MaxReplicas, IdleRunners: idle.Fixed,
		ScaleDownDelay:  hra.Spec.ScaleDownDelay(opts.DefaultScaleDownDelay),
		TriggerDuration: trigger.DurationOrDefault(),
		Metrics:         hra.Spec.Metrics, Overrides: hra.Spec.ScheduledOverrides, Capacity: hra.Spec.CapacityReservations,
		Scope: ScopeOf(hra.Namespace, target.Config), TargetLabels: target.Config.Labels,
		BatchWindow: opts.BatchWindow, SyncPeriod: opts.SyncPeriod, ReconcilePeriod: opts.ReconcilePeriod,
		ScaleSet: target.ScaleSet,
	}
	if idle.Auto {
		spec.AutoIdle = &contract.AutoIdleRunners{Max: idle.Max}
	}
	if ref := hra.Spec.GitHubAPICredentialsFrom.Ref(hra.Namespace); ref != "" {
		spec.Scope.Credentials = ref // the HRA's own, for its metrics and reconcile, as in ARC
	}
	switch {
	case target.Config.Repository != "":
		spec.Repositories = []string{target.Config.Repository}
	case target.Config.Organization != "":
		for _, m := range hra.Spec.Metrics {
			for _, name := range m.RepositoryNames {
				spec.Repositories = append(spec.Repositories, fmt.Sprintf("%s/%s", target.Config.Organization, name))
			}
		}
	}
	return spec, nil
}

// ResolveTarget reads an HRA's RunnerDeployment or RunnerSet from informer listers.
// The worker's watcher and the webhook's index both use it.
func ResolveTarget(hra *v1alpha1.HorizontalRunnerAutoscaler, rds, rss cache.GenericLister) (Target, error) {
	name := hra.Spec.ScaleTargetRef.Name
	switch hra.Spec.TargetKind() {
	case v1alpha1.KindRunnerSet:
		var rs v1alpha1.RunnerSet
		if err := getTyped(rss, hra.Namespace, name, &rs); err != nil {
			return Target{}, fmt.Errorf("scale target RunnerSet %s: %w", name, err)
		}
		return TargetOfRunnerSet(&rs), nil
	case v1alpha1.KindRunnerDeployment:
		var rd v1alpha1.RunnerDeployment
		if err := getTyped(rds, hra.Namespace, name, &rd); err != nil {
			return Target{}, fmt.Errorf("scale target RunnerDeployment %s: %w", name, err)
		}
		return TargetOfRunnerDeployment(&rd), nil
	}
	return Target{}, fmt.Errorf("unsupported scale target kind %q", hra.Spec.ScaleTargetRef.Kind)
}

func getTyped(lister cache.GenericLister, namespace, name string, into any) error {
	obj, err := lister.ByNamespace(namespace).Get(name)
	if err != nil {
		return err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return errors.New("not an unstructured object")
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// ScopeOf is the GitHub scope a runner config registers in.
func ScopeOf(namespace string, c v1alpha1.RunnerConfig) registry.Scope {
	return registry.Scope{Enterprise: c.Enterprise, Organization: c.Organization, Repository: c.Repository,
		Credentials: c.GitHubAPICredentialsFrom.Ref(namespace)}
}
