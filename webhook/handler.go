package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	gogithub "github.com/google/go-github/v88/github"
	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/internal/temporalerr"
	"github.com/arcflow/arcflow/workflows/contract"
)

// handle answers one delivery. Bad input gets a clear 4xx; an event that changes
// nothing gets 200 with the reason; a job event gets 202 only once Temporal has
// durably accepted the signal that carries it (see groupCommitter), and 503 when
// it could not, so GitHub's redelivery is safe.
func (s *Server) handle(c echo.Context) error {
	r := c.Request()
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	reply := func(status int, result, text string) error {
		s.metrics.deliveries.WithLabelValues(event, result).Inc()
		if status >= 400 {
			s.log.Warn("webhook delivery refused", "delivery_id", delivery, "event", event, "status", status, "reason", text)
		}
		return c.String(status, text)
	}

	mediaType, err := mediaTypeOf(r.Header.Get("Content-Type"))
	if err != nil {
		return reply(http.StatusUnsupportedMediaType, "unsupported_media_type", err.Error())
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return reply(http.StatusRequestEntityTooLarge, "too_large", "payload larger than the limit")
	case err != nil:
		return reply(http.StatusBadRequest, "unreadable", "cannot read the body")
	}
	if !s.cfg.Insecure {
		if err := verifySignature(r.Header, body, s.cfg.Secret); err != nil {
			return reply(http.StatusUnauthorized, "bad_signature", "signature missing or invalid")
		}
	}
	if body, err = payloadOf(mediaType, body); err != nil {
		return reply(http.StatusBadRequest, "malformed", err.Error())
	}

	switch event {
	case "ping":
		return reply(http.StatusOK, "pong", "pong")
	case "workflow_job":
		return s.handleJob(c, delivery, body, reply)
	case "":
		return reply(http.StatusBadRequest, "no_event", "missing X-GitHub-Event header")
	}
	return reply(http.StatusAccepted, "ignored", "ignored: arcflow scales on workflow_job events only, not "+event)
}

type replyFunc func(status int, result, text string) error

