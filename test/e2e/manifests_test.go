package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

var stack *localstack.Stack

func TestMain(m *testing.M) {
	// The shared dev server keeps its state in a SQLite file, as the bundled
	// Temporal does: its in-memory store was once emptied under a load of 9
	// (a dropped connection takes an in-memory database with it), and every
	// later test then found no namespace.
	var err error
	if buildsDir, err = localstack.MakeScratchDir("", "arcflow-e2e-builds-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	waitBuilds := startBuilds()
	code := localstack.Run(m, localstack.Options{
		Kubernetes: true, Temporal: true, TemporalUI: true, TemporalDB: true, SearchAttributes: contract.SearchAttributeTypes(),
	}, &stack)
	waitBuilds()
	if err := os.RemoveAll(buildsDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// repoRoot is the repository's root (rootDir).
func repoRoot(t *testing.T) string {
	root, err := rootDir()
	require.NoError(t, err)
	return root
}

// rootDir is two levels above this package.
func rootDir() (string, error) { return filepath.Abs("../..") }

// createNamespace gives a test its own namespace.
func createNamespace(t *testing.T, ctx context.Context, name string) {
	_, err := stack.Kubectl(ctx, "create", "namespace", name)
	require.NoError(t, err)
}

// get reads an object with the dynamic client and decodes it into a typed struct.
func get(t *testing.T, ctx context.Context, gvr schema.GroupVersionResource, ns, name string, into any) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	obj, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, into, true),
		"the stored object has no field the Go types lack")
}

