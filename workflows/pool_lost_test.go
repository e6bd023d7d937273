package workflows

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// lostJobTest is a pool test that records the re-run signals the pool sends.
func lostJobTest(t *testing.T) (*poolTest, *[]activities.WorkflowSignalStart) {
	pt := newPoolTest(t)
	var sent []activities.WorkflowSignalStart
	pt.env.OnActivity(temporalCalls.SignalWithStartWorkflow, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.WorkflowSignalStart) error {
			sent = append(sent, s)
			return nil
		})
	return pt, &sent
}

func failedOn(runner string, jobID int64) FailedJob {
	return FailedJob{Runner: runner, Repository: "octo-org/app", RunID: 500 + jobID, JobID: jobID, JobName: "build", RunAttempt: 1, Conclusion: "failure"}
}

func rerunsSpec(limit int) PoolSpec {
	s := spec(0, "h1", true)
	s.RerunLostJobs = limit
	return s
}

// A runner whose node went while it ran a job, and the job's failed
// completion naming it, in either order, make one re-run signal; a job that
// failed on a runner that ended by itself makes none.
func TestAPoolRerunsAJobWhoseRunnerWasLost(t *testing.T) {
	pt, sent := lostJobTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() {
		// Runner 0's node is lost: its workflow ends first, then the failure comes.
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[0].name, Reason: EndPodDeleted, RunnerID: 1, Cause: activities.CauseNodeLost})
	})
	pt.at(time.Minute+time.Second, func() {
		require.Empty(t, *sent, "a lost runner alone is no lost job: it may have been idle")
		// Runner 1's failure comes before its end; runner 2's job failed by itself.
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3, Finished: []string{pt.created[0].name, pt.created[1].name, pt.created[2].name},
			Failed: []FailedJob{failedOn(pt.created[0].name, 10), failedOn(pt.created[1].name, 11), failedOn(pt.created[2].name, 12)}})
	})
	pt.at(time.Minute+2*time.Second, func() {
		require.Len(t, *sent, 1, "the lost runner's job")
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[1].name, Reason: EndPodFailed, RunnerID: 2, Cause: activities.CauseOOMKilled})
		pt.done(pt.created[2].name, EndCompleted)
	})
	pt.at(time.Minute+3*time.Second, func() {
		require.Len(t, *sent, 2, "runner 1's job once its end came; not runner 2's")
		for i, want := range []struct {
			job   int64
			cause string
		}{{10, activities.CauseNodeLost}, {11, activities.CauseOOMKilled}} {
			s := (*sent)[i]
			require.Equal(t, contract.RerunWorkflowID("octo-org/app", 500+want.job, "build"), s.Start.ID)
			require.Equal(t, "RerunWorkflow", s.Start.Type)
			require.Equal(t, contract.SignalJobLost, s.Signal)
			var lost JobLost
			require.NoError(t, json.Unmarshal(s.Arg, &lost))
			require.Equal(t, want.job, lost.JobID)
			require.Equal(t, want.cause, lost.Cause)
			require.Equal(t, 2, lost.Limit)
			require.Equal(t, activities.PoolResourceRef{Namespace: "ci", Kind: "RunnerDeployment", Name: "app"}, lost.Pool)
		}
		st := pt.state()
		require.Empty(t, st.LostRunners, "matched entries are forgotten")
		require.Empty(t, st.FailedJobs)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(rerunsSpec(2))
}

// Without the annotation nothing is kept and nothing is re-run.
func TestAPoolWithoutReRunsKeepsNoLostJobs(t *testing.T) {
	pt, sent := lostJobTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() {
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[0].name, Reason: EndPodDeleted, RunnerID: 1, Cause: activities.CauseEvicted})
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, Finished: []string{pt.created[0].name}, Failed: []FailedJob{failedOn(pt.created[0].name, 10)}})
	})
	pt.at(time.Minute+time.Second, func() {
		require.Empty(t, *sent)
		st := pt.state()
		require.Empty(t, st.LostRunners)
		require.Empty(t, st.FailedJobs)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(rerunsSpec(0))
}

// Unmatched entries go after lostMatchWindow: a runner lost while idle, and
// a failed job whose runner never ended lost.
func TestUnmatchedLossesAreForgotten(t *testing.T) {
	pt, sent := lostJobTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() {
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[0].name, Reason: EndPodDeleted, RunnerID: 1, Cause: activities.CausePodDeleted})
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, Finished: []string{pt.created[1].name}, Failed: []FailedJob{failedOn(pt.created[1].name, 11)}})
	})
	pt.at(time.Minute+time.Second, func() {
		st := pt.state()
		require.Len(t, st.LostRunners, 1)
		require.Len(t, st.FailedJobs, 1)
	})
	pt.at(time.Minute+lostMatchWindow+time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) // any wake
	})
	pt.at(time.Minute+lostMatchWindow+2*time.Second, func() {
		require.Empty(t, *sent)
		st := pt.state()
		require.Empty(t, st.LostRunners)
		require.Empty(t, st.FailedJobs)
	})
	pt.deleteAndDrain(time.Minute + lostMatchWindow + time.Minute)
	pt.run(rerunsSpec(1))
}

