package sim

import (
	"encoding/json"
	"testing"

	gh "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// A delivery carries the job's run_attempt, which fakegithub.JobEvent brings from
// the fake through JobInfo: 1 for a first run, more for a re-run's job.
func TestWorkflowJobPayloadCarriesRunAttempt(t *testing.T) {
	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	var got []fakegithub.JobEvent
	srv.OnJobEvent(func(e fakegithub.JobEvent) { got = append(got, e) })
	srv.QueueJob("octo-org/app", "build", []string{"self-hosted"})
	require.Len(t, got, 1)

	retried := got[0]
	retried.Job.ID, retried.Job.RunAttempt = retried.Job.ID+1, 2
	for want, e := range map[int64]fakegithub.JobEvent{1: got[0], 2: retried} {
		body, err := workflowJobPayload(e, true)
		require.NoError(t, err)
		var parsed gh.WorkflowJobEvent
		require.NoError(t, json.Unmarshal(body, &parsed))
		require.Equal(t, want, parsed.GetWorkflowJob().GetRunAttempt())
	}
}
