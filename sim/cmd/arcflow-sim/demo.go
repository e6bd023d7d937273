package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/world"
)

const demoNamespace = "arcflow-demo"

// runDemo is `make demo`: the examples from deploy/examples under a short workload.
func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	dir := fs.String("dir", ".demo", "directory for the stack's state and the logs")
	jobs := fs.Int("jobs", 24, "jobs to queue")
	rate := fs.Float64("rate", 3, "jobs queued per second")
	duration := fs.Duration("job-duration", 3*time.Second, "how long each job runs")
	exit := fs.Bool("exit", false, "stop after the summary instead of waiting for Ctrl-C")
	_ = fs.Parse(args)

	s, err := startSession(ctx, *dir, sessionOptions{ui: true})
	if err != nil {
		return err
	}
	defer func() {
		step("stopping everything the demo started")
		s.close()
	}()
	step("starting the fake GitHub, simulated runners, arcflow worker and arcflow webhook")
	w, err := s.world(ctx, world.Config{
		Namespace: demoNamespace, Orgs: []string{"example-org"}, RegisterDelay: time.Second, JobDuration: *duration, Seed: 1,
	})
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	// No volume provisioner runs here: offer volumes for the RunnerSet's claims.
	if err := offerVolumes(ctx, w, 4, "10Gi"); err != nil {
		return err
	}
	step("kubectl apply -f deploy/examples/")
	out, err := s.stack.Kubectl(ctx, "apply", "-n", demoNamespace, "-f", filepath.Join(s.root, "deploy", "examples"))
	if err != nil {
		return err
	}
	fmt.Print(indent(out))

	step(fmt.Sprintf("queueing %d jobs at %.0f/s (gpu jobs for the RunnerDeployment, cache jobs for the RunnerSet)", *jobs, *rate))
	workload := sim.Workload{Jobs: *jobs, Rate: *rate, Repositories: []string{"example-org/example-repo"},
		LabelSets: [][]string{{"self-hosted", "linux", "gpu"}, {"self-hosted", "linux", "gpu"}, {"self-hosted", "linux", "cache"}}}
	started := time.Now()
	go func() { _ = workload.Run(ctx, w.Queue) }()
	live := newProgressLine(os.Stdout)
	err = waitFor(ctx, 10*time.Minute, "jobs to finish", func() bool {
		line, done := progress(w, *jobs)
		live.show(line)
		return done
	})
	live.end()
	if err != nil {
		return err
	}
	summary(w, time.Since(started))
	whereToLook(s)
	if *exit {
		return nil
	}
	fmt.Println("\nEverything keeps running for you to look around. Ctrl-C stops it all.")
	<-ctx.Done()
	fmt.Println()
	return nil
}

// progress is the live line: jobs by status, runners by state, pods.
func progress(w *world.World, total int) (string, bool) {
	counts := map[string]int{}
	for _, j := range w.GitHub.Jobs() {
		counts[j.Status]++
	}
	idle, busy := 0, 0
	for _, r := range w.GitHub.Runners() {
		if r.Busy {
			busy++
		} else if r.Online {
			idle++
		}
	}
	line := fmt.Sprintf("  jobs: %3d queued %3d running %3d done of %d | runners: %2d idle %2d busy | pods: %2d   ",
		counts["queued"], counts["in_progress"], counts["completed"], total, idle, busy, w.Runners.LivePods())
	return line, counts["completed"] == total
}

func summary(w *world.World, took time.Duration) {
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
	}
	stats := w.Sender.Stats()
	calls := 0
	for _, n := range w.GitHub.CallCounts() {
		calls += n
	}
	fmt.Printf(`
Summary
  jobs done                    %d in %s
  queued -> started p50/95/99  %s
  runner pods created          %d
  GitHub API calls             %d
  webhook deliveries           %d accepted, %d refused, %d failed
  pods deleted while busy      %d
`, len(waits), took.Round(time.Second), world.PercentilesOf(waits), len(w.Runners.PodTimes()), calls,
		stats.Accepted, stats.Rejected, stats.Failed, len(w.Runners.Violations()))
}

func whereToLook(s *session) {
	fmt.Printf(`
Where to look
  Temporal Web UI      %s/namespaces/default/workflows
    autoscaler         hra/%s/example-runners
    pools              pool/%s/runnerdeployment/example-runners, pool/%s/runnerset/example-runnerset
    runners            search: ArcflowPool = "%s/example-runners"
  kubectl              KUBECONFIG=%s kubectl get hra,rdeploy,runnerset,pods -n %s
  force scale          temporal workflow signal --address %s --workflow-id hra/%s/example-runners \
                         --name force-scale --input '{"replicas":3,"duration":"5m"}'
  logs                 %s
`, s.stack.TemporalUIAddress, demoNamespace, demoNamespace, demoNamespace, demoNamespace,
		s.stack.Kubeconfig, demoNamespace, s.stack.TemporalAddress, demoNamespace, s.dir)
}

// offerVolumes creates hostPath PersistentVolumes for claims to bind to.
func offerVolumes(ctx context.Context, w *world.World, n int, size string) error {
	for i := range n {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pv-%d", w.Namespace(), i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: fmt.Sprintf("/tmp/%s-pv-%d", w.Namespace(), i)}},
			},
		}
		if _, err := w.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("offer volume: %w", err)
		}
	}
	return nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
