package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// The fake answers every error in the service's full forms (typeName with its
// namespace and assembly) in all of these.

// scaleSetRD is scaleSetManifest's RunnerDeployment alone: its HRA comes later.
var scaleSetRD = scaleSetManifest[:strings.Index(scaleSetManifest, "---")]

// heldJobs holds the jobs of each phase until the phase is released.
type heldJobs struct {
	mu     sync.Mutex
	phases map[string]chan struct{}
}

func (h *heldJobs) hold(j fakegithub.JobInfo) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	phase, _, _ := strings.Cut(j.Name, "-")
	if h.phases[phase] == nil {
		h.phases[phase] = make(chan struct{})
	}
	return h.phases[phase]
}

func (h *heldJobs) release(phase string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.phases[phase] == nil {
		h.phases[phase] = make(chan struct{})
	}
	close(h.phases[phase])
}

// A set whose HRA comes after its listener's first poll gets its jobs at once:
// the capacity each poll tells the service follows the HRA's maxReplicas within
// seconds, and the service assigns no more than it.
func TestAScaleSetsCapacityFollowsItsHRA(t *testing.T) {
	parallelWithRoom(t, 2)
	const ns = "scaleset-capacity"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	held := &heldJobs{phases: map[string]chan struct{}{}}
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 59,
		NoWebhook: true, JobHold: held.hold,
		// Long holds: the poll loops over them with the capacity it began with.
		Actions: fakegithub.ActionsOptions{PollHold: 50 * time.Second},
	})
	require.NoError(t, w.Apply(ctx, scaleSetRD))
	set := heldSet(t, w, "the listener holds the set's session")
	require.Eventually(t, func() bool { return w.GitHub.ScaleSets()[0].MaxCapacity >= 0 }, 30*time.Second, 100*time.Millisecond, "the first poll went out")
	require.NotEqual(t, 20, w.GitHub.ScaleSets()[0].MaxCapacity, "before the HRA")

	hra := strings.Replace(scaleSetManifest[strings.Index(scaleSetManifest, "---"):], "maxReplicas: 4", "maxReplicas: 20", 1)
	applied := time.Now()
	require.NoError(t, w.Apply(ctx, hra))
	require.Eventually(t, func() bool { return w.GitHub.ScaleSets()[0].MaxCapacity == 20 }, 15*time.Second, 100*time.Millisecond,
		"the service hears the HRA's maxReplicas on the next poll, not an hour later")
	t.Logf("HRA applied -> the service sees capacity 20: %s", time.Since(applied).Round(10*time.Millisecond))

	queued := time.Now()
	for i := range 20 {
		w.Queue("octo-org/app", fmt.Sprintf("first-%d", i), []string{"arc-app"})
	}
	require.Eventually(t, func() bool { return inProgress(w, "first-") == 20 }, 90*time.Second, 200*time.Millisecond, "all 20 jobs started")
	t.Logf("20 jobs queued -> all in progress: %s", time.Since(queued).Round(10*time.Millisecond))

	_, err := stack.Kubectl(ctx, "patch", "hra", "app", "-n", ns, "--type=merge", "-p", `{"spec":{"maxReplicas":5}}`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return w.GitHub.ScaleSets()[0].MaxCapacity == 5 }, 15*time.Second, 100*time.Millisecond, "the lowered capacity reaches the service")
	held.release("first")
	allDone(t, w, 20, 90*time.Second, "the first 20 jobs ran")

	for i := range 10 {
		w.Queue("octo-org/app", fmt.Sprintf("second-%d", i), []string{"arc-app"})
	}
	require.Eventually(t, func() bool { return inProgress(w, "second-") == 5 }, 60*time.Second, 200*time.Millisecond, "five of the next ten run")
	require.Never(t, func() bool {
		stats, err := w.GitHub.ScaleSetStatisticsOf(set.ID)
		return err != nil || stats.TotalAssignedJobs > 5 || inProgress(w, "second-") > 5
	}, 5*time.Second, 200*time.Millisecond, "no more assigned than the capacity")
	held.release("second")
	allDone(t, w, 30, 2*time.Minute, "the next ten ran, five at a time")
	require.Empty(t, w.Runners.Violations())
}

// inProgress counts the jobs named with prefix that run now.
func inProgress(w *world.World, prefix string) int {
	n := 0
	for _, j := range w.GitHub.Jobs() {
		if strings.HasPrefix(j.Name, prefix) && j.Status == "in_progress" {
			n++
		}
	}
	return n
}

