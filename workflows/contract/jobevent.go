package contract

import "time"

// JobEvent is the payload of the autoscaler's job signal: one workflow_job
// delivery, as the webhook server accepted it.
type JobEvent struct {
	DeliveryID string `json:"deliveryID"`
	JobID      int64  `json:"jobID"`
	// RunID is the job's workflow run, which the missed-webhook reconcile asks
	// about instead of each of its jobs.
	RunID int64 `json:"runID,omitempty"`
	// Action is queued, in_progress or completed; the webhook drops the
	// others. An in_progress event only names the runner that took the job
	// (an older autoscaler applies it as nothing).
	Action string `json:"action"`
	// Repository is owner/name, for logs and the reconcile.
	Repository string `json:"repository,omitempty"`
	// RunnerName is the runner a job started (in_progress) or ran on
	// (completed) (workflow_job.runner_name), which the autoscaler passes to
	// its pool as busy, then as finishing.
	RunnerName string `json:"runnerName,omitempty"`
	// RunnerID is GitHub's ID of RunnerName (workflow_job.runner_id), sent
	// on in_progress: the runner learns from it that it registered.
	RunnerID int64 `json:"runnerID,omitempty"`
	// QueuedAt is when GitHub queued the job (workflow_job.created_at): a
	// completion of a job queued before the autoscaler first ran is one whose
	// reservation ARC made, if it took over from ARC.
	QueuedAt time.Time `json:"queuedAt,omitzero"`
	// StartedAt is when a completed job started on RunnerName
	// (workflow_job.started_at): a job that waited for that runner started
	// when it became ready, which tells the pool its time to ready.
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Overflow lists the workflow IDs of the other autoscalers that match a
	// queued job, in the order they are tried: an autoscaler whose pool is at
	// maxReplicas passes the job to the first of them (spill-over), and sends
	// it the job's completion too.
	Overflow []string `json:"overflow,omitempty"`
	// JobName, RunAttempt and Conclusion (completed only) of the job: a
	// failed job whose runner infrastructure took away is re-run by name in
	// its run, once that attempt of the run completed.
	JobName    string `json:"jobName,omitempty"`
	RunAttempt int    `json:"runAttempt,omitempty"`
	Conclusion string `json:"conclusion,omitempty"`
	// ScaleSetJob: a runner scale set's listener sent the event. JobID is
	// then ScaleSetJobKey of the set's own job id, not GitHub's, and RunID
	// and RunAttempt may be unknown: a re-run finds the job by RunnerName.
	ScaleSetJob bool `json:"scaleSetJob,omitempty"`
}

// JobStarted tells a runner that GitHub started a job on it: it registered,
// with RunnerID, and is busy.
type JobStarted struct {
	JobID    int64 `json:"jobID"`
	RunnerID int64 `json:"runnerID"`
}
