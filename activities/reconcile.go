package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/arcflow/arcflow/github"
)

// reconcileByRun is the missed-webhook reconcile at a cost that does not grow
// with the queue: the open runs of each repository (two calls, shared by every
// autoscaler of the repository through the HTTP cache), and the jobs only of
// queued runs that no webhook told the autoscaler or another of the process
// about (knownRuns), once queued longer than in.Quiet. A run it knows is not asked about: its reservations end with
// its completions, or with the run (OpenRuns no longer lists it). Past the call
// budget nothing is asked.
func reconcileByRun(ctx context.Context, lister JobLister, in QueuedJobsInput, others *knownRuns) (QueuedJobsOutput, error) {
	var out QueuedJobsOutput
	known := map[int64]bool{}
	for _, id := range in.KnownRuns {
		known[id] = true
	}
	young, theirs := 0, 0
	now := time.Now()
	if in.Running {
		ctx = github.WithFresh(ctx) // the cache's runs may be from before the history was lost
	}
	others.note(in.Repositories, in.KnownRuns, now)
	for _, repo := range in.Repositories {
		queued, inProgress, err := lister.OpenRuns(ctx, repo)
		if errors.Is(err, github.ErrDeferred) {
			slog.Info("missed-webhook reconcile deferred: the GitHub call budget is spent", "repository", repo)
			return QueuedJobsOutput{Deferred: true}, nil
		}
		if err != nil {
			return out, githubError(err)
		}
		out.Calls += 2
		for _, run := range append(inProgress, queued...) {
			out.OpenRuns = append(out.OpenRuns, run.ID)
		}
		ask := queued
		if in.Running {
			// An autoscaler with no history: the in-progress runs' jobs too,
			// queued ones among them, and the running ones it reserves.
			ask = append(ask, inProgress...)
		}
		for _, r := range ask {
			run := r.ID
			switch {
			case known[run]:
				continue
			case !in.Running && now.Sub(r.CreatedAt) < in.Quiet:
				young++
				continue
			case others.knows(repo, run, now):
				theirs++ // another autoscaler's, told by the webhook
				continue
			}
			jobs, err := lister.RunJobs(ctx, repo, run)
			if err != nil {
				return out, githubError(err)
			}
			out.Calls++
			for _, j := range jobs {
				if !github.LabelsFit(j.Labels, in.Labels, true) {
					continue
				}
				switch {
				case j.Status == "queued":
					out.Queued, out.QueuedRuns = append(out.Queued, j.ID), append(out.QueuedRuns, run)
				case j.Status == "in_progress" && in.Running:
					out.InProgress, out.InProgressRuns = append(out.InProgress, j.ID), append(out.InProgressRuns, run)
				}
			}
		}
	}
	slog.Info("missed-webhook reconcile", "repositories", len(in.Repositories), "calls", out.Calls,
		"open_runs", len(out.OpenRuns), "young_unknown_runs", young, "runs_others_know", theirs, "unknown_queued_jobs", len(out.Queued))
	return out, nil
}
