package activities

import "github.com/arcflow/arcflow/activities/calls"

// The shapes the workflows call activities with live in package calls, which
// does no I/O, so the deterministic workflows link none of this package. These
// aliases let the activities name them as before.
type (
	ARCClaimSet           = calls.ARCClaimSet
	ARCRunner             = calls.ARCRunner
	ARCRunnerSetInput     = calls.ARCRunnerSetInput
	ARCRunnerSetRunners   = calls.ARCRunnerSetRunners
	ARCRunnersInput       = calls.ARCRunnersInput
	AdoptARCClaimsInput   = calls.AdoptARCClaimsInput
	DeleteVolumesInput    = calls.DeleteVolumesInput
	FindRunnerInput       = calls.FindRunnerInput
	FindRunnerOutput      = calls.FindRunnerOutput
	HRAStatusInput        = calls.HRAStatusInput
	HRAWarmStatusInput    = calls.HRAWarmStatusInput
	LostJobReport         = calls.LostJobReport
	MetricsInput          = calls.MetricsInput
	PodRef                = calls.PodRef
	PodState              = calls.PodState
	PoolResourceRef       = calls.PoolResourceRef
	PoolStatus            = calls.PoolStatus
	PoolStatusInput       = calls.PoolStatusInput
	QueuedJobsInput       = calls.QueuedJobsInput
	QueuedJobsOutput      = calls.QueuedJobsOutput
	RateLimitDetails      = calls.RateLimitDetails
	RemoveRunnerInput     = calls.RemoveRunnerInput
	RemoveRunnerOutput    = calls.RemoveRunnerOutput
	RerunLostJobInput     = calls.RerunLostJobInput
	FindRunnerJobInput    = calls.FindRunnerJobInput
	FindRunnerJobOutput   = calls.FindRunnerJobOutput
	RerunLostJobOutput    = calls.RerunLostJobOutput
	RunnerBusyInput       = calls.RunnerBusyInput
	RunnerPodInput        = calls.RunnerPodInput
	RunnerPodOutput       = calls.RunnerPodOutput
	RunnerPodPhasesInput  = calls.RunnerPodPhasesInput
	ScaleSetSessionReport = calls.ScaleSetSessionReport
	ScopeActivityInput    = calls.ScopeActivityInput
	ScopeActivityOutput   = calls.ScopeActivityOutput
	VolumeSlotRef         = calls.VolumeSlotRef
	WorkflowSignal        = calls.WorkflowSignal
	GroupedSignal         = calls.GroupedSignal
	WorkflowSignalStart   = calls.WorkflowSignalStart
	WorkflowStart         = calls.WorkflowStart
)

const (
	CauseEvicted            = calls.CauseEvicted
	CauseNodeLost           = calls.CauseNodeLost
	CauseOOMKilled          = calls.CauseOOMKilled
	CausePodDeleted         = calls.CausePodDeleted
	CausePreempted          = calls.CausePreempted
	CauseRunnerDied         = calls.CauseRunnerDied
	ErrTypeAdmissionRefused = calls.ErrTypeAdmissionRefused
	ErrTypeForbidden        = calls.ErrTypeForbidden
	ErrTypeInvalidSpec      = calls.ErrTypeInvalidSpec
	ErrTypeRateLimited      = calls.ErrTypeRateLimited
	ErrTypeRunnerBusy       = calls.ErrTypeRunnerBusy
	AnnotationReadyUntold   = calls.AnnotationReadyUntold
	LabelPool               = calls.LabelPool
	LabelRunner             = calls.LabelRunner
	LabelRunnerDeployment   = calls.LabelRunnerDeployment
	LabelRunnerSet          = calls.LabelRunnerSet
	LabelTemplateHash       = calls.LabelTemplateHash
	PoolFinalizer           = calls.PoolFinalizer
	RerunAlready            = calls.RerunAlready
	RerunDone               = calls.RerunDone
	RerunLimitReached       = calls.RerunLimitReached
	RerunNoPermission       = calls.RerunNoPermission
	RerunRefused            = calls.RerunRefused
	RerunWaiting            = calls.RerunWaiting
	RunQuiet                = calls.RunQuiet
	TokenSecretKey          = calls.TokenSecretKey
)
