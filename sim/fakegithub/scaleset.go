package fakegithub

import (
	"strings"
	"sync"
	"time"
)

// The fake Actions service: runner scale sets, their sessions and message
// queues, as a scale-set listener sees them, in the real service's forms
// (full typeNames, ActivityId and X-GitHub-Request-Id headers, the queue URL
// with the session in its query), so a client that misreads them fails here.
// Its base URL (what runner-registration hands out) is URL + "actions-service/".

// ActionsOptions are the Actions service's timings; zero fields keep the
// defaults.
type ActionsOptions struct {
	// PollHold is how long a message poll waits for a message before 202
	// (the service holds about 50 s).
	PollHold time.Duration
	// AdminTokenTTL and SessionTokenTTL are the lifetimes of the admin JWT
	// and of a session's message queue token (the service's are about an hour).
	AdminTokenTTL, SessionTokenTTL time.Duration
	// SessionTTL is how long a session nobody polls or refreshes holds the set
	// (unverified on the real service; 2 minutes here).
	SessionTTL time.Duration
	// GHES makes jobs arrive as JobAvailable, to be acquired, as on GitHub
	// Enterprise Server.
	GHES bool
	// RequestIDZero sends runnerRequestId and workflowRunId as 0, as
	// github.com often does.
	RequestIDZero bool
}

func (o ActionsOptions) withDefaults() ActionsOptions {
	if o.PollHold == 0 {
		o.PollHold = 50 * time.Second
	}
	if o.AdminTokenTTL == 0 {
		o.AdminTokenTTL = time.Hour
	}
	if o.SessionTokenTTL == 0 {
		o.SessionTokenTTL = time.Hour
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 2 * time.Minute
	}
	return o
}

// actionsService is the state behind the scale set endpoints. Server.mu
// guards it.
type actionsService struct {
	opts ActionsOptions
	// adminTokens: admin JWT -> the scope (orgs/o, repos/o/r, enterprises/e)
	// of the configuration URL it was issued for.
	adminTokens map[string]string
	sets        map[int64]*scaleSet
	nextSetID   int64
	// nextMessageID is shared by every set's queue; ids start near 10^8, as
	// the service's do.
	nextMessageID int64
	// changed is closed and replaced when a message may be ready.
	changed chan struct{}
	faults  actionsFaults
	// staleStatistics freezes the statistics a message reports.
	staleStatistics *ScaleSetStatistics
	// userAgentsMu guards the User-Agents seen: they are recorded before a
	// handler runs, without s.mu.
	userAgentsMu  sync.Mutex
	userAgents    []string
	lastUserAgent string
}

// actionsFaults are the service's misbehaviours a test asks for.
type actionsFaults struct {
	registrationRefusals int // runner-registration answers 401
	serverErrors         int // queue polls answer 503
	tooManyRequests      int // queue polls answer 429 with Retry-After
	retryAfter           time.Duration
	emptyOKs             int  // queue polls answer 200 with no body
	emptyQueueURLs       int  // session creates answer with no messageQueueUrl
	bom                  bool // every JSON body starts with a UTF-8 BOM
	// deletesHeld, while open, holds every message delete until it closes.
	deletesHeld chan struct{}
}

type scaleSet struct {
	ID            int64
	Name          string
	RunnerGroupID int64
	Scope         string
	Labels        []string
	DisableUpdate bool
	session       *setSession
	// messages are the undeleted messages, oldest first; pending the job
	// events not yet put into one.
	messages []setMessage
	pending  []setJobMessage
	// maxCapacity is the last X-ScaleSetMaxCapacity a poll sent (-1: none yet).
	maxCapacity int
	// acquirableNotFound makes acquirablejobs answer 404 (AcquirableJobsNotFound).
	acquirableNotFound bool
}

type setSession struct {
	ID, Owner, Token string
	TokenExpires     time.Time
	// Expires is when the session stops holding the set: SessionTTL after its
	// last poll or refresh, or what a test set (HoldSetBy, ExpireSession).
	Expires time.Time
}

type setMessage struct {
	ID int64
	// Type is the envelope's messageType; empty is RunnerScaleSetJobMessages.
	Type string
	Body string
	// Statistics are those of the moment the message was made.
	Statistics ScaleSetStatistics
}

