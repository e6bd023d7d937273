package replaytest

import (
	"context"
	"hash/fnv"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
)

// world is what the fake activities see: which runner pods exist, which runners
// GitHub lists and which of them are busy. Scenarios change it while their
// workflows run. A runner registers as soon as its pod is created, unless told
// not to, and stays listed until it is removed.
type world struct {
	mu            sync.Mutex
	pods          map[string]bool // created and not deleted
	created       map[string]bool // created once
	neverRegister map[string]bool
	removed       map[string]bool
	busy          map[string]bool
	invalid       map[string]bool // EnsureRunnerPod fails with InvalidSpec
	// readySince are the ready-untold pods (RunnerPodInput.ReadyUntold), Ready
	// since they were created, as GetRunnerPod reads them.
	readySince map[string]time.Time
	queued     []int64
	suggested  int
	// scopes are the other autoscalers' last jobs, by the asking HRA.
	scopes map[string]time.Time
	// rerunAsked are the lost jobs whose run GitHub was asked about once.
	rerunAsked map[int64]bool
}

func newWorld() *world {
	return &world{
		pods: map[string]bool{}, created: map[string]bool{}, neverRegister: map[string]bool{}, removed: map[string]bool{},
		busy: map[string]bool{}, invalid: map[string]bool{}, scopes: map[string]time.Time{}, readySince: map[string]time.Time{},
	}
}

func (w *world) set(m map[string]bool, name string, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		m[name] = true
	} else {
		delete(m, name)
	}
}

// runnerID is a stable fake GitHub ID for a runner name.
func runnerID(name string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum32()) + 1
}

// fakeKubernetes has the methods of activities.Kubernetes, so it registers under
// the same activity names.
type fakeKubernetes struct{ w *world }

func (k *fakeKubernetes) EnsureRunnerPod(_ context.Context, in activities.RunnerPodInput) (activities.RunnerPodOutput, error) {
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	if k.w.invalid[in.Name] {
		return activities.RunnerPodOutput{}, temporal.NewNonRetryableApplicationError(
			"pod "+in.Name+" is invalid: spec.containers[0].image: Required value", activities.ErrTypeInvalidSpec, nil)
	}
	created := !k.w.pods[in.Name]
	k.w.pods[in.Name], k.w.created[in.Name] = true, true
	if in.ReadyUntold && created {
		k.w.readySince[in.Name] = time.Now()
	}
	return activities.RunnerPodOutput{UID: podUID(in.Name), Created: created}, nil
}

func (k *fakeKubernetes) DeleteRunnerPod(_ context.Context, ref activities.PodRef) error {
	k.w.set(k.w.pods, ref.Name, false)
	return nil
}

func (k *fakeKubernetes) GetRunnerPod(_ context.Context, ref activities.PodRef) (activities.PodState, error) {
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	if !k.w.pods[ref.Name] {
		return activities.PodState{}, nil
	}
	if since, ok := k.w.readySince[ref.Name]; ok {
		return activities.PodState{UID: podUID(ref.Name), ResourceVersion: "1", Exists: true, Phase: "Running", Ready: true, ReadySince: since}, nil
	}
	return activities.PodState{UID: podUID(ref.Name), Exists: true, Phase: "Running"}, nil
}

// ARCRunners: the fake world never ran ARC's RunnerDeployments.
func (k *fakeKubernetes) ARCRunners(context.Context, activities.ARCRunnersInput) ([]activities.ARCRunner, error) {
	return nil, nil
}

// OwnRunners: no pool of the fake world starts with runners left in it.
func (k *fakeKubernetes) OwnRunners(context.Context, activities.ARCRunnersInput) ([]activities.ARCRunner, error) {
	return nil, nil
}

// ARCRunnerSet: ARC ran one RunnerSet of the fake world (arcLeftFor).
func (k *fakeKubernetes) ARCRunnerSet(_ context.Context, in activities.ARCRunnerSetInput) (activities.ARCRunnerSetRunners, error) {
	return arcLeftFor(in.Name), nil
}

func (k *fakeKubernetes) AdoptARCClaims(context.Context, activities.AdoptARCClaimsInput) error {
	return nil
}

// ReleasePoolResource: the fake world's resources carry no finalizer.
func (k *fakeKubernetes) ReleasePoolResource(context.Context, activities.PoolResourceRef) error {
	return nil
}

// RunnerPodPhases: every pod of the fake world runs.
func (k *fakeKubernetes) RunnerPodPhases(_ context.Context, in activities.RunnerPodPhasesInput) (map[string]corev1.PodPhase, error) {
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	phases := map[string]corev1.PodPhase{}
	for _, name := range in.Names {
		if k.w.pods[name] {
			phases[name] = corev1.PodRunning
		}
	}
	return phases, nil
}

func (k *fakeKubernetes) UpdatePoolStatus(context.Context, activities.PoolStatusInput) error {
	return nil
}

func (k *fakeKubernetes) DeleteVolumes(context.Context, activities.DeleteVolumesInput) error {
	return nil
}

func (k *fakeKubernetes) UpdateHRAStatus(context.Context, activities.HRAStatusInput) error {
	return nil
}

func (k *fakeKubernetes) UpdateHRAWarmStatus(context.Context, activities.HRAWarmStatusInput) error {
	return nil
}

