package world

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/tools/buildtags"
)

// WebhookSecret signs the simulated deliveries.
const WebhookSecret = "arcflow-sim-webhook-secret"

// Config describes a world.
type Config struct {
	Stack *localstack.Stack
	// RepoRoot is the arcflow checkout (for deploy/crds).
	RepoRoot string
	// Namespace holds the world's resources; the worker and webhook watch only it.
	Namespace string
	// TemporalNamespace is the Temporal namespace arcflow's processes use
	// (default: Temporal's "default"). Tests side by side on one server each
	// take their own, so no test's worker takes another's tasks.
	TemporalNamespace string
	// Namespaces, when set, are further namespaces the world spans beside
	// Namespace: the worker and webhook then watch every namespace, and the
	// simulator plays the runners of all (see ApplyIn).
	Namespaces []string
	// Dir receives the process logs.
	Dir string
	// Binary is a built `arcflow`, with arcflow-webhook beside it, which runs the
	// webhook replicas; see BuildArcflow.
	Binary string
	// Orgs are the GitHub owners that are organizations.
	Orgs []string
	// RegisterDelay is pod Running -> runner registered (default 1 s).
	RegisterDelay time.Duration
	// JobDuration is how long every job runs (default 5 s); JobDurations,
	// when set, says it per job instead.
	JobDuration  time.Duration
	JobDurations func(fakegithub.JobInfo) time.Duration
	// JobHold holds jobs until a channel closes (sim.Runners.JobHold).
	JobHold func(fakegithub.JobInfo) <-chan struct{}
	// JobConclusion says how a job ends (sim.Runners.JobConclusion; nil: success).
	JobConclusion func(fakegithub.JobInfo) string
	// ExitDelay is how long an ephemeral runner takes to exit after its job
	// (sim.Runners.ExitDelay; default 0).
	ExitDelay time.Duration
	// Faults of the webhook deliveries.
	Loss, Duplicate, Reorder float64
	MaxDelay                 time.Duration
	// Env is added to the worker's and the webhook's environment, e.g.
	// ARCFLOW_BATCH_WINDOW=500ms.
	Env []string
	// Workers and Webhooks are how many `arcflow worker` and `arcflow webhook`
	// processes run (default 1 each), as replicas of one Deployment: the workers
	// share the task queue and elect one leader for the Kubernetes watchers, the
	// sender spreads deliveries over the webhooks in turn.
	Workers, Webhooks int
	// AllInOne runs one `arcflow all` process instead: Worker and Webhook are
	// then the same process (Workers and Webhooks are ignored).
	AllInOne bool
	// NoWebhook runs no webhook process and sends no deliveries: the jobs of
	// pools that join a runner scale set come from the Actions service.
	NoWebhook bool
	// Actions sets the fake Actions service's timings and mode.
	Actions fakegithub.ActionsOptions
	// WorkerArgs are added to the first worker's arguments (for example
	// --profiling-addr, which only a binary built with -tags profiling takes).
	WorkerArgs []string
	Seed       uint64
	Log        *slog.Logger
}

// World is arcflow running against the simulator.
type World struct {
	cfg     Config
	Kube    kubernetes.Interface
	GitHub  *fakegithub.Server
	Runners *sim.Runners
	Sender  *sim.Sender
	// Worker and Webhook are the first replicas, WorkerMetricsURL and so on
	// where they listen; the slices hold every replica, in the same order.
	Worker  *Process
	Webhook *Process
	// WebhookURL and WorkerMetricsURL are where the two processes listen.
	WebhookURL, WorkerMetricsURL, WebhookMetricsURL string
	Workers, Webhooks                               []*Process
	WebhookURLs, WorkerMetricsURLs                  []string
	WebhookMetricsURLs                              []string
	cancel                                          context.CancelFunc
	done                                            chan struct{}
}

