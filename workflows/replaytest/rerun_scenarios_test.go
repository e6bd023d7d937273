package replaytest

import (
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A job lost to infrastructure: the re-run workflow waits one poll for the
// run to complete and re-runs it; the re-run job lost too is past the limit
// of 1; the workflow ends after its watch.
func TestRecordRerunHistories(t *testing.T) {
	needServers(t)
	t.Run("rerun-lost-job", func(t *testing.T) {
		r := newRecorder(t, plain, "rerun-lost-job")
		id := contract.RerunWorkflowID("octo-org/app", 900, "build")
		pool := activities.PoolResourceRef{Namespace: ns, Kind: "RunnerDeployment", Name: "rerun-lost-job"}
		// The watch outlasts the wait for the first re-run, whose queries took
		// 5 s each on a loaded machine: with a watch of 3 s the workflow had
		// ended before the second loss was signalled.
		in := workflows.RerunInput{Repository: "octo-org/app", RunID: 900, JobName: "build", Watch: 20 * time.Second, FirstPoll: 200 * time.Millisecond}
		run, err := r.c.SignalWithStartWorkflow(r.ctx, id, contract.SignalJobLost,
			workflows.JobLost{JobID: 901, RunAttempt: 1, Runner: "rerun-lost-job-a", Cause: activities.CauseNodeLost, Limit: 1, Pool: pool},
			client.StartWorkflowOptions{ID: id, TaskQueue: contract.TaskQueue}, workflows.RerunWorkflow, in)
		if err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		waitState(r, id, "the job re-run", func(s workflows.RerunState) bool { return s.Reruns == 1 })
		r.signal(id, contract.SignalJobLost,
			workflows.JobLost{JobID: 902, RunAttempt: 2, Runner: "rerun-lost-job-b", Cause: activities.CauseOOMKilled, Limit: 1, Pool: pool})
		var st workflows.RerunState
		r.waitDone(id, &st)
		if len(st.Outcomes) != 2 || st.Outcomes[1] != activities.RerunLimitReached {
			t.Fatalf("outcomes %v: want a re-run, then the limit", st.Outcomes)
		}
		r.export("", id, run.GetRunID())
		r.finish()
	})
}
