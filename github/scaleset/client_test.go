package scaleset_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

var org = github.Scope{Organization: "octo"}

// newClient starts a fake GitHub with the given Actions service options and
// returns it with a scale set client that talks to it over HTTP.
func newClient(t *testing.T, opts fakegithub.ActionsOptions) (*fakegithub.Server, *scaleset.Client) {
	t.Helper()
	fake, err := fakegithub.New(fakegithub.Options{Actions: opts})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fake.Close() })
	gh, err := github.New(github.Config{Token: "pat", URL: fake.URL}, github.Options{})
	require.NoError(t, err)
	return fake, scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/", RegistrationRetryBase: 10 * time.Millisecond})
}

func createSet(t *testing.T, c *scaleset.Client) scaleset.ScaleSet {
	t.Helper()
	ctx := context.Background()
	set, err := c.CreateScaleSet(ctx, org, scaleset.ScaleSet{Name: "arc-linux", RunnerGroupID: 1, Labels: []string{"arc-linux"}})
	require.NoError(t, err)
	require.NotZero(t, set.ID)
	return set
}

func TestFindOrCreateASet(t *testing.T) {
	_, c := newClient(t, fakegithub.ActionsOptions{})
	ctx := context.Background()
	_, ok, err := c.FindScaleSet(ctx, org, 1, "arc-linux")
	require.NoError(t, err)
	require.False(t, ok, "no set yet")
	made := createSet(t, c)
	found, ok, err := c.FindScaleSet(ctx, org, 1, "arc-linux")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, made, found)
	_, err = c.CreateScaleSet(ctx, org, scaleset.ScaleSet{Name: "arc-linux", RunnerGroupID: 1})
	require.Error(t, err, "a name is unique in its group")
}

// runner-registration's 401 can be transient: it is retried with backoff, and
// a refusal that lasts ends in ErrUnauthorized, naming no token.
func TestTheRegistrationIsRetriedAfterA401(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{})
	registrations := func() int { return fake.CallCounts()["POST /actions/runner-registration"] }
	fake.RefuseRegistrationNext(2)
	ctx := context.Background()
	_, _, err := c.FindScaleSet(ctx, org, 1, "x")
	require.NoError(t, err)
	require.Equal(t, 3, registrations(), "two refusals, then the registration")

	fake2, c2 := newClient(t, fakegithub.ActionsOptions{})
	fake2.RefuseRegistrationNext(100)
	_, _, err = c2.FindScaleSet(ctx, org, 1, "x")
	require.ErrorIs(t, err, scaleset.ErrUnauthorized)
	require.NotContains(t, err.Error(), "AFAKE", "no token in the error")
	require.Equal(t, 5, fake2.CallCounts()["POST /actions/runner-registration"], "five attempts")
}

func TestAnExpiredAdminTokenIsReplaced(t *testing.T) {
	now := time.Now()
	fake, err := fakegithub.New(fakegithub.Options{Actions: fakegithub.ActionsOptions{AdminTokenTTL: 3 * time.Minute}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fake.Close() })
	gh, err := github.New(github.Config{Token: "pat", URL: fake.URL}, github.Options{})
	require.NoError(t, err)
	clock := now
	c := scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/", Now: func() time.Time { return clock }})
	ctx := context.Background()
	_, _, err = c.FindScaleSet(ctx, org, 1, "x")
	require.NoError(t, err)
	registrations := func() int { return fake.CallCounts()["POST /actions/runner-registration"] }
	require.Equal(t, 1, registrations())
	_, _, err = c.FindScaleSet(ctx, org, 1, "x")
	require.NoError(t, err)
	require.Equal(t, 1, registrations(), "the admin token is reused while it has more than 2 minutes")
	clock = now.Add(90 * time.Second)
	_, _, err = c.FindScaleSet(ctx, org, 1, "x")
	require.NoError(t, err)
	require.Equal(t, 2, registrations(), "and replaced before it expires")
}

func TestOneSessionAtATime(t *testing.T) {
	_, c := newClient(t, fakegithub.ActionsOptions{})
	ctx := context.Background()
	set := createSet(t, c)
	first, err := c.CreateSession(ctx, org, set.ID, "worker-a")
	require.NoError(t, err)
	_, err = c.CreateSession(ctx, org, set.ID, "worker-b")
	require.ErrorIs(t, err, scaleset.ErrSessionConflict)
	require.NoError(t, c.DeleteSession(ctx, org, set.ID, first.ID))
	_, err = c.CreateSession(ctx, org, set.ID, "worker-b")
	require.NoError(t, err, "the set is free once the session is deleted")
}

func TestAnotherProcessTakesASessionOverByRefreshingIt(t *testing.T) {
	fake, a := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, a)
	sess, err := a.CreateSession(ctx, org, set.ID, "worker-a")
	require.NoError(t, err)
	gh, err := github.New(github.Config{Token: "pat", URL: fake.URL}, github.Options{})
	require.NoError(t, err)
	b := scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/"})
	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	msg, err := b.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.NotNil(t, msg)
	require.Len(t, msg.Jobs, 1)
	require.Equal(t, scaleset.JobAssigned, msg.Jobs[0].MessageType)
	require.Equal(t, 1, fake.CallCounts()["PATCH /actions-service/_apis/runtime/runnerscalesets/{id}/sessions/{sid}"])
}