// LastArrivalInScope: the other autoscalers' last job as the scenario set it
// for the asking HRA; none is a quiet scope.
func (k *fakeKubernetes) LastArrivalInScope(_ context.Context, in activities.ScopeActivityInput) (activities.ScopeActivityOutput, error) {
	k.w.mu.Lock()
	defer k.w.mu.Unlock()
	last, ok := k.w.scopes[in.Except]
	if !ok {
		return activities.ScopeActivityOutput{}, nil
	}
	return activities.ScopeActivityOutput{LastArrival: last, Autoscalers: 1}, nil
}

// fakeGitHub has the methods of activities.GitHub.
type fakeGitHub struct{ w *world }

func (g *fakeGitHub) FindRunner(_ context.Context, in activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	if !g.w.listed(in.Name) {
		return activities.FindRunnerOutput{}, nil
	}
	return activities.FindRunnerOutput{Found: true, ID: runnerID(in.Name), Busy: g.w.busy[in.Name], Online: g.w.pods[in.Name]}, nil
}

// listed: GitHub lists a runner once its pod was created, until it is removed.
// Called with the lock held.
func (w *world) listed(name string) bool {
	return w.created[name] && !w.neverRegister[name] && !w.removed[name]
}

func (g *fakeGitHub) RemoveRunner(_ context.Context, in activities.RemoveRunnerInput) (activities.RemoveRunnerOutput, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	if g.w.busy[in.Name] {
		return activities.RemoveRunnerOutput{}, temporal.NewNonRetryableApplicationError(
			"remove runner "+in.Name+": runner is busy", activities.ErrTypeRunnerBusy, nil)
	}
	gone := g.w.removed[in.Name]
	g.w.removed[in.Name] = true
	return activities.RemoveRunnerOutput{AlreadyGone: gone}, nil
}

func (g *fakeGitHub) RunnerBusy(_ context.Context, in activities.RunnerBusyInput) (map[string]bool, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	busy := map[string]bool{}
	for _, name := range in.Names {
		busy[name] = g.w.busy[name]
	}
	return busy, nil
}

// ListQueuedJobs: each queued job is the only job of run 10×its ID.
func (g *fakeGitHub) ListQueuedJobs(_ context.Context, in activities.QueuedJobsInput) (activities.QueuedJobsOutput, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	out := activities.QueuedJobsOutput{Queued: append([]int64(nil), g.w.queued...)}
	if in.ByRun {
		for _, id := range g.w.queued {
			out.QueuedRuns, out.OpenRuns = append(out.QueuedRuns, 10*id), append(out.OpenRuns, 10*id)
		}
	}
	return out, nil
}

func (g *fakeGitHub) SuggestReplicas(context.Context, activities.MetricsInput) (*int, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	n := g.w.suggested
	return &n, nil
}

func podUID(name string) string { return "uid-" + name }

// The fakes must stand in for every activity the real worker registers, with the
// same argument and result types, or a workflow would meet an unknown activity.
func TestFakesHaveEveryRealActivity(t *testing.T) {
	for real, fake := range map[any]any{&activities.Kubernetes{}: &fakeKubernetes{}, &activities.GitHub{}: &fakeGitHub{}} {
		want, got := methods(real), methods(fake)
		require.Equal(t, keys(want), keys(got), "activity names of %T", fake)
		for name, sig := range want {
			require.Equal(t, sig, got[name], "signature of %s", name)
		}
	}
}

// methods maps exported method names to their signatures without the receiver.
func methods(v any) map[string]string {
	out := map[string]string{}
	typ := reflect.TypeOf(v)
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		sig := m.Type.String()
		// Drop the receiver: "func(*pkg.T, a, b) r" -> "func(a, b) r".
		recv := m.Type.In(0).String()
		out[m.Name] = "func(" + strings.TrimPrefix(sig[len("func("+recv):], ", ")
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RunnerIDs: no runner of the fake world is taken over from the cluster.
func (g *fakeGitHub) RunnerIDs(context.Context, activities.RunnerBusyInput) (map[string]int64, error) {
	return map[string]int64{}, nil
}

// RerunLostJob: the fake run completes on the second ask, so a re-run waits
// one poll and then goes through.
func (g *fakeGitHub) RerunLostJob(_ context.Context, in activities.RerunLostJobInput) (activities.RerunLostJobOutput, error) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	if g.w.rerunAsked == nil {
		g.w.rerunAsked = map[int64]bool{}
	}
	if !g.w.rerunAsked[in.JobID] {
		g.w.rerunAsked[in.JobID] = true
		return activities.RerunLostJobOutput{Outcome: activities.RerunWaiting}, nil
	}
	return activities.RerunLostJobOutput{Outcome: activities.RerunDone}, nil
}

// FindRunnerJob: every runner of the fake world ran job 901 of run 900.
func (g *fakeGitHub) FindRunnerJob(context.Context, activities.FindRunnerJobInput) (activities.FindRunnerJobOutput, error) {
	return activities.FindRunnerJobOutput{Found: true, RunID: 900, JobID: 901, JobName: "build", RunAttempt: 1}, nil
}

// ReportLostJob: events go nowhere in the fake world.
func (k *fakeKubernetes) ReportLostJob(context.Context, activities.LostJobReport) error { return nil }

// ReportScaleSetSession: conditions go nowhere in the fake world.
func (k *fakeKubernetes) ReportScaleSetSession(context.Context, activities.ScaleSetSessionReport) error {
	return nil
}
