package webhook

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A completion names the runner that ran the job, so the autoscaler can tell
// its pool that runner is finishing; a queued job has no runner yet.
func TestCompletedDeliveryNamesItsRunner(t *testing.T) {
	rec := &recorder{}
	s, _ := newTestServer(t, rec)
	queued := fixture(t, "workflow_job.queued.payload.json")
	require.Equal(t, http.StatusAccepted, deliver(s, "workflow_job", "d-queued", queued, sign(queued)).Code)
	completed := fixture(t, "workflow_job.completed.success.with-organization.payload.json")
	resp := deliver(s, "workflow_job", "d-completed", completed, sign(completed))
	require.Equal(t, http.StatusAccepted, resp.Code, resp.Body.String())

	require.Len(t, rec.signals, 2)
	require.Empty(t, rec.signals[0].RunnerName)
	require.Equal(t, "completed", rec.signals[1].Action)
	require.Equal(t, "GitHub Actions 5", rec.signals[1].RunnerName)
	require.Equal(t, time.Date(2021, 8, 5, 10, 34, 58, 0, time.UTC), rec.signals[1].StartedAt.UTC(),
		"when it started: for a job that waited, when its runner became ready")
}

// An in_progress delivery names the runner that took the job, so the
// autoscaler can tell its pool that runner is busy (and registered) without
// asking GitHub; it reserves nothing, so it carries no spill-over.
func TestInProgressDeliveryNamesItsBusyRunner(t *testing.T) {
	rec := &recorder{}
	s, _ := newTestServer(t, rec)
	body := fixture(t, "workflow_job.in_progress.payload.json")
	resp := deliver(s, "workflow_job", "d-started", body, sign(body))
	require.Equal(t, http.StatusAccepted, resp.Code, resp.Body.String())
	require.Len(t, rec.signals, 1)
	ev := rec.signals[0]
	require.Equal(t, "in_progress", ev.Action)
	require.Equal(t, "GitHub Actions 5", ev.RunnerName)
	require.Equal(t, int64(5), ev.RunnerID, "the runner learns from it that it registered")
	require.Equal(t, int64(289782451), ev.JobID)
	require.Equal(t, int64(2202229078), ev.RunID)
	require.Empty(t, ev.Overflow, "a start follows its job from the first autoscaler, as a completion does")
}

// A failed completion carries what a re-run of the job needs: its name, its
// run and the run's attempt, and the conclusion (from GitHub's own payload).
func TestFailedCompletionCarriesWhatAReRunNeeds(t *testing.T) {
	rec := &recorder{}
	s, _ := newTestServer(t, rec)
	queued := fixture(t, "workflow_job.queued.payload.json")
	require.Equal(t, http.StatusAccepted, deliver(s, "workflow_job", "d-queued", queued, sign(queued)).Code)
	failed := fixture(t, "workflow_job.completed.failure.with-organization.payload.json")
	resp := deliver(s, "workflow_job", "d-failed", failed, sign(failed))
	require.Equal(t, http.StatusAccepted, resp.Code, resp.Body.String())
	require.Len(t, rec.signals, 2)
	ev := rec.signals[1]
	require.Equal(t, "completed", ev.Action)
	require.Equal(t, "failure", ev.Conclusion)
	require.Equal(t, "linters", ev.JobName)
	require.Equal(t, 1, ev.RunAttempt)
	require.Equal(t, int64(289782451), ev.JobID)
	require.Equal(t, int64(2202229078), ev.RunID)
}
