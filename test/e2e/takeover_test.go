package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// The ARC installation the takeover test starts from: RunnerDeployment arc-app
// of takeover-org/app, whose RunnerReplicaSet ARC gave six Runners.
const (
	takeoverRepo   = "takeover-org/app"
	takeoverRD     = "arc-app"
	takeoverRRS    = "arc-app-7xk2q"
	takeoverHash   = "5d8f9c7b6"
	arcRunnerCount = 6
)

func takeoverRunnerDeployment() string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  replicas: %[3]d
  template:
    spec:
      repository: %[2]s
      labels: [linux, %[1]s]
`, takeoverRD, takeoverRepo, arcRunnerCount)
}

// arcHRA is an HRA as ARC's webhook server left it: three capacity
// reservations, one per job it saw queued (no job IDs).
func arcHRA(name, kind string, reservedAt time.Time) string {
	var reservations strings.Builder
	for i := range 3 {
		at := reservedAt.Add(time.Duration(i) * time.Second).UTC()
		fmt.Fprintf(&reservations, "  - effectiveTime: %q\n    expirationTime: %q\n    replicas: 1\n",
			at.Format(time.RFC3339), at.Add(30*time.Minute).Format(time.RFC3339))
	}
	return world.WebhookHRA(name, kind, 8, 5) + "  capacityReservations:\n" + reservations.String()
}

// arcRunnerName is the i-th Runner of ARC's RunnerReplicaSet, named as ARC's
// generateName names them.
func arcRunnerName(i int) string { return fmt.Sprintf("%s-r%04d", takeoverRRS, i) }

// createARCRunners creates what ARC's controllers keep for a RunnerDeployment:
// a RunnerReplicaSet owned by it, Runners owned by that with ARC's finalizer,
// and a pod per Runner owned by it, with ARC's labels, finalizer and its
// registration token in plain env (ARC puts it there).
func createARCRunners(t *testing.T, ctx context.Context, dyn dynamic.Interface, w *world.World, ns string, rd *unstructured.Unstructured, token string) {
	controller := func(apiVersion, kind, name string, uid types.UID) []any {
		return []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name, "uid": string(uid), "controller": true, "blockOwnerDeletion": true}}
	}
	labels := map[string]any{activities.LabelRunnerDeployment: takeoverRD, activities.LabelTemplateHash: takeoverHash}
	rrs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "RunnerReplicaSet",
		"metadata": map[string]any{"name": takeoverRRS, "labels": labels,
			"ownerReferences": controller(v1alpha1.GroupVersion.String(), "RunnerDeployment", takeoverRD, rd.GetUID())},
		"spec": map[string]any{"replicas": int64(arcRunnerCount), "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"repository": takeoverRepo, "labels": []any{"linux", takeoverRD}}}},
	}}
	rrs, err := dyn.Resource(activities.ARCRunnerReplicaSetResource).Namespace(ns).Create(ctx, rrs, metav1.CreateOptions{})
	require.NoError(t, err)
	for i := range arcRunnerCount {
		name := arcRunnerName(i)
		runner := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Runner",
			"metadata": map[string]any{"name": name, "labels": labels, "finalizers": []any{activities.ARCRunnerFinalizer},
				"annotations":     map[string]any{"sync-time": time.Now().UTC().Format(time.RFC3339)},
				"ownerReferences": controller(v1alpha1.GroupVersion.String(), "RunnerReplicaSet", takeoverRRS, rrs.GetUID())},
			"spec": map[string]any{"repository": takeoverRepo, "labels": []any{"linux", takeoverRD}, "ephemeral": true},
		}}
		runner, err := dyn.Resource(activities.ARCRunnerResource).Namespace(ns).Create(ctx, runner, metav1.CreateOptions{})
		require.NoError(t, err)
		env := []corev1.EnvVar{
			{Name: "RUNNER_ORG"}, {Name: "RUNNER_REPO", Value: takeoverRepo}, {Name: "RUNNER_ENTERPRISE"},
			{Name: "RUNNER_LABELS", Value: "linux," + takeoverRD}, {Name: "RUNNER_GROUP"}, {Name: "RUNNER_EPHEMERAL", Value: "true"},
			{Name: "RUNNER_NAME", Value: name}, {Name: "RUNNER_TOKEN", Value: token}, {Name: "GITHUB_URL", Value: w.GitHub.URL + "/"},
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{activities.ARCPodFinalizer},
				Labels: map[string]string{activities.LabelRunner: "", activities.LabelRunnerDeployment: takeoverRD, activities.LabelTemplateHash: takeoverHash},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Runner", Name: name, UID: runner.GetUID(),
					Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue()}}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "runner", Image: "summerwind/actions-runner:latest", Env: env}}},
		}
		_, err = w.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// handover is what handOver needs of a takeover test: ARC's pool (resource
// is kubectl's name for its kind), its runners, and the repository and label
// of its jobs.
type handover struct {
	ns, resource, kind, name string
	arc                      arcNamed
	repo, label              string
	stopLease                func() time.Time
	killWorker               bool
	// arcNamespace is where ARC's chart is installed.
	arcNamespace string
}

// handOver plays the switch from a live ARC up to arcflow acting: three of
// ARC's runners take jobs, their queued deliveries are answered before the HRA
// with ARC's three reservations for them is applied (ARC's webhook server took
// them; one answered after the HRA exists would reserve its job a second time
// and keep a runner for 30 minutes), arcflow reports ARC's controller as active
// and creates no pod while ARC's Lease is renewed. ARC's admission webhooks
// stay registered once its controller stops, as they do after the guide's
// scale to 0: arcflow names them within 30 s of the Lease's expiry (and they
// refuse the user's edit), the operator runs the commands arcflow gives, and
// arcflow acts within 30 s of that, its worker SIGKILLed and started again at
// that moment if asked. It returns when ARC was gone (the Lease's expiry, or
// the webhooks' removal if later), when arcflow acted, and the live runner
// pods' peak from before the handover on.
func handOver(t *testing.T, ctx context.Context, w *world.World, h handover) (expiry, acting time.Time, peak func() int) {
	t.Helper()
	registerARCWebhooks(t, ctx, h.arcNamespace, h.ns)
	reservedAt := time.Now()
	for i := range 3 {
		w.Queue(h.repo, fmt.Sprintf("arc-%d", i), []string{"self-hosted", "linux", h.label})
	}
	require.Eventually(t, func() bool { return busyARCRunners(w, h.arc) == 3 }, 30*time.Second, 100*time.Millisecond, "three of ARC's runners run jobs")
	require.NoError(t, w.Sender.Flush(ctx), "the queued deliveries answered before the HRA exists")
	require.NoError(t, w.Apply(ctx, arcHRA(h.name, h.kind, reservedAt)))

	require.Eventually(t, func() bool {
		return acceptedField(ctx, h.ns, h.resource, h.name, "reason") == "ARCControllerActive" &&
			acceptedField(ctx, h.ns, "hra", h.name, "reason") == "ARCControllerActive"
	}, 30*time.Second, 200*time.Millisecond, "arcflow reports ARC's controller as active")
	peak = world.TrackPeak(ctx, 50*time.Millisecond, w.Runners.LivePods)
	require.Equal(t, len(h.arc), len(w.Runners.PodTimes()), "arcflow created no pod while ARC ran")

	expiry = h.stopLease().Add(arcLeaseSeconds * time.Second)
	if removed := removeARCWebhooksAsTold(t, ctx, h.ns, h.resource, h.name, arcLeaseSeconds*time.Second+30*time.Second); removed.After(expiry) {
		expiry = removed
	}
	require.Eventually(t, func() bool {
		return acceptedField(ctx, h.ns, h.resource, h.name, "status") == "True"
	}, 30*time.Second, 200*time.Millisecond, "arcflow acts within 30 s of ARC's webhooks' removal")
	acting = time.Now()
	if h.killWorker {
		require.NoError(t, w.Worker.Restart(), "SIGKILL the worker mid-adoption and start it again")
	}
	return expiry, acting, peak
}

// arcJobsHeld holds ARC's jobs (named arc-*) busy until release is called, so
// they outlast the handover however long a loaded machine makes it: a fixed
// duration left a window in which the busy runners could finish first.
func arcJobsHeld() (hold func(fakegithub.JobInfo) <-chan struct{}, release func()) {
	held := make(chan struct{})
	hold = func(j fakegithub.JobInfo) <-chan struct{} {
		if strings.HasPrefix(j.Name, "arc-") {
			return held
		}
		return nil
	}
	return hold, sync.OnceFunc(func() { close(held) })
}

// finishTakeover queues four new jobs after a takeover and, once all four have
// started beside ARC's three busy runners, lets ARC's jobs finish
// (releaseARCJobs). It waits until all seven jobs are done, each successfully,
// nothing of ARC's is left (left says what is) and no runner pod lives.
func finishTakeover(t *testing.T, w *world.World, repo, label string, releaseARCJobs func(), left func() []string) {
	defer releaseARCJobs()
	for i := range 4 {
		w.Queue(repo, fmt.Sprintf("new-%d", i), []string{"self-hosted", "linux", label})
	}
	require.Eventually(t, func() bool {
		started := 0
		for _, j := range w.GitHub.Jobs() {
			if strings.HasPrefix(j.Name, "new-") && j.Status != "queued" {
				started++
			}
		}
		return started == 4
	}, time.Minute, 200*time.Millisecond, "the four new jobs started while ARC's ran")
	releaseARCJobs()
	require.Eventually(t, func() bool {
		jobs, done := w.GitHub.Jobs(), 0
		for _, j := range jobs {
			if j.Status == "completed" {
				done++
			}
		}
		return len(jobs) == 7 && done == 7
	}, 2*time.Minute, 200*time.Millisecond, "all seven jobs done")
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "job %s", j.Name)
	}
	require.Eventually(t, func() bool { return len(left()) == 0 }, 90*time.Second, 500*time.Millisecond, "nothing of ARC's is left")
	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 }, 90*time.Second, 200*time.Millisecond, "the pool back at zero")
}

func ptrTrue() *bool { b := true; return &b }

// registrationToken asks the fake GitHub for a registration token of a scope
// (repos/<owner>/<repo> or orgs/<org>), as ARC did for the runners it made.
func registrationToken(t *testing.T, gh *fakegithub.Server, scope string) string {
	req, err := http.NewRequest(http.MethodPost, gh.URL+"/"+scope+"/actions/runners/registration-token", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token ghp_simulated")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Token string `json:"token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.NotEmpty(t, body.Token)
	return body.Token
}