// ScaleSetStatistics are what the service reports with every message and
// session.
type ScaleSetStatistics struct {
	TotalAvailableJobs     int `json:"totalAvailableJobs"`
	TotalAcquiredJobs      int `json:"totalAcquiredJobs"`
	TotalAssignedJobs      int `json:"totalAssignedJobs"`
	TotalRunningJobs       int `json:"totalRunningJobs"`
	TotalRegisteredRunners int `json:"totalRegisteredRunners"`
	TotalBusyRunners       int `json:"totalBusyRunners"`
	TotalIdleRunners       int `json:"totalIdleRunners"`
}

// setJobMessage is one job message in a message's body.
type setJobMessage struct {
	MessageType        string   `json:"messageType"`
	JobID              string   `json:"jobId"`
	RunnerRequestID    int64    `json:"runnerRequestId"`
	WorkflowRunID      int64    `json:"workflowRunId"`
	RepositoryName     string   `json:"repositoryName"`
	OwnerName          string   `json:"ownerName"`
	JobWorkflowRef     string   `json:"jobWorkflowRef"`
	JobDisplayName     string   `json:"jobDisplayName"`
	EventName          string   `json:"eventName"`
	RequestLabels      []string `json:"requestLabels"`
	QueueTime          string   `json:"queueTime,omitempty"`
	ScaleSetAssignTime string   `json:"scaleSetAssignTime,omitempty"`
	RunnerAssignTime   string   `json:"runnerAssignTime,omitempty"`
	FinishTime         string   `json:"finishTime,omitempty"`
	AcquireJobURL      string   `json:"acquireJobUrl,omitempty"`
	RunnerID           int64    `json:"runnerId,omitempty"`
	RunnerName         string   `json:"runnerName,omitempty"`
	Result             string   `json:"result,omitempty"`
}

// ScaleSetInfo is a scale set as a test sees it.
type ScaleSetInfo struct {
	ID            int64
	Name          string
	RunnerGroupID int64
	Labels        []string
	// Session is the live session's id and owner, empty without one (an
	// expired session holds the set no more).
	Session, SessionOwner string
	// Undeleted counts the messages the listener has not deleted.
	Undeleted int
	// MaxCapacity is the X-ScaleSetMaxCapacity the set's last poll sent
	// (-1: none yet).
	MaxCapacity int
}

// info is the set as a test sees it. Callers hold s.mu.
func (s *Server) info(set *scaleSet) ScaleSetInfo {
	out := ScaleSetInfo{ID: set.ID, Name: set.Name, RunnerGroupID: set.RunnerGroupID, Labels: set.Labels, Undeleted: len(set.messages), MaxCapacity: set.maxCapacity}
	if s.live(set) {
		out.Session, out.SessionOwner = set.session.ID, set.session.Owner
	}
	return out
}

// covers reports whether the set's scope may run jobs of repo (owner/name).
func (set *scaleSet) covers(repo string) bool {
	switch {
	case strings.HasPrefix(set.Scope, "repos/"):
		return set.Scope == "repos/"+repo
	case strings.HasPrefix(set.Scope, "orgs/"):
		return strings.EqualFold(strings.TrimPrefix(set.Scope, "orgs/"), strings.Split(repo, "/")[0])
	default:
		return true
	}
}

// targetedBy reports whether a job's runs-on labels name this set: every
// label is the set's name or one of its labels (case-insensitive).
func (set *scaleSet) targetedBy(labels []string) bool {
	if len(labels) == 0 {
		return false
	}
	for _, want := range labels {
		ok := strings.EqualFold(want, set.Name)
		for _, have := range set.Labels {
			ok = ok || strings.EqualFold(want, have)
		}
		if !ok {
			return false
		}
	}
	return true
}

func newActionsService(opts ActionsOptions) *actionsService {
	return &actionsService{
		opts:          opts.withDefaults(),
		adminTokens:   map[string]string{},
		sets:          map[int64]*scaleSet{},
		nextSetID:     0,
		nextMessageID: 100_000_000,
		changed:       make(chan struct{}),
	}
}

// wake tells waiting polls that a message may be ready. Callers hold s.mu.
func (a *actionsService) wake() {
	close(a.changed)
	a.changed = make(chan struct{})
}