func TestARCManifestsApplyUnchangedAndDecode(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	root := repoRoot(t)
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(root, "deploy", "crds")))
	createNamespace(t, ctx, "manifests")

	for _, file := range []string{
		filepath.Join(root, "deploy", "examples", "runnerdeployment.yaml"),
		filepath.Join(root, "deploy", "examples", "runnerset.yaml"),
		filepath.Join("testdata", "hra-metrics-schedule.yaml"),
	} {
		out, err := stack.Kubectl(ctx, "apply", "-n", "manifests", "-f", file)
		require.NoError(t, err, out)
	}

	t.Run("RunnerDeployment with labels and docker options", func(t *testing.T) {
		var rd v1alpha1.RunnerDeployment
		get(t, ctx, v1alpha1.RunnerDeploymentResource, "manifests", "example-runners", &rd)
		require.NoError(t, rd.Validate())
		spec := rd.Spec.Template.Spec
		require.Equal(t, "example-org/example-repo", spec.Repository)
		require.Equal(t, []string{"linux", "x64", "gpu"}, spec.Labels)
		require.Equal(t, "platform", rd.Spec.Template.Labels["team"], "template metadata is kept, not pruned")
		require.True(t, spec.IsEphemeral())
		require.True(t, spec.HasDockerSidecar())
		require.Equal(t, int64(1400), *spec.DockerMTU)
		require.Equal(t, "https://mirror.gcr.io/", *spec.DockerRegistryMirror)
		require.Equal(t, "1M", spec.DockerVarRunVolumeSizeLimit.String())
		require.Equal(t, "RUNNER_GRACEFUL_STOP_TIMEOUT", spec.Env[0].Name)
		require.Equal(t, "500m", spec.Resources.Requests.Cpu().String())
		require.Equal(t, int64(110), *spec.TerminationGracePeriodSeconds)
		require.Equal(t, 1, rd.Spec.DesiredReplicas())
	})

	t.Run("RunnerSet with volumeClaimTemplates", func(t *testing.T) {
		var rs v1alpha1.RunnerSet
		get(t, ctx, v1alpha1.RunnerSetResource, "manifests", "example-runnerset", &rs)
		require.NoError(t, rs.Validate())
		require.Equal(t, "example-org", rs.Spec.Organization)
		require.Equal(t, "builders", rs.Spec.Group)
		require.False(t, rs.Spec.IsEphemeral())
		require.Equal(t, "example-runnerset", rs.Spec.ServiceName)
		require.Len(t, rs.Spec.VolumeClaimTemplates, 1)
		require.Equal(t, "tool-cache", rs.Spec.VolumeClaimTemplates[0].Name)
		require.Equal(t, "10Gi", rs.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String())
		require.Equal(t, "runner", rs.Spec.Template.Spec.Containers[0].Name)
	})

	t.Run("HRA with a workflowJob trigger", func(t *testing.T) {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		get(t, ctx, v1alpha1.HorizontalRunnerAutoscalerResource, "manifests", "example-runners", &hra)
		require.NoError(t, hra.Validate())
		trigger, ok := hra.Spec.WorkflowJobTrigger()
		require.True(t, ok)
		require.Equal(t, 30*time.Minute, trigger.DurationOrDefault())
		require.Equal(t, 0, hra.Spec.MinReplicasOrDefault())
		require.Equal(t, 5*time.Minute, hra.Spec.ScaleDownDelay(v1alpha1.DefaultScaleDownDelay))
		require.Equal(t, v1alpha1.KindRunnerDeployment, hra.Spec.TargetKind())
	})

	t.Run("HRA with metrics and scheduledOverrides", func(t *testing.T) {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		get(t, ctx, v1alpha1.HorizontalRunnerAutoscalerResource, "manifests", "busy-org-runners", &hra)
		require.NoError(t, hra.Validate())
		require.Equal(t, v1alpha1.KindRunnerDeployment, hra.Spec.TargetKind(), "an empty kind means RunnerDeployment")
		require.Len(t, hra.Spec.Metrics, 2)
		require.Equal(t, v1alpha1.MetricPercentageRunnersBusy, hra.Spec.Metrics[0].Type)
		require.Equal(t, "0.75", hra.Spec.Metrics[0].ScaleUpThreshold)
		require.Equal(t, []string{"example-repo"}, hra.Spec.Metrics[1].RepositoryNames)
		require.Len(t, hra.Spec.ScheduledOverrides, 1)
		o := hra.Spec.ScheduledOverrides[0]
		require.Equal(t, "Weekly", o.RecurrenceRule.Frequency)
		require.Equal(t, 0, *o.MinReplicas)
		require.Equal(t, 24*time.Hour, o.EndTime.Sub(o.StartTime.Time))
		require.Equal(t, 5*time.Minute, hra.Spec.ScaleUpTriggers[0].Duration.Duration)
	})

	t.Run("kubectl get shows ARC's printer columns", func(t *testing.T) {
		out, err := stack.Kubectl(ctx, "get", "-n", "manifests", "rdeploy,runnerset,hra")
		require.NoError(t, err)
		t.Log("\n" + out)
		for _, column := range []string{"ENTERPRISE", "ORGANIZATION", "REPOSITORY", "LABELS", "DESIRED", "CURRENT", "UP-TO-DATE", "AVAILABLE", "MIN", "MAX", "SCHEDULE"} {
			require.Contains(t, out, column)
		}
		require.Contains(t, out, "example-org/example-repo")
	})
}

func TestInvalidManifestsAreRejectedWithAClearMessage(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(repoRoot(t), "deploy", "crds")))
	createNamespace(t, ctx, "invalid")

	for file, message := range map[string]string{
		"invalid-repository.yaml":  `spec.template.spec.repository: Invalid value: "not-an-owner-slash-name": spec.template.spec.repository in body should match '^[^/]+/[^/]+$'`,
		"invalid-two-scopes.yaml":  "exactly one of enterprise, organization and repository must be set",
		"invalid-hra-min-max.yaml": "minReplicas must not be greater than maxReplicas",
	} {
		t.Run(file, func(t *testing.T) {
			out, err := stack.Kubectl(ctx, "apply", "-n", "invalid", "-f", filepath.Join("testdata", file))
			require.Error(t, err)
			require.Contains(t, out, message)
			require.Contains(t, out, "is invalid")
		})
	}
}