// arcLeft lists what of ARC's is left in the namespace: Runners,
// RunnerReplicaSets, pods with ARC's finalizers and ARC's runners in GitHub.
func arcLeft(ctx context.Context, dyn dynamic.Interface, w *world.World, ns string) []string {
	var left []string
	runners, _ := dyn.Resource(activities.ARCRunnerResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	for _, r := range runners.Items {
		left = append(left, "Runner "+r.GetName())
	}
	sets, _ := dyn.Resource(activities.ARCRunnerReplicaSetResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	for _, s := range sets.Items {
		left = append(left, "RunnerReplicaSet "+s.GetName())
	}
	return append(left, arcRunnersLeft(ctx, w, ns, arcNames(arcRunnerCount, arcRunnerName))...)
}

// arcNamed tells ARC's runners by their exact names. A prefix would also match
// some of arcflow's: their generated suffixes can begin as ARC's do.
type arcNamed map[string]bool

// arcNames is the set of ARC's n runners, named by name(i).
func arcNames(n int, name func(int) string) arcNamed {
	names := arcNamed{}
	for i := range n {
		names[name(i)] = true
	}
	return names
}

// arcRunnersLeft lists ARC's runner pods left in the namespace, with their
// finalizers, and ARC's runners GitHub still lists.
func arcRunnersLeft(ctx context.Context, w *world.World, ns string, arc arcNamed) []string {
	var left []string
	pods, _ := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		if arc[p.Name] {
			left = append(left, fmt.Sprintf("pod %s (finalizers %v)", p.Name, p.Finalizers))
		}
	}
	for _, r := range w.GitHub.Runners() {
		if arc[r.Name] {
			left = append(left, "GitHub runner "+r.Name)
		}
	}
	return left
}

// busyARCRunners counts the jobs in progress on ARC's runners.
func busyARCRunners(w *world.World, arc arcNamed) int {
	n := 0
	for _, j := range w.GitHub.Jobs() {
		if arc[j.RunnerName] && j.Status == "in_progress" {
			n++
		}
	}
	return n
}

// arcflow takes over a live ARC installation: six runners of ARC's, three
// running jobs, and ARC's three capacity reservations. While ARC's Lease is
// renewed arcflow acts on nothing; within 30 s of its expiry it adopts the
// six, removes the three idle ones (from GitHub first), lets the busy ones
// finish, releases ARC's reservations as their jobs complete, runs four new
// jobs on runners of its own, never has more than maxReplicas (8) runner
// pods, and leaves nothing of ARC's.
func TestTakeOverALiveARCInstallation(t *testing.T) {
	parallel(t)
	takeOver(t, "takeover", false)
}

// The same takeover with the worker SIGKILLed just as it starts acting, in the
// middle of the adoption: every step is an activity of a workflow, so the
// restarted worker finishes it, and the end state is the same.
func TestTakeOverSurvivesAWorkerKilledMidway(t *testing.T) {
	parallel(t)
	takeOver(t, "takeover-killed", true)
}

func takeOver(t *testing.T, ns string, killWorker bool) {
	arcNamespace := ns + "-arc-system"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	stopLease := heldARCLease(t, ctx, arcNamespace, "actions-runner-controller")
	holdARCJobs, releaseARCJobs := arcJobsHeld()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"takeover-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 22,
		JobDuration: 5 * time.Second, JobHold: holdARCJobs,
		Env: []string{"ARCFLOW_ARC_CONTROLLER_LEASE=" + arcNamespace + "/actions-runner-controller"},
	})
	installARCCRDs(t, ctx)
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := dyn.Resource(activities.ARCRunnerResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "ARC's CRDs are served")

	// ARC's state: the RunnerDeployment, its runners registered, three busy.
	require.NoError(t, w.Apply(ctx, takeoverRunnerDeployment()))
	rd, err := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace(ns).Get(ctx, takeoverRD, metav1.GetOptions{})
	require.NoError(t, err)
	createARCRunners(t, ctx, dyn, w, ns, rd, registrationToken(t, w.GitHub, "repos/"+takeoverRepo))
	arc := arcNames(arcRunnerCount, arcRunnerName)
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range w.GitHub.Runners() {
			if arc[r.Name] {
				n++
			}
		}
		return n == arcRunnerCount
	}, 60*time.Second, 200*time.Millisecond, "ARC's runners registered")
	for i := range arcRunnerCount { // ARC annotates each pod with its GitHub ID
		r, ok := w.GitHub.Runner(arcRunnerName(i))
		require.True(t, ok)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, activities.ARCRunnerIDAnnotation, strconv.FormatInt(r.ID, 10))
		_, err := w.Kube.CoreV1().Pods(ns).Patch(ctx, arcRunnerName(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	expiry, acting, peak := handOver(t, ctx, w, handover{ns: ns, resource: "rdeploy", kind: v1alpha1.KindRunnerDeployment, name: takeoverRD,
		arc: arc, repo: takeoverRepo, label: takeoverRD, stopLease: stopLease, killWorker: killWorker, arcNamespace: arcNamespace})
	busyARC := func() int { return busyARCRunners(w, arc) }
	require.Eventually(t, func() bool {
		for _, r := range w.GitHub.Runners() {
			if arc[r.Name] && !r.Busy {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond, "ARC's idle runners are removed")
	require.Equal(t, 3, busyARC(), "ARC's busy runners keep their jobs")

	finishTakeover(t, w, takeoverRepo, takeoverRD, releaseARCJobs, func() []string { return arcLeft(ctx, dyn, w, ns) })
	livePeak := peak()
	require.Empty(t, w.Runners.Violations(), "no job interrupted")
	require.LessOrEqual(t, livePeak, 8, "live runner pods never above maxReplicas")
	out, err := userEdit(ctx, ns, "rdeploy", takeoverRD)
	require.NoError(t, err, "the user's edit is accepted: %s", out)
	failed := failedWorkflows(t, ctx, ns)
	require.Empty(t, failed, "no workflow failed")
	invalid, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=InvalidSpec", "-o", "name")
	require.NoError(t, err, invalid)
	require.Empty(t, strings.TrimSpace(invalid), "no InvalidSpec event for a manifest that is valid (the start-up race)")
	t.Logf("takeover (worker killed midway: %v): arcflow accepted the RunnerDeployment %v after ARC's webhooks were removed; live runner pods at peak %d; %d pods created by arcflow for 4 new jobs; jobs interrupted %d; failed workflows %d",
		killWorker, acting.Sub(expiry).Round(100*time.Millisecond), livePeak, len(w.Runners.PodTimes())-arcRunnerCount, w.Runners.Interrupted(), len(failed))
}

// arcCRDs applies ARC's own CRDs once for the package: tests side by side
// that apply them at once race in their creates.
var arcCRDs struct {
	sync.Mutex
	done bool
}

func installARCCRDs(t *testing.T, ctx context.Context) {
	t.Helper()
	arcCRDs.Lock()
	defer arcCRDs.Unlock()
	if arcCRDs.done {
		return
	}
	out, err := stack.Kubectl(ctx, "apply", "-f", filepath.Join(repoRoot(t), "test", "e2e", "testdata", "arc", "crds.yaml"))
	require.NoError(t, err, out)
	arcCRDs.done = true
}
