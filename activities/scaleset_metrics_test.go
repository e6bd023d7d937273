package activities_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

var scaleSetGauges = []string{
	"arcflow_gha_assigned_jobs", "arcflow_gha_running_jobs", "arcflow_gha_registered_runners", "arcflow_gha_busy_runners",
	"arcflow_gha_idle_runners", "arcflow_gha_desired_runners", "arcflow_gha_min_runners", "arcflow_gha_max_runners",
}

// polledSet is a fake GitHub with a set (arc, in octo-org/app) whose session
// is open, and the scale set activities with metrics on reg.
func polledSet(t *testing.T, reg prometheus.Registerer) (*fakegithub.Server, *testsuite.TestActivityEnvironment, calls.PollScaleSetInput) {
	t.Helper()
	fake, err := fakegithub.New(fakegithub.Options{Actions: fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fake.Close() })
	gh, err := github.New(github.Config{Token: "pat", URL: fake.URL}, github.Options{})
	require.NoError(t, err)
	client := scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/"})
	ctx, scope := context.Background(), github.Scope{Repository: "octo-org/app"}
	set, err := client.CreateScaleSet(ctx, scope, scaleset.ScaleSet{Name: "arc", RunnerGroupID: 1, Labels: []string{"arc"}})
	require.NoError(t, err)
	session, err := client.CreateSession(ctx, scope, set.ID, "scaleset/ci/runnerdeployment/arc")
	require.NoError(t, err)
	sets := &activities.ScaleSets{
		Clients: func(context.Context, github.Scope) (*scaleset.Client, error) { return client, nil },
		Metrics: activities.NewScaleSetMetrics(reg),
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(sets)
	in := calls.PollScaleSetInput{
		Set: calls.ScaleSetRef{Scope: scope, ID: set.ID}, SessionID: session.ID, MaxCapacity: 5, MaxWait: time.Minute,
		Name: "arc", Namespace: "ci", MinRunners: 1,
		Statistics: calls.ScaleSetStatistics{Assigned: 3, Running: 1, Registered: 2, Busy: 1, Idle: 1},
	}
	return fake, env, in
}

// While a poll runs, its worker exports the set's gauges from the statistics
// the listener recorded last, with ARC's labels (a repository's owner is its
// organization); once the poll returns, not one series of them is left, so a
// sum over the workers counts the set once after a failover.
func TestAPollExportsTheSetsGaugesUntilItReturns(t *testing.T) {
	reg := prometheus.NewRegistry()
	fake, env, in := polledSet(t, reg)

	type result struct {
		out calls.PollScaleSetOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := env.ExecuteActivity(calls.PollScaleSet, in)
		var r result
		if r.err = err; err == nil {
			r.err = v.Get(&r.out)
		}
		done <- r
	}()
	require.Eventually(t, func() bool {
		n, err := testutil.GatherAndCount(reg, "arcflow_gha_assigned_jobs")
		return err == nil && n == 1
	}, 10*time.Second, 10*time.Millisecond, "the gauges while the poll runs")
	labels := `{enterprise="",name="arc",namespace="ci",organization="octo-org",repository="app"}`
	require.Equal(t, map[string]float64{
		"arcflow_gha_assigned_jobs" + labels: 3, "arcflow_gha_running_jobs" + labels: 1, "arcflow_gha_registered_runners" + labels: 2,
		"arcflow_gha_busy_runners" + labels: 1, "arcflow_gha_idle_runners" + labels: 1, "arcflow_gha_min_runners" + labels: 1,
		"arcflow_gha_max_runners" + labels: 5, "arcflow_gha_desired_runners" + labels: 4, // min(max, min + assigned)
	}, gaugeSeries(t, reg))

	fake.QueueJob("octo-org/app", "build", []string{"arc"})
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the poll did not return with the job's message")
	}
	require.NoError(t, r.err)
	require.NotNil(t, r.out.Message, "the job's assignment")
	for _, name := range scaleSetGauges {
		n, err := testutil.GatherAndCount(reg, name)
		require.NoError(t, err)
		require.Zero(t, n, "%s: no series once the poll returned", name)
	}
}

// A poll that fails leaves no series either; one that names no set (sent by
// a listener of an older arcflow) exports nothing.
func TestAFailedPollLeavesNoGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, env, in := polledSet(t, reg)
	in.Set.ID = 999 // no such set: the poll's outcome, then an error for no session
	in.SessionID = "gone"
	_, _ = env.ExecuteActivity(calls.PollScaleSet, in)
	n, err := testutil.GatherAndCount(reg, scaleSetGauges...)
	require.NoError(t, err)
	require.Zero(t, n)

	reg = prometheus.NewRegistry()
	_, env, in = polledSet(t, reg)
	in.Name, in.MaxWait = "", 100*time.Millisecond
	_, err = env.ExecuteActivity(calls.PollScaleSet, in)
	require.NoError(t, err)
	n, err = testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Zero(t, n, "nothing at all without a set's name")
}

// gaugeSeries are the registry's gauge series as name{labels} → value.
func gaugeSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetGauge() == nil {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}
