package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// outputLine is a line a command printed, and when.
type outputLine struct {
	at   time.Time
	text string
}

// joined is a command's output as one text, a line each.
func joined(lines []outputLine) string {
	var text strings.Builder
	for _, l := range lines {
		text.WriteString(l.text + "\n")
	}
	return text.String()
}

// startCLI starts an arcflow command against the stack's Temporal and
// Kubernetes and records its output lines as they come; wait returns them
// with its exit error.
func startCLI(t *testing.T, temporalNamespace string, args ...string) (wait func() ([]outputLine, error)) {
	cmd := exec.Command(arcflowBinary(t), args...)
	cmd.Env = append(append(os.Environ(), temporalEnv(temporalNamespace)...), "KUBECONFIG="+stack.Kubeconfig)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	var mu sync.Mutex
	var lines []outputLine
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			mu.Lock()
			lines = append(lines, outputLine{time.Now(), s.Text()})
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return func() ([]outputLine, error) {
		<-read
		err := cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		return lines, err
	}
}

// finalizers lists every object in a namespace that has a finalizer, as
// kind/name [finalizers].
func finalizers(t *testing.T, ctx context.Context, ns string) []string {
	kinds, err := stack.Kubectl(ctx, "api-resources", "--verbs=list", "--namespaced", "-o", "name")
	require.NoError(t, err, kinds)
	out, err := stack.Kubectl(ctx, "get", strings.Join(strings.Fields(kinds), ","), "-n", ns, "--ignore-not-found",
		"-o", `jsonpath={range .items[?(@.metadata.finalizers)]}{.kind}/{.metadata.name} {.metadata.finalizers}{"\n"}{end}`)
	require.NoError(t, err, out)
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "Warning:") { // kubectl's deprecation notes
			found = append(found, line)
		}
	}
	return found
}

// `arcflow drain` on a pool of two busy runners and one idle: the idle runner
// goes at once, both jobs finish, drain reports done once they have, and
// nothing of arcflow's is left: no runner pod, no finalizer. --undo brings the
// idle buffer back.
func TestDrainLetsBusyRunnersFinishAndLeavesNothing(t *testing.T) {
	parallel(t)
	const ns = "drain"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 30 * time.Second, Seed: 1,
	})
	// A CI run's drain waited 2 minutes on a runner left Registering with
	// its pod after its busy neighbours ended; cause unknown.
	logWorldOnFailure(t, w, ns, "app")
	require.NoError(t, w.Apply(ctx, world.WithIdleRunners(fullpath.RunnerDeployment, "app", 1)))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 && w.Runners.LivePods() == 1 }, 60*time.Second, 100*time.Millisecond,
		"one idle runner before any job")
	for _, name := range []string{"build-1", "build-2"} {
		w.Queue("octo-org/app", name, []string{"self-hosted", "linux", "build"})
	}
	require.Eventually(t, func() bool {
		jobs := w.GitHub.Jobs()
		return len(jobs) == 2 && !jobs[0].StartedAt.IsZero() && !jobs[1].StartedAt.IsZero() &&
			w.IdleRunners() == 1 && w.Runners.LivePods() == 3
	}, 60*time.Second, 100*time.Millisecond, "two busy runners and one idle")

	start := time.Now()
	wait := startCLI(t, ns, "drain", "--namespace", ns, "--timeout", "2m")
	// "At once" is before the jobs end: the busy runners still run below. On
	// a loaded machine the CLI's start and the hops from autoscaler to pool
	// to runner took more than 15 s.
	require.Eventually(t, func() bool { return w.IdleRunners() == 0 && w.Runners.LivePods() == 2 }, 25*time.Second, 100*time.Millisecond,
		"the idle runner is removed at once")
	idleGone := time.Since(start)
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "in_progress", j.Status, "the busy runners run on: %s", j.Name)
	}

	lines, err := wait()
	text := joined(lines)
	t.Logf("arcflow drain:\n%s", text)
	require.NoError(t, err)
	last := lines[len(lines)-1]
	require.Contains(t, last.text, "drain: done after")
	require.Contains(t, last.text, "ARC's controller-manager can be started again")
	require.Contains(t, text, "drain: hra/drain/app: holding 0 replicas for 87600h0m0s (force-scale)")
	require.NotContains(t, text, "back to ARC as capacityReservations", "both jobs run: none is handed back to ARC")
	var lastJobEnd time.Time
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "completed", j.Status, j.Name)
		require.Equal(t, "success", j.Conclusion, "%s ran to its end", j.Name)
		if j.CompletedAt.After(lastJobEnd) {
			lastJobEnd = j.CompletedAt
		}
	}
	require.True(t, last.at.After(lastJobEnd), "done (%v) only after the last job ended (%v)", last.at, lastJobEnd)
	require.Empty(t, w.Runners.Violations(), "no busy runner's pod was deleted")
	require.Zero(t, w.Runners.Interrupted())
	pods, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool})
	require.NoError(t, err)
	require.Empty(t, pods.Items, "no arcflow runner pod is left")
	require.Empty(t, finalizers(t, ctx, ns), "no object in the namespace has a finalizer")
	t.Logf("idle runner gone %v after drain started; last job ended %v after; drain reported done %v after (%v after the last job)",
		idleGone.Round(100*time.Millisecond), lastJobEnd.Sub(start).Round(100*time.Millisecond),
		last.at.Sub(start).Round(100*time.Millisecond), last.at.Sub(lastJobEnd).Round(100*time.Millisecond))

	lines, err = startCLI(t, ns, "drain", "--undo", "-n", ns)()
	require.NoError(t, err, "%v", lines)
	require.Contains(t, lines[0].text, "drain --undo: hra/drain/app: hold ended")
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond,
		"the idle buffer is back after --undo")
}
