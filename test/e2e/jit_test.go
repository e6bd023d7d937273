package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// jitManifest is the full-path RunnerDeployment and HRA with JIT runners.
var jitManifest = world.WithJITConfig(fullpath.RunnerDeployment, "app")

// JIT runners are registered by generate-jitconfig when they are created and
// start from the configuration in their Secret: no registration token, no
// lookup in GitHub's runner list, one registration call per runner; the jobs
// run and the pool goes back to zero with nothing left registered.
func TestJITRunnersRegisterInOneCallAndRunTheJobs(t *testing.T) {
	parallel(t)
	const ns = "jit"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	require.Contains(t, jitManifest, v1alpha1.JITConfigAnnotation)
	require.NoError(t, w.Apply(ctx, strings.Replace(jitManifest, "spec:\n  template:", "spec:\n  replicas: 0\n  template:", 1)))

	var secretKeys string
	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "build"})
	}
	require.Eventually(t, func() bool {
		if secretKeys == "" {
			if out, err := stack.Kubectl(ctx, "get", "secrets", "-n", ns, "-l", activities.LabelRunner, "-o", "jsonpath={.items[*].data}"); err == nil {
				secretKeys = out
			}
		}
		jobs := w.GitHub.Jobs()
		if len(jobs) != 3 {
			return false
		}
		for _, j := range jobs {
			if j.Status != "completed" || j.Conclusion != "success" {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "the three jobs ran on JIT runners")
	require.Contains(t, secretKeys, activities.JITConfigSecretKey, "the pod's Secret holds the JIT configuration")
	require.NotContains(t, secretKeys, activities.TokenSecretKey)

	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0 },
		60*time.Second, 200*time.Millisecond, "back to zero, nothing left registered")
	pods := len(w.Runners.PodTimes())
	counts := w.GitHub.CallCounts()
	require.Equal(t, pods, counts["POST /repos/{owner}/{repo}/actions/runners/generate-jitconfig"], "one registration call per runner")
	require.Zero(t, counts["POST /repos/{owner}/{repo}/actions/runners/registration-token"], "no registration token")
	require.Zero(t, counts["GET /repos/{owner}/{repo}/actions/runners"], "no lookup in the runner list")
	require.Empty(t, w.Runners.Violations())
	t.Logf("%d pods for 3 jobs; GitHub calls: %v", pods, counts)
}
