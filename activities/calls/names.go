package calls

// The activities' names. The worker registers *activities.Kubernetes,
// *activities.GitHub and *activities.Workflows, and Temporal names each activity
// after its method; a test in package activities holds these equal to those
// methods. Workflows call activities by these names, so the deterministic code
// links none of the code that does the I/O.

// Methods of *activities.Kubernetes.
const (
	ARCRunnerSet          = "ARCRunnerSet"
	ARCRunners            = "ARCRunners"
	AdoptARCClaims        = "AdoptARCClaims"
	DeleteRunnerPod       = "DeleteRunnerPod"
	DeleteVolumes         = "DeleteVolumes"
	EnsureRunnerPod       = "EnsureRunnerPod"
	GetRunnerPod          = "GetRunnerPod"
	HandBackReservations  = "HandBackReservations"
	LastArrivalInScope    = "LastArrivalInScope"
	OwnRunners            = "OwnRunners"
	ReleasePoolResource   = "ReleasePoolResource"
	ReportLostJob         = "ReportLostJob"
	ReportScaleSetSession = "ReportScaleSetSession"
	RunnerPodPhases       = "RunnerPodPhases"
	UpdateHRAStatus       = "UpdateHRAStatus"
	UpdateHRAWarmStatus   = "UpdateHRAWarmStatus"
	UpdatePoolStatus      = "UpdatePoolStatus"
)

// Methods of *activities.GitHub.
const (
	FindRunner      = "FindRunner"
	FindRunnerJob   = "FindRunnerJob"
	ListQueuedJobs  = "ListQueuedJobs"
	RemoveRunner    = "RemoveRunner"
	RerunLostJob    = "RerunLostJob"
	RunnerBusy      = "RunnerBusy"
	RunnerIDs       = "RunnerIDs"
	SuggestReplicas = "SuggestReplicas"
)

// Methods of *activities.Workflows.
const (
	SignalWithStartWorkflow = "SignalWithStartWorkflow"
	SignalWorkflow          = "SignalWorkflow"
	SignalWorkflowGrouped   = "SignalWorkflowGrouped"
	StartWorkflows          = "StartWorkflows"
)

// Methods of *activities.ScaleSets: the Actions service calls of a runner
// scale set's listener.
const (
	EnsureScaleSet       = "EnsureScaleSet"
	OpenScaleSetSession  = "OpenScaleSetSession"
	PollScaleSet         = "PollScaleSet"
	CloseScaleSetSession = "CloseScaleSetSession"
)