// Start brings a world up: CRDs, the namespace, the fake GitHub, the simulated
// runners, the webhook sender, and the worker and webhook processes.
func Start(ctx context.Context, cfg Config) (*World, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.JobDuration == 0 {
		cfg.JobDuration = 5 * time.Second
	}
	cfg.Workers, cfg.Webhooks = max(cfg.Workers, 1), max(cfg.Webhooks, 1)
	if cfg.NoWebhook {
		cfg.Webhooks = 0
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("world dir: %w", err)
	}
	if err := cfg.Stack.InstallCRDs(ctx, filepath.Join(cfg.RepoRoot, "deploy", "crds")); err != nil {
		return nil, err
	}
	kube, err := cfg.Stack.Kube()
	if err != nil {
		return nil, err
	}
	if err := createNamespaces(ctx, kube, cfg.allNamespaces()); err != nil {
		return nil, err
	}
	gh, err := fakegithub.New(fakegithub.Options{Actions: cfg.Actions})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	w := &World{cfg: cfg, Kube: kube, GitHub: gh, cancel: cancel, done: make(chan struct{})}
	w.Runners = &sim.Runners{
		Kube: kube, GitHub: gh, Namespace: cfg.runnerNamespace(), Log: cfg.Log, Seed: cfg.Seed,
		RegisterDelay: cfg.RegisterDelay, JobDuration: cfg.JobDurations, JobHold: cfg.JobHold, ExitDelay: cfg.ExitDelay,
		JobConclusion: cfg.JobConclusion,
	}
	if w.Runners.JobDuration == nil {
		w.Runners.JobDuration = func(fakegithub.JobInfo) time.Duration { return cfg.JobDuration }
	}
	go func() { defer close(w.done); _ = w.Runners.Run(runCtx) }()

	env := []string{
		"KUBECONFIG=" + cfg.Stack.Kubeconfig, "TEMPORAL_ADDRESS=" + cfg.Stack.TemporalAddress,
		"GITHUB_TOKEN=ghp_simulated", "GITHUB_URL=" + gh.URL, "POD_NAMESPACE=" + cfg.Namespace,
		"GITHUB_WEBHOOK_SECRET_TOKEN=" + WebhookSecret, "ARCFLOW_LEASE_DURATION=4s",
	}
	if cfg.TemporalNamespace != "" {
		env = append(env, "TEMPORAL_NAMESPACE="+cfg.TemporalNamespace)
	}
	env = append(env, cfg.Env...) // last, so that a test's own values win
	if err := w.startReplicas(env); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	if err := w.WaitServing(ctx); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	if cfg.NoWebhook {
		gh.OnJobEvent(w.Runners.Notice)
		return w, nil
	}
	w.Sender = &sim.Sender{
		URL: w.WebhookURL, URLs: w.WebhookURLs, Secret: []byte(WebhookSecret), Orgs: cfg.Orgs, Seed: cfg.Seed, Log: cfg.Log,
		Loss: cfg.Loss, Duplicate: cfg.Duplicate, Reorder: cfg.Reorder, MaxDelay: cfg.MaxDelay,
	}
	w.Sender.Start(runCtx)
	gh.OnJobEvent(func(e fakegithub.JobEvent) {
		w.Runners.Notice(e)
		w.Sender.Send(e)
	})
	return w, nil
}

// startReplicas starts cfg.Workers worker and cfg.Webhooks webhook processes,
// each on ports of its own; the first of each keeps the log names worker.log and
// webhook.log, the others get worker-2.log, webhook-2.log and so on.
func (w *World) startReplicas(env []string) error {
	cfg := w.cfg
	common := append(cfg.watchFlags(), "--log-level=warn")
	if cfg.AllInOne {
		return w.startAllInOne(env, common)
	}
	ports, err := localstack.FreePorts(cfg.Workers + cfg.Webhooks)
	if err != nil {
		return err
	}
	for i := range cfg.Workers {
		addr := fmt.Sprintf("127.0.0.1:%d", ports[i])
		args := append([]string{"worker", "--enable-leader-election", "--metrics-addr=" + addr}, common...)
		if i == 0 {
			args = append(args, cfg.WorkerArgs...)
		}
		p, err := startProcess(cfg.Dir, replicaName("worker", i), cfg.Binary, env, args...)
		if err != nil {
			return err
		}
		w.Workers, w.WorkerMetricsURLs = append(w.Workers, p), append(w.WorkerMetricsURLs, "http://"+addr+"/metrics")
	}
	for i := range cfg.Webhooks {
		addr := fmt.Sprintf("127.0.0.1:%d", ports[cfg.Workers+i])
		p, err := startProcess(cfg.Dir, replicaName("webhook", i), WebhookBinary(cfg.Binary), env,
			append([]string{"webhook", "--webhook-addr=" + addr}, common...)...)
		if err != nil {
			return err
		}
		w.Webhooks = append(w.Webhooks, p)
		w.WebhookURLs = append(w.WebhookURLs, "http://"+addr+"/webhook")
		w.WebhookMetricsURLs = append(w.WebhookMetricsURLs, "http://"+addr+"/metrics")
	}
	w.Worker, w.WorkerMetricsURL = w.Workers[0], w.WorkerMetricsURLs[0]
	if len(w.Webhooks) > 0 {
		w.Webhook, w.WebhookURL, w.WebhookMetricsURL = w.Webhooks[0], w.WebhookURLs[0], w.WebhookMetricsURLs[0]
	}
	return nil
}

