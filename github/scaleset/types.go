package scaleset

// ScaleSet is a runner scale set.
type ScaleSet struct {
	ID            int64
	Name          string
	RunnerGroupID int64
	Labels        []string
	DisableUpdate bool
}

// Statistics are the service's counts for a set, sent with every message and
// session. TotalAssignedJobs (waiting plus running) is the demand.
type Statistics struct {
	TotalAvailableJobs     int `json:"totalAvailableJobs"`
	TotalAcquiredJobs      int `json:"totalAcquiredJobs"`
	TotalAssignedJobs      int `json:"totalAssignedJobs"`
	TotalRunningJobs       int `json:"totalRunningJobs"`
	TotalRegisteredRunners int `json:"totalRegisteredRunners"`
	TotalBusyRunners       int `json:"totalBusyRunners"`
	TotalIdleRunners       int `json:"totalIdleRunners"`
}

// Session is a listener's hold on a set. Its queue token stays in the Client.
type Session struct {
	ID         string
	OwnerName  string
	Statistics Statistics
}

// The job message types.
const (
	JobAvailable = "JobAvailable"
	JobAssigned  = "JobAssigned"
	JobStarted   = "JobStarted"
	JobCompleted = "JobCompleted"
)

// JobMessage is one job event of a message. JobID is the key: request and run
// ids are often 0 on github.com.
type JobMessage struct {
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
	RunnerID           int64    `json:"runnerId,omitempty"`
	RunnerName         string   `json:"runnerName,omitempty"`
	Result             string   `json:"result,omitempty"`
}

// Message is one message of a session's queue: its job events, in order, and
// the statistics of its moment.
type Message struct {
	ID int64
	// Type is the envelope's messageType: JobMessagesType, or one this
	// client does not know, whose jobs and statistics it does not read.
	Type       string
	Jobs       []JobMessage
	Statistics Statistics
}