// A runner lost just after its job started has not seen its own registration
// (RunnerDone without an ID), but the job's start told the pool: its job is
// lost all the same.
func TestARunnerLostBeforeItSawItsRegistrationLostItsJob(t *testing.T) {
	pt, sent := lostJobTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1}) })
	pt.at(2*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true, Running: []string{pt.created[0].name}})
	})
	pt.at(3*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[0].name, Reason: EndPodFailed, Cause: activities.CauseOOMKilled})
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true, Finished: []string{pt.created[0].name},
			Failed: []FailedJob{failedOn(pt.created[0].name, 10)}})
	})
	pt.at(4*time.Second, func() { require.Len(t, *sent, 1) })
	pt.deleteAndDrain(time.Minute)
	pt.run(rerunsSpec(1))
}

// A runner lost right after its job started, before it saw its registration
// and before the job's in_progress delivery reached the pool (a loaded
// machine): the failed completion naming it still makes one re-run. A runner
// lost the same way whose job no failed completion names makes none.
func TestARunnerLostBeforeAnyoneHeardItsJobLostItsJob(t *testing.T) {
	pt, sent := lostJobTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(3*time.Second, func() {
		for _, r := range pt.created[:2] {
			pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: r.name, Reason: EndPodFailed, Cause: activities.CauseOOMKilled})
		}
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, StartsDelivered: true, Finished: []string{pt.created[0].name},
			Failed: []FailedJob{failedOn(pt.created[0].name, 10)}})
	})
	pt.at(4*time.Second, func() {
		require.Len(t, *sent, 1, "the job of the runner lost before its start was heard")
		require.Contains(t, (*sent)[0].Start.ID, "/510/", "runner 0's job")
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(rerunsSpec(1))
}

// A runner scale set names a lost job by an id of its own, often with no
// run: the pool finds GitHub's job by its runner's name before it signals the
// re-run, and a job that cannot be found is not re-run.
func TestAPoolFindsAScaleSetJobByItsRunner(t *testing.T) {
	pt, sent := lostJobTest(t)
	var asked []activities.FindRunnerJobInput
	pt.env.OnActivity(gh.FindRunnerJob, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FindRunnerJobInput) (activities.FindRunnerJobOutput, error) {
			asked = append(asked, in)
			if in.Runner != pt.created[0].name {
				return activities.FindRunnerJobOutput{}, nil
			}
			return activities.FindRunnerJobOutput{Found: true, RunID: 900, JobID: 9001, JobName: "test (ubuntu)", RunAttempt: 2}, nil
		})
	queued := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	setJob := func(runner string) FailedJob {
		return FailedJob{Runner: runner, Repository: "octo-org/app", JobName: "test (ubuntu)", RunAttempt: 1, Conclusion: "failure",
			FindByRunner: true, QueuedAt: queued}
	}
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() {
		for i := range 2 {
			pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[i].name, Reason: EndPodDeleted, RunnerID: int64(i + 1), Cause: activities.CauseNodeLost})
		}
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0, Finished: []string{pt.created[0].name, pt.created[1].name},
			Failed: []FailedJob{setJob(pt.created[0].name), setJob(pt.created[1].name)}})
	})
	pt.at(time.Minute+time.Second, func() {
		require.Len(t, asked, 2)
		require.Equal(t, activities.FindRunnerJobInput{Repository: "octo-org/app", Runner: pt.created[0].name, QueuedAt: queued}, asked[0])
		require.Len(t, *sent, 1, "only the job found is re-run")
		s := (*sent)[0]
		require.Equal(t, contract.RerunWorkflowID("octo-org/app", 900, "test (ubuntu)"), s.Start.ID)
		var lost JobLost
		require.NoError(t, json.Unmarshal(s.Arg, &lost))
		require.Equal(t, int64(9001), lost.JobID)
		require.Equal(t, 2, lost.RunAttempt)
		var in RerunInput
		require.NoError(t, json.Unmarshal(s.Start.Input, &in))
		require.Equal(t, RerunInput{Repository: "octo-org/app", RunID: 900, JobName: "test (ubuntu)"}, in)
		require.Empty(t, pt.state().FailedJobs)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(rerunsSpec(1))
}
