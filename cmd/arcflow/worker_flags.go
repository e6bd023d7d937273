//go:build !webhookonly

package main

import (
	"flag"
	"time"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/worker"
	"github.com/arcflow/arcflow/workflows"
)

// workerFlags are the flags of the Temporal worker and the Kubernetes watchers.
type workerFlags struct {
	podDefaults               activities.PodDefaults
	commonLabels, pullSecrets string
	election                  worker.LeaderElection
	livenessDuration          time.Duration
	metricsAddr               string
	stickyCacheSize           int
	runnerTimings             workflows.RunnerTimings
	volumeIdleTimeout         time.Duration
	poolDeletionGrace         time.Duration
	poolStatusInterval        time.Duration
	groupRunnerEnds           bool
	workflowCheckPeriod       time.Duration
	arcLease, arcPodSelector  string
	githubListInterval        time.Duration
	githubBudgetShare         float64
	githubCAFile              string
	setupTemporal             bool
}

func addWorkerFlags(fs *flag.FlagSet) *workerFlags {
	w := &workerFlags{podDefaults: activities.DefaultPodDefaults()}
	d := &w.podDefaults
	fs.StringVar(&d.RunnerImage, "runner-image", d.RunnerImage, "default runner image")
	fs.StringVar(&d.JITRunnerImage, "jit-runner-image", envOr("ARCFLOW_JIT_RUNNER_IMAGE", d.JITRunnerImage),
		"runner image of JIT and scale-set pools that name none, started with command "+activities.JITRunnerCommand+
			" unless the pool gives one; empty: --runner-image (env ARCFLOW_JIT_RUNNER_IMAGE)")
	fs.StringVar(&d.DockerImage, "docker-image", d.DockerImage, "docker sidecar image")
	fs.StringVar(&d.DockerGID, "docker-gid", d.DockerGID, "docker group ID in the sidecar")
	fs.StringVar(&d.RegistryMirror, "docker-registry-mirror", "", "default docker registry mirror")
	fs.StringVar(&w.commonLabels, "common-runner-labels", "", "comma-separated labels added to every runner")
	fs.StringVar(&w.pullSecrets, "runner-image-pull-secret", "", "comma-separated image pull secrets of runner pods")
	e := &w.election
	fs.BoolVar(&e.Enabled, "enable-leader-election", false, "run the Kubernetes watchers in one replica at a time")
	fs.StringVar(&e.ID, "leader-election-id", "arcflow", "name of the leader-election Lease")
	fs.StringVar(&e.Namespace, "leader-election-namespace", envOr("POD_NAMESPACE", "default"), "namespace of the Lease")
	fs.DurationVar(&e.LeaseDuration, "leader-election-lease-duration", envDuration("ARCFLOW_LEASE_DURATION", worker.DefaultLeaseDuration),
		"how long the leader's Lease holds unrenewed: a killed leader's watchers move to another replica after it (renewed every tenth of it)")
	fs.DurationVar(&w.livenessDuration, "worker-liveness-duration", envDuration("ARCFLOW_WORKER_LIVENESS_DURATION", worker.DefaultLivenessDuration),
		"how long a worker's liveness Lease holds unrenewed: a killed worker's runner scale set polls move to another replica after it (renewed every third of it)")
	fs.StringVar(&w.metricsAddr, "metrics-addr", envOr("ARCFLOW_METRICS_ADDR", ":8080"), "address of the Prometheus /metrics and /healthz endpoint (empty disables it)")
	fs.IntVar(&w.stickyCacheSize, "sticky-workflow-cache-size", envInt("ARCFLOW_STICKY_WORKFLOW_CACHE_SIZE", worker.DefaultStickyCacheSize),
		"workflows kept in memory between tasks; more than are live costs nothing, fewer replays histories")
	fs.DurationVar(&w.runnerTimings.UnschedulableTimeout, "runner-unschedulable-timeout",
		envDuration("ARCFLOW_RUNNER_UNSCHEDULABLE_TIMEOUT", workflows.DefaultUnschedulableTimeout),
		"how long a runner pod no node can take keeps its slot before it is deleted and the pool backs off")
	fs.DurationVar(&w.poolDeletionGrace, "pool-deletion-grace-period",
		envDuration("ARCFLOW_POOL_DELETION_GRACE_PERIOD", workflows.DefaultPoolDeletionGrace),
		"how long a deleted RunnerDeployment or RunnerSet waits for its busy runners to finish their jobs before it deletes their pods (env ARCFLOW_POOL_DELETION_GRACE_PERIOD)")
	fs.DurationVar(&w.poolStatusInterval, "pool-status-interval",
		envDuration("ARCFLOW_POOL_STATUS_INTERVAL", workflows.DefaultPoolStatusInterval),
		"how often at most a RunnerDeployment's or RunnerSet's status is written when only its replica counts changed; failures and taken-over runners are written at once (env ARCFLOW_POOL_STATUS_INTERVAL)")
	fs.BoolVar(&w.groupRunnerEnds, "group-runner-ends", envBoolOr("ARCFLOW_GROUP_RUNNER_ENDS", true),
		"send the ends of runners that end within 100 ms of each other to their pool as one signal (one Temporal action instead of one a runner), once every live worker replica's liveness Lease says it reads such signals: while older replicas live, each end goes alone (env ARCFLOW_GROUP_RUNNER_ENDS)")
	fs.DurationVar(&w.workflowCheckPeriod, "workflow-check-period",
		envDuration("ARCFLOW_WORKFLOW_CHECK_PERIOD", worker.DefaultWorkflowCheckPeriod),
		"how often the leader starts again the pool and autoscaler workflows Temporal no longer runs (its store lost or replaced); the pools take over their runners (0 disables it)")
	fs.DurationVar(&w.volumeIdleTimeout, "runnerset-volume-idle-timeout",
		envDuration("ARCFLOW_RUNNERSET_VOLUME_IDLE_TIMEOUT", workflows.DefaultVolumeIdleTimeout),
		"how long a RunnerSet keeps a volume slot no runner used before deleting its claims")
	fs.StringVar(&w.arcLease, "arc-controller-lease", envOr("ARCFLOW_ARC_CONTROLLER_LEASE", worker.DefaultARCControllerLease),
		"namespace/name of ARC's leader-election Lease: while ARC's controller-manager holds it, or runs pods matching --arc-controller-pod-selector in that namespace, arcflow starts no pool or autoscaler (empty disables the check)")
	fs.StringVar(&w.arcPodSelector, "arc-controller-pod-selector", envOr("ARCFLOW_ARC_CONTROLLER_POD_SELECTOR", worker.DefaultARCControllerPodSelector),
		"label selector of ARC's controller-manager pods, for ARC running without leader election (empty: only the Lease counts)")
	fs.DurationVar(&w.githubListInterval, "github-runner-list-interval",
		envDuration("ARCFLOW_GITHUB_RUNNER_LIST_INTERVAL", github.DefaultRunnerListInterval),
		"how old the shared list of a scope's runners may be when runners look themselves up or pools ask which are busy (one list per scope per interval while anything waits)")
	fs.Float64Var(&w.githubBudgetShare, "github-budget-share", envFloat("ARCFLOW_GITHUB_BUDGET_SHARE", github.DefaultBudgetShare),
		"share of each credential's GitHub rate limit arcflow plans within; past it, reconciles and runner-list refreshes wait for the window's reset (registration and unregistration never do)")
	fs.StringVar(&w.githubCAFile, "github-ca-file", envOr("ARCFLOW_GITHUB_CA_FILE", ""),
		"PEM file of CA certificates trusted beside the system's for GitHub's API and its Actions service (a GitHub Enterprise Server with a private CA); a proxy comes from HTTPS_PROXY, HTTP_PROXY and NO_PROXY")
	fs.BoolVar(&w.setupTemporal, "setup-temporal", envBool("ARCFLOW_SETUP_TEMPORAL"),
		"at start, register the Temporal namespace when it is missing and arcflow's search attributes, as `arcflow setup` does (env ARCFLOW_SETUP_TEMPORAL)")
	return w
}

// finish derives what the parsed flags imply.
func (w *workerFlags) finish() {
	w.podDefaults.CommonLabels, w.podDefaults.PullSecrets = splitList(w.commonLabels), splitList(w.pullSecrets)
	w.election.RenewDeadline = w.election.LeaseDuration * 2 / 3
	w.election.RetryPeriod = worker.RetryPeriod(w.election.LeaseDuration)
}
