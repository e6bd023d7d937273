package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

// The operations guide's "Moving to another Temporal", done step by step as it
// says, from the chart's bundled Temporal to a Temporal of the operator's own,
// while a runner runs a job: the new Temporal prepared (a namespace, then
// `arcflow setup`), the worker scaled to 0, `helm upgrade` with
// temporal.address and temporal.namespace, the new worker and webhook run from
// the upgraded Deployments, the old claim deleted. The busy runner finishes
// its job on the pod it started on, a job queued after the move gets a runner,
// and nothing is left behind.
func TestHelmUpgradeMovesOffTheBundledTemporalWithARunnerBusy(t *testing.T) {
	parallel(t)
	const release, system, runners, namespace = "arcflow-moving", "arcflow-moving", "moving-runners", "arcflow"
	r := installBundled(t, release, system, runners)
	ctx := r.ctx
	labels := []string{"self-hosted", "ubuntu-latest"}

	// GitHub around the release: runners that register and run jobs, and
	// signed deliveries to the installed webhook. The first job runs until
	// the test lets it end.
	hold := make(chan struct{})
	var release1 sync.Once
	letItEnd := func() { release1.Do(func() { close(hold) }) }
	t.Cleanup(letItEnd)
	rctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	registrar := &sim.Runners{Kube: r.kube, GitHub: r.gh, Namespace: runners, RegisterDelay: 200 * time.Millisecond,
		JobDuration: func(fakegithub.JobInfo) time.Duration { return 2 * time.Second },
		JobHold: func(j fakegithub.JobInfo) <-chan struct{} {
			if j.Name == "before-move" {
				return hold
			}
			return nil
		},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	go func() { _ = registrar.Run(rctx) }()
	sender := &sim.Sender{URL: r.webhookURL, Secret: []byte(webhookSecret)}
	sender.Start(rctx)
	r.gh.OnJobEvent(func(e fakegithub.JobEvent) {
		registrar.Notice(e)
		sender.Send(e)
	})
	applyHelloPool(t, ctx, runners)

	busy := r.gh.QueueJob("Codertocat/Hello-World", "before-move", labels)
	var runner string
	eventually(t, ctx, "the job runs on a runner of the bundled Temporal's pool", func() bool {
		j, ok := r.gh.Job(busy.ID)
		runner = j.RunnerName
		return ok && j.Status == "in_progress"
	})
	claim := "data-" + release + "-temporal-0"
	eventually(t, ctx, "the StatefulSet's controller made the bundled Temporal's claim", func() bool {
		_, err := stack.JSONPath(ctx, system, "pvc", claim, "{.metadata.name}")
		return err == nil
	})

	// 1. Prepare the new Temporal: a namespace, then arcflow's search attributes.
	next, err := stack.StartExtraTemporal(ctx, "moving-next", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = next.Stop() })
	out, err := next.Temporal(ctx, "operator", "namespace", "create", "--namespace", namespace)
	require.NoError(t, err, out)
	arcflowOn := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, arcflowBinary(t), args...)
		cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+next.Address, "TEMPORAL_NAMESPACE="+namespace, "KUBECONFIG="+stack.Kubeconfig)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	eventually(t, ctx, "arcflow setup registers the search attributes (once the server knows the new namespace)", func() bool {
		out, err = arcflowOn("setup")
		return err == nil
	})
	t.Logf("arcflow setup: %s", strings.TrimSpace(out))

	// 2. Stop the worker. The Deployment's pods end; here that is the host process.
	out, err = stack.Kubectl(ctx, "scale", "-n", system, "deploy/"+release+"-worker", "--replicas", "0")
	require.NoError(t, err, out)
	r.worker.stop()

	// 3. Upgrade with the new values: the user's values again, and Temporal's.
	upgraded := runHelm(t, ctx, append([]string{"upgrade", release, chartDir(t), "--namespace", system},
		append(r.values, "--set", "temporal.address="+next.Address, "--set", "temporal.namespace="+namespace)...)...)
	require.Contains(t, upgraded, "STATUS: deployed")
	replicas, err := stack.JSONPath(ctx, system, "deploy", release+"-worker", "{.spec.replicas}")
	require.NoError(t, err, replicas)
	require.Equal(t, "2", replicas, "the upgrade brings the worker back to its replicas")
	statefulSets, err := stack.Kubectl(ctx, "get", "statefulsets", "-n", system, "-o", "name")
	require.NoError(t, err, statefulSets)
	require.Empty(t, strings.TrimSpace(statefulSets), "the upgrade removed the bundled Temporal")
	_, err = stack.Kubectl(ctx, "get", "pvc", "-n", system, claim)
	require.NoError(t, err, "the upgrade kept the bundled Temporal's claim")
	// The rollout: the bundled Temporal's pod and the old webhook's end, and
	// the new worker and webhook start from the upgraded Deployments. The
	// webhook keeps its address, where GitHub's deliveries go.
	r.server.stop()
	r.webhook.stop()
	ports, err := localstack.FreePorts(1)
	require.NoError(t, err)
	worker := hostRun(t, ctx, r.kube, system, release+"-worker", "worker", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	webhook := hostRun(t, ctx, r.kube, system, release+"-webhook", "webhook", "--webhook-addr", r.webhookAddr)
	for _, c := range []*hostContainer{worker.container, webhook.container} {
		require.Equal(t, next.Address, c.lookup("TEMPORAL_ADDRESS"), "the upgraded Deployments use the new Temporal")
		require.Equal(t, namespace, c.lookup("TEMPORAL_NAMESPACE"))
	}
	movedAt := time.Now()
	workerProc := worker.container.start(r.img)
	workerProc.waitReady(t, ctx, worker.readyURL)
	webhookProc := webhook.container.start(r.img)
	webhookProc.waitReady(t, ctx, webhook.readyURL)

	// The pool on the new Temporal takes over the busy runner.
	eventually(t, ctx, "arcflow status on the new Temporal shows the runner taken over", func() bool {
		out, err = arcflowOn("status", "-n", runners)
		return err == nil && strings.Contains(out, "1 taken over")
	})
	tookOver := time.Since(movedAt)
	t.Logf("arcflow status on the new Temporal, %v after the worker started:\n%s", tookOver.Round(100*time.Millisecond), out)
	// The worker writes the pool's status a moment after the pool knows.
	takenOver := func() string { return conditionField(ctx, runners, "rdeploy", "hello", "RunnersTakenOver", "status") }
	eventually(t, ctx, "the RunnerDeployment says it runs a runner it took over", func() bool { return takenOver() == "True" })

	after := r.gh.QueueJob("Codertocat/Hello-World", "after-move", labels)
	eventually(t, ctx, "a job queued after the move runs to its end", func() bool {
		j, ok := r.gh.Job(after.ID)
		return ok && j.Status == "completed"
	})
	aj, _ := r.gh.Job(after.ID)

	// 4. Delete the old Temporal: its claim, which the upgrade kept.
	out, err = stack.Kubectl(ctx, "delete", "pvc", "-n", system, claim, "--wait=false")
	require.NoError(t, err, out)

	letItEnd()
	eventually(t, ctx, "the job that ran across the move ends", func() bool {
		j, ok := r.gh.Job(busy.ID)
		return ok && j.Status == "completed"
	})
	bj, _ := r.gh.Job(busy.ID)
	require.Equal(t, "success", bj.Conclusion)
	require.Equal(t, runner, bj.RunnerName, "it ended on the runner it started on")
	require.Empty(t, registrar.Violations(), "no busy runner's pod was deleted")
	require.Zero(t, registrar.Interrupted(), "no job interrupted")
	eventually(t, ctx, "no runner pod, runner Secret or registered runner is left", func() bool {
		return nothingLeft(ctx, r.kube, r.gh, runners)
	})
	eventually(t, ctx, "the RunnerDeployment says its taken-over runners ended", func() bool { return takenOver() == "False" })

	out, err = stack.Kubectl(ctx, "delete", "-n", runners, "hra,rdeploy", "--all")
	require.NoError(t, err, out)
	poolID := contract.PoolWorkflowID(runners, "RunnerDeployment", "hello")
	eventually(t, ctx, "the pool's workflow on the new Temporal ends with the delete", func() bool {
		out, err := next.Temporal(ctx, "workflow", "describe", "--namespace", namespace, "--workflow-id", poolID, "--output", "json")
		return err == nil && strings.Contains(out, "WORKFLOW_EXECUTION_STATUS_COMPLETED")
	})
	for _, p := range []*hostProcess{workerProc, webhookProc} {
		require.NotContains(t, p.output(), "forbidden", "%s was never refused under the installed RBAC", p.name)
	}
	t.Logf("moved off the bundled Temporal with a job running: taken over %v after the new worker started; the job queued after the move waited %v for its runner",
		tookOver.Round(100*time.Millisecond), aj.StartedAt.Sub(aj.CreatedAt).Round(100*time.Millisecond))
}
