package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// allDone waits until every job of the fake completed, each once, with success.
func allDone(t *testing.T, w *world.World, jobs int, within time.Duration, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		all := w.GitHub.Jobs()
		if len(all) != jobs {
			return false
		}
		for _, j := range all {
			if j.Status != "completed" {
				return false
			}
		}
		return true
	}, within, 200*time.Millisecond, what)
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "job %s", j.Name)
	}
}

// The listener rides out what the Actions service does to listeners: a set
// held by another, stale session (409 until it expires), empty 200s, 5xx and
// 429 in a burst, and the set deleted by the service, whose idle runner
// (minReplicas 1) is replaced by one of the set made again. No job is lost,
// none runs twice, none is left waiting.
func TestAScaleSetListenerRidesOutTheServicesFaults(t *testing.T) {
	parallel(t)
	const ns = "scaleset-faults"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 3,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 2 * time.Second, SessionTTL: 4 * time.Second},
	})
	// Another listener made the set and died holding its session.
	gh, err := github.New(github.Config{Token: "ghp_other", URL: w.GitHub.URL}, github.Options{})
	require.NoError(t, err)
	other := scaleset.New(gh, scaleset.Options{APIBaseURL: w.GitHub.URL, RunnerURL: "https://github.com/"})
	scope := github.Scope{Repository: "octo-org/app"}
	set, err := other.CreateScaleSet(ctx, scope, scaleset.ScaleSet{Name: "arc-app", RunnerGroupID: 1, Labels: []string{"arc-app", "linux"}})
	require.NoError(t, err)
	_, err = other.CreateSession(ctx, scope, set.ID, "a-listener-that-died")
	require.NoError(t, err)

	// One idle runner at all times: the set's deletion leaves it joined to
	// the old set, and the pool must replace it.
	require.NoError(t, w.Apply(ctx, strings.Replace(scaleSetManifest, "minReplicas: 0", "minReplicas: 1", 1)))
	w.Queue("octo-org/app", "while-409", []string{"arc-app"})
	require.Eventually(t, func() bool {
		sets := w.GitHub.ScaleSets()
		return len(sets) == 1 && sets[0].SessionOwner == "scaleset/"+ns+"/runnerdeployment/app"
	}, 60*time.Second, 200*time.Millisecond, "the stale session expired and the listener took the set")
	require.Equal(t, set.ID, w.GitHub.ScaleSets()[0].ID, "the set it found by name, not a new one")
	allDone(t, w, 1, 60*time.Second, "the job queued during the 409s ran")

	w.GitHub.EmptyPollsNext(5)
	w.GitHub.FailPollsNext(3)
	w.GitHub.ThrottlePollsNext(1, time.Second)
	w.Queue("octo-org/app", "after-burst", []string{"arc-app"})
	allDone(t, w, 2, 60*time.Second, "the job queued during empty 200s, 5xx and 429 ran")

	kube, err := stack.Kube()
	require.NoError(t, err)
	livePods := func() map[string]bool {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=app"})
		require.NoError(t, err)
		live := map[string]bool{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				live[p.Name] = true
			}
		}
		return live
	}
	var ofOldSet map[string]bool
	require.Eventually(t, func() bool { ofOldSet = livePods(); return len(ofOldSet) >= 1 }, 60*time.Second, 200*time.Millisecond,
		"the idle runner minReplicas keeps")
	require.NoError(t, w.GitHub.DeleteScaleSet(set.ID))
	var again fakegithub.ScaleSetInfo
	require.Eventually(t, func() bool {
		sets := w.GitHub.ScaleSets()
		if len(sets) != 1 || sets[0].ID == set.ID || sets[0].Session == "" {
			return false
		}
		again = sets[0]
		return true
	}, 60*time.Second, 200*time.Millisecond, "the listener made the set again")
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(ctx, "get", "rdeploy", "app", "-n", ns, "-o", "jsonpath={.status.scaleSetId}")
		return err == nil && out == strconv.FormatInt(again.ID, 10)
	}, 30*time.Second, 200*time.Millisecond, "the pool joined the new set")
	require.Eventually(t, func() bool {
		live := livePods()
		for name := range live {
			if ofOldSet[name] {
				return false
			}
		}
		return len(live) >= 1
	}, 60*time.Second, 200*time.Millisecond, "the idle runner of the deleted set is replaced by one of the new set: %v", ofOldSet)
	for i := range 5 {
		w.Queue("octo-org/app", fmt.Sprintf("new-set-%d", i), []string{"arc-app"})
	}
	allDone(t, w, 7, 2*time.Minute, "the five jobs queued after the set was made again ran")
	require.Empty(t, w.Runners.Violations())
}

// GitHub Enterprise Server offers a set's jobs as available; the listener
// acquires them, or they are never assigned.
func TestAScaleSetAcquiresItsJobsOnGHES(t *testing.T) {
	parallel(t)
	const ns = "scaleset-ghes"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 4,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 2 * time.Second, GHES: true},
	})
	require.NoError(t, w.Apply(ctx, scaleSetManifest))
	heldSet(t, w, "the listener holds the set's session")
	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("ghes-%d", i), []string{"arc-app"})
	}
	allDone(t, w, 3, 90*time.Second, "the acquired jobs ran")
	require.Positive(t, w.GitHub.CallCounts()["POST /actions-service/_apis/runtime/runnerscalesets/{id}/acquirejobs"])
	require.Empty(t, w.Runners.Violations())
}