// startAllInOne starts one `arcflow all`; its webhook port serves the same
// /metrics as its metrics port.
func (w *World) startAllInOne(env, common []string) error {
	ports, err := localstack.FreePorts(2)
	if err != nil {
		return err
	}
	metrics, hook := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	p, err := startProcess(w.cfg.Dir, "all", w.cfg.Binary, env,
		append([]string{"all", "--enable-leader-election", "--metrics-addr=" + metrics, "--webhook-addr=" + hook}, common...)...)
	if err != nil {
		return err
	}
	w.Workers, w.WorkerMetricsURLs = []*Process{p}, []string{"http://" + metrics + "/metrics"}
	w.Webhooks, w.WebhookURLs, w.WebhookMetricsURLs = []*Process{p}, []string{"http://" + hook + "/webhook"}, []string{"http://" + hook + "/metrics"}
	w.Worker, w.WorkerMetricsURL = p, w.WorkerMetricsURLs[0]
	w.Webhook, w.WebhookURL, w.WebhookMetricsURL = p, w.WebhookURLs[0], w.WebhookMetricsURLs[0]
	return nil
}

func replicaName(part string, i int) string {
	if i == 0 {
		return part
	}
	return fmt.Sprintf("%s-%d", part, i+1)
}

// WaitServing waits until every worker's metrics endpoint and every webhook answer.
func (w *World) WaitServing(ctx context.Context) error {
	var urls []string
	for _, u := range w.WorkerMetricsURLs {
		urls = append(urls, strings.TrimSuffix(u, "metrics")+"healthz")
	}
	for _, u := range w.WebhookURLs {
		urls = append(urls, strings.TrimSuffix(u, "webhook")+"healthz")
	}
	for _, url := range urls {
		if err := waitHTTP(ctx, url); err != nil {
			return err
		}
	}
	return nil
}

func waitHTTP(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer: %w", url, ctx.Err())
		case <-tick.C:
		}
	}
}

// Queue queues a job in the fake GitHub; the sender delivers its webhook.
func (w *World) Queue(repo, name string, labels []string) {
	w.GitHub.QueueJob(repo, name, labels)
}

// Apply applies a manifest in the world's namespace with kubectl.
func (w *World) Apply(ctx context.Context, manifest string) error {
	return w.ApplyIn(ctx, w.cfg.Namespace, manifest)
}

// ApplyIn applies a manifest in namespace, one of the world's, with kubectl.
func (w *World) ApplyIn(ctx context.Context, namespace, manifest string) error {
	path := filepath.Join(w.cfg.Dir, fmt.Sprintf("manifest-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if out, err := w.cfg.Stack.Kubectl(ctx, "apply", "-n", namespace, "-f", path); err != nil {
		return fmt.Errorf("apply in %s: %w: %s", namespace, err, out)
	}
	return nil
}

// Stop stops the processes and the simulator. It does not delete resources.
func (w *World) Stop() error {
	for _, p := range append(append([]*Process{}, w.Webhooks...), w.Workers...) {
		p.Stop(5 * time.Second)
	}
	w.cancel()
	if w.Runners != nil {
		<-w.done
	}
	return w.GitHub.Close()
}

// BuildArcflow builds cmd/arcflow into dir, and beside it arcflow-webhook (the
// webhook server alone, as the image ships it), and returns arcflow's path.
// Both get the release tags; tags, when given, are build tags of arcflow alone
// (for example profiling).
func BuildArcflow(ctx context.Context, repoRoot, dir string, tags ...string) (string, error) {
	bin := filepath.Join(dir, "arcflow")
	arcflow := []string{"-tags", buildtags.With(tags...), "-o", bin}
	webhook := []string{"-tags", buildtags.With(buildtags.WebhookOnly), "-o", WebhookBinary(bin)}
	for _, build := range [][]string{arcflow, webhook} {
		cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, build...), "./cmd/arcflow")...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %w: %s", filepath.Base(build[len(build)-1]), err, out)
		}
	}
	return bin, nil
}

// WebhookBinary is the webhook server that BuildArcflow builds beside arcflow.
func WebhookBinary(arcflow string) string {
	return filepath.Join(filepath.Dir(arcflow), "arcflow-webhook")
}

// Namespace is the world's namespace.
func (w *World) Namespace() string { return w.cfg.Namespace }

// IdleRunners counts the runners GitHub lists online and not busy.
func (w *World) IdleRunners() int {
	n := 0
	for _, r := range w.GitHub.Runners() {
		if r.Online && !r.Busy {
			n++
		}
	}
	return n
}

// RestartArcflow kills every worker and webhook process and starts them
// again with env added (KEY=value), as a rollout of edited Deployments
// would, and waits until they serve.
func (w *World) RestartArcflow(ctx context.Context, env ...string) error {
	seen := map[*Process]bool{} // with AllInOne, the worker is the webhook
	for _, p := range append(append([]*Process(nil), w.Workers...), w.Webhooks...) {
		if seen[p] {
			continue
		}
		seen[p] = true
		p.Kill()
		p.SetEnv(env...)
		if err := p.Start(); err != nil {
			return err
		}
	}
	return w.WaitServing(ctx)
}