// Another listener's stale session holds the set for 45 s: the pool says who
// holds it, and the jobs queued meanwhile wait at most 10 s more than the hold.
// Then the service evicts arcflow's session (404, and a 400 SessionExpired on
// its DELETE) and opens one with no queue: each is recovered, and jobs run.
func TestAScaleSetRecoversItsSessionFromEveryForm(t *testing.T) {
	parallel(t)
	const ns = "scaleset-sessions"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 60,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second},
	})
	gh, err := github.New(github.Config{Token: "ghp_other", URL: w.GitHub.URL}, github.Options{})
	require.NoError(t, err)
	other := scaleset.New(gh, scaleset.Options{APIBaseURL: w.GitHub.URL, RunnerURL: "https://github.com/"})
	set, err := other.CreateScaleSet(ctx, github.Scope{Repository: "octo-org/app"}, scaleset.ScaleSet{Name: "arc-app", RunnerGroupID: 1, Labels: []string{"arc-app", "linux"}})
	require.NoError(t, err)
	const hold = 45 * time.Second
	require.NoError(t, w.GitHub.HoldSetBy(set.ID, "arc-runner-set-754b578d-listener", hold))
	heldSince := time.Now()
	require.NoError(t, w.Apply(ctx, scaleSetManifest))
	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("held-%d", i), []string{"arc-app"})
	}
	condition := func(field string) string {
		out, _ := stack.Kubectl(ctx, "get", "rdeploy", "app", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="ScaleSetSession")].`+field+`}`)
		return out
	}
	require.Eventually(t, func() bool { return condition("reason") == "HeldByAnotherListener" }, 30*time.Second, 200*time.Millisecond,
		"the pool says another listener holds the set")
	require.Contains(t, condition("message"), "arc-runner-set-754b578d-listener", "and names it")
	kube, err := stack.Kube()
	require.NoError(t, err)
	events, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=app,reason=HeldByAnotherListener"})
	require.NoError(t, err)
	require.Len(t, events.Items, 1, "one event")

	allDone(t, w, 3, hold+90*time.Second, "the jobs queued while the set was held ran")
	var lastStart time.Time
	for _, j := range w.GitHub.Jobs() {
		if j.StartedAt.After(lastStart) {
			lastStart = j.StartedAt
		}
	}
	delay := lastStart.Sub(heldSince)
	t.Logf("set held %s; the last of its jobs started after %s", hold, delay.Round(100*time.Millisecond))
	require.Less(t, delay, hold+10*time.Second+5*time.Second, "at most 10 s after the hold, plus the runners' start")
	require.Eventually(t, func() bool { return condition("reason") == "SessionOpen" }, 30*time.Second, 200*time.Millisecond)
	require.Equal(t, set.ID, w.GitHub.ScaleSets()[0].ID, "the same set")

	// The service evicts arcflow's session: the poll's 404 loses it, its
	// DELETE gets 400 SessionExpired, and a new one opens.
	before := w.GitHub.ScaleSets()[0].Session
	require.NoError(t, w.GitHub.ExpireSession(set.ID))
	require.Eventually(t, func() bool { s := w.GitHub.ScaleSets()[0].Session; return s != "" && s != before }, 60*time.Second, 200*time.Millisecond,
		"a new session after the eviction")
	w.Queue("octo-org/app", "after-eviction", []string{"arc-app"})
	allDone(t, w, 4, 60*time.Second, "a job after the eviction ran")

	// A session opened with no queue (ARC #4370) is deleted and opened again.
	w.GitHub.EmptyQueueURLNext(1)
	before = w.GitHub.ScaleSets()[0].Session
	require.NoError(t, w.GitHub.ExpireSession(set.ID))
	require.Eventually(t, func() bool { s := w.GitHub.ScaleSets()[0].Session; return s != "" && s != before }, 60*time.Second, 200*time.Millisecond,
		"a session with a queue after the one without")
	w.Queue("octo-org/app", "after-no-queue", []string{"arc-app"})
	allDone(t, w, 5, 60*time.Second, "a job after the queueless session ran")
	require.Positive(t, w.GitHub.CallCounts()["DELETE /actions-service/_apis/runtime/runnerscalesets/{id}/sessions/{sid}"], "lost and queueless sessions deleted")
	for _, ua := range w.GitHub.ActionsUserAgents() {
		if strings.Contains(ua, "scale-set") {
			return // arcflow's calls named the set
		}
	}
	t.Fatalf("no User-Agent names the set: %v", w.GitHub.ActionsUserAgents())
}