func TestMessagesAreRedeliveredUntilDeleted(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	require.Zero(t, sess.Statistics.TotalAssignedJobs)

	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Nil(t, msg, "no message: 202")

	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	first, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.NotNil(t, first)
	require.Greater(t, first.ID, int64(99_999_999), "ids near 10^8")
	require.Equal(t, 1, first.Statistics.TotalAssignedJobs)
	again, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID, "an undeleted message comes again")
	none, err := c.GetMessage(ctx, org, set.ID, sess.ID, first.ID, 10)
	require.NoError(t, err)
	require.Nil(t, none, "nothing after the cursor")
	require.NoError(t, c.DeleteMessage(ctx, org, set.ID, sess.ID, first.ID))
	none, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Nil(t, none, "a deleted message is gone")
}

func TestTheQueueTokenIsRefreshedOnA401(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	fake.ExpireSessionTokens()
	_, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 1, fake.CallCounts()["PATCH /actions-service/_apis/runtime/runnerscalesets/{id}/sessions/{sid}"])
}

func TestEmptyOKsBOMsAndServerErrors(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	fake.SetBOM(true)
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)

	fake.EmptyPollsNext(1)
	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Nil(t, msg, "an empty 200 is no message")

	fake.FailPollsNext(1)
	_, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.True(t, scaleset.Retryable(err), "503 is retryable: %v", err)

	fake.ThrottlePollsNext(1, 7*time.Second)
	_, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.True(t, scaleset.Retryable(err))
	require.Equal(t, 7*time.Second, scaleset.RetryAfterOf(err))

	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	msg, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err, "a body with a BOM decodes")
	require.Len(t, msg.Jobs, 1)
}

func TestADeletedSetIsNotFound(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{})
	ctx := context.Background()
	set := createSet(t, c)
	require.NoError(t, fake.DeleteScaleSet(set.ID))
	_, err := c.GetScaleSet(ctx, org, set.ID)
	require.ErrorIs(t, err, scaleset.ErrScaleSetNotFound)
	_, err = c.CreateSession(ctx, org, set.ID, "w")
	require.ErrorIs(t, err, scaleset.ErrScaleSetNotFound)
	again := createSet(t, c)
	require.NotEqual(t, set.ID, again.ID, "a set made again gets a new id")
}

func TestJITRunnersTakeTheSetsJobs(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	job := fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	config, err := c.GenerateJITConfig(ctx, org, set.ID, "arc-linux-abc", "")
	require.NoError(t, err)
	require.NotContains(t, config.String(), config.Encoded(), "the configuration never formats")
	_, err = c.GenerateJITConfig(ctx, org, set.ID, "arc-linux-abc", "")
	require.ErrorIs(t, err, scaleset.ErrRunnerExists)

	_, err = fake.StartJIT(config.Encoded())
	require.NoError(t, err)
	_, err = fake.StartJob(job.ID, "arc-linux-abc")
	require.NoError(t, err)
	require.ErrorIs(t, c.RemoveRunner(ctx, org, config.RunnerID), scaleset.ErrRunnerBusy)
	_, err = fake.CompleteJob(job.ID, "success")
	require.NoError(t, err)

	var types []string
	var last int64
	for len(types) < 3 {
		msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, last, 10)
		require.NoError(t, err)
		require.NotNil(t, msg, "messages so far: %v", types)
		for _, j := range msg.Jobs {
			types = append(types, j.MessageType)
			if j.MessageType != scaleset.JobAssigned {
				require.Equal(t, "arc-linux-abc", j.RunnerName)
			}
		}
		last = msg.ID
	}
	require.Equal(t, []string{scaleset.JobAssigned, scaleset.JobStarted, scaleset.JobCompleted}, types)
	require.NoError(t, c.RemoveRunner(ctx, org, config.RunnerID), "a runner already gone is removed")
}

func TestCapacityLimitsAssignment(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	for range 3 {
		fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	}
	// The fake assigned all three before any capacity was sent; a poll with
	// capacity 0 withdraws nothing but stops new assignments.
	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, 3, msg.Statistics.TotalAssignedJobs)
	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	stats, err := fake.ScaleSetStatisticsOf(set.ID)
	require.NoError(t, err)
	require.Equal(t, 3, stats.TotalAssignedJobs, "no job past the capacity is assigned")
	_, err = c.GetMessage(ctx, org, set.ID, sess.ID, msg.ID, 4)
	require.NoError(t, err)
	stats, err = fake.ScaleSetStatisticsOf(set.ID)
	require.NoError(t, err)
	require.Equal(t, 4, stats.TotalAssignedJobs, "a larger capacity lets it through")
}

func TestGHESJobsAreAcquired(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond, GHES: true})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Equal(t, scaleset.JobAvailable, msg.Jobs[0].MessageType)
	require.Zero(t, msg.Statistics.TotalAssignedJobs, "not assigned before it is acquired")
	listed, err := c.AcquirableJobs(ctx, org, set.ID)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	acquired, err := c.AcquireJobs(ctx, org, set.ID, sess.ID, []int64{msg.Jobs[0].RunnerRequestID, 424242})
	require.NoError(t, err)
	require.Equal(t, []int64{msg.Jobs[0].RunnerRequestID}, acquired, "only the set's available job")
	next, err := c.GetMessage(ctx, org, set.ID, sess.ID, msg.ID, 10)
	require.NoError(t, err)
	require.Equal(t, scaleset.JobAssigned, next.Jobs[0].MessageType)
}

func TestErrorsCarryNoToken(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{})
	ctx := context.Background()
	set := createSet(t, c)
	require.NoError(t, fake.DeleteScaleSet(set.ID))
	_, err := c.GetScaleSet(ctx, org, set.ID)
	var se *scaleset.ServiceError
	require.True(t, errors.As(err, &se))
	require.False(t, strings.Contains(err.Error(), "eyJ"), "no JWT in %q", err)
}