func (s *Server) handleJob(c echo.Context, delivery string, body []byte, reply replyFunc) error {
	var ev gogithub.WorkflowJobEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.WorkflowJob == nil || ev.Repo == nil {
		return reply(http.StatusBadRequest, "malformed", "malformed workflow_job payload")
	}
	var extra struct {
		Enterprise struct {
			Slug string `json:"slug"`
		} `json:"enterprise"`
	}
	_ = json.Unmarshal(body, &extra) // go-github's event type has no enterprise slug
	job := ev.WorkflowJob
	action := ev.GetAction()
	if action == "in_progress" && job.StartedAt != nil && job.CreatedAt != nil {
		s.metrics.startup.Observe(job.GetStartedAt().Sub(job.GetCreatedAt().Time).Seconds())
	}
	switch {
	case action != "queued" && action != "in_progress" && action != "completed":
		return reply(http.StatusOK, "ignored", "ignored: action "+action)
	case action == "in_progress" && job.GetRunnerName() == "":
		return reply(http.StatusOK, "ignored", "ignored: in_progress without a runner")
	case action == "completed" && job.GetConclusion() == "skipped":
		return reply(http.StatusOK, "ignored", "ignored: skipped job")
	case action == "completed" && job.GetConclusion() == "success" && job.GetRunnerID() == 0:
		return reply(http.StatusOK, "ignored", "ignored: completion without a runner (not a self-hosted job)")
	}

	match, ok := s.finder.Find(Job{
		Repository: ev.Repo.GetFullName(), OwnerType: ev.Repo.GetOwner().GetType(),
		Org: ev.GetOrg().GetLogin(), Enterprise: extra.Enterprise.Slug, Labels: job.Labels,
	})
	if !ok {
		return reply(http.StatusOK, "no_match", "no horizontalrunnerautoscaler to scale for this github event")
	}
	if match.Target.ScaleSet != "" {
		// Counted once: the set's listener hears this job from GitHub's queue.
		return reply(http.StatusOK, "scale_set", "the "+match.Target.Kind+" "+match.HRA.Namespace+"/"+match.Target.Name+
			" joins runner scale set "+match.Target.ScaleSet+", whose listener hears its jobs; this delivery changes nothing")
	}
	spec, err := hraspec.Of(match.HRA, match.Target, s.cfg.Autoscaling)
	if err != nil {
		return reply(http.StatusOK, "invalid_hra", "horizontalrunnerautoscaler "+match.HRA.Namespace+"/"+match.HRA.Name+" is invalid: "+err.Error())
	}

	id := contract.AutoscalerWorkflowID(match.HRA.Namespace, match.HRA.Name)
	event := contract.JobEvent{DeliveryID: delivery, JobID: job.GetID(), Action: action, Repository: ev.Repo.GetFullName(),
		RunID: job.GetRunID(), QueuedAt: job.GetCreatedAt().Time}
	switch action {
	case "queued":
		event.Overflow = match.Overflow // a completion follows its reservation from the first autoscaler
	case "in_progress":
		event.RunnerName = job.GetRunnerName() // busy: its pool need not ask GitHub
		event.RunnerID = job.GetRunnerID()     // registered: the runner need not ask either
	case "completed":
		event.RunnerName = job.GetRunnerName() // finishing: its pool stops counting it
		event.StartedAt = job.GetStartedAt().Time
		// What a re-run of a job lost to infrastructure needs (pool_lost.go).
		event.JobName, event.RunAttempt, event.Conclusion = job.GetName(), int(job.GetRunAttempt()), job.GetConclusion()
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.SignalTimeout)
	defer cancel()
	if err := s.commits.Submit(ctx, id, event, startOf(id, match, spec)); err != nil {
		if c.Request().Context().Err() != nil {
			return reply(http.StatusServiceUnavailable, "cancelled", "request cancelled before the signal was durable")
		}
		s.log.Error("temporal did not accept the signal; GitHub may redeliver", "delivery_id", delivery, "hra", id, "error", err)
		if problem := temporalerr.Classify(err, s.cfg.TemporalNamespace); problem.Reason == temporalerr.ReasonNotSetUp {
			return reply(http.StatusServiceUnavailable, "temporal_not_set_up", "temporal is not set up for arcflow: "+problem.Message+"; redeliver after")
		}
		return reply(http.StatusServiceUnavailable, "temporal_unavailable", "temporal is unavailable; redeliver later")
	}
	s.log.Info("job signalled", "delivery_id", delivery, "hra", id, "job_id", job.GetID(), "action", action)
	switch action {
	case "in_progress":
		return reply(http.StatusAccepted, "accepted", "runner "+event.RunnerName+" of "+match.HRA.Namespace+"/"+match.HRA.Name+" is busy")
	case "completed":
		return reply(http.StatusAccepted, "accepted", "scaled "+match.HRA.Namespace+"/"+match.HRA.Name+" by -1")
	}
	return reply(http.StatusAccepted, "accepted", "scaled "+match.HRA.Namespace+"/"+match.HRA.Name+" by +1")
}

// startOf is how to start the matched autoscaler if it is not running yet.
func startOf(id string, match Match, spec contract.AutoscalerSpec) autoscalerStart {
	return autoscalerStart{
		options: client.StartWorkflowOptions{
			ID: id, TaskQueue: contract.ControlTaskQueue, Memo: contract.AutoscalerMemo(match.HRA.Namespace, match.HRA.Name, spec.TargetKind, spec.TargetName),
			TypedSearchAttributes: temporal.NewSearchAttributes(
				contract.SearchAttrKind.ValueSet("autoscaler"),
				contract.SearchAttrPool.ValueSet(match.HRA.Namespace+"/"+match.Target.Name),
				contract.SearchAttrScope.ValueSet(spec.Scope.String()),
			),
		},
		input: contract.AutoscalerStart{Spec: spec},
	}
}
