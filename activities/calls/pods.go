package calls

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// RunnerPodOutput identifies the created pod.
type RunnerPodOutput struct {
	UID     string
	Created bool
	// RunnerID is GitHub's ID of a JIT runner, registered by the call itself.
	RunnerID int64 `json:",omitempty"`
	// PoolToken: the pod reads the pool's shared token Secret and has no
	// Secret of its own to delete.
	PoolToken bool `json:",omitempty"`
}

// PodRef names one pod; a non-empty UID guards against deleting a newer pod that
// took the same name.
type PodRef struct {
	Namespace string
	Name      string
	UID       string
	// Kind RunnerSet deletes the runner's StatefulSet (and so its pod and claims).
	Kind string `json:",omitempty"`
	// JobPods: a kubernetes-mode runner, whose job pods and Secrets go too.
	JobPods bool `json:",omitempty"`
	// ARC: a runner adopted from ARC, whose finalizers, Runner object and
	// emptied RunnerReplicaSet go too.
	ARC bool `json:",omitempty"`
	// PoolToken: the pod read the pool's token Secret, which stays.
	PoolToken bool `json:",omitempty"`
	// Pool names the runner's RunnerDeployment or RunnerSet, which gets an
	// event when a write of the deletion is refused.
	Pool string `json:",omitempty"`
}

// PodState is a runner pod as a runner workflow sees it. The watcher sends the
// same struct as a `pod` signal.
type PodState struct {
	UID             string
	ResourceVersion string
	Exists          bool
	Deleting        bool
	Phase           corev1.PodPhase
	Ready           bool
	// ReadySince is when the pod last became Ready.
	ReadySince time.Time
	// Unschedulable: the scheduler found no node for the pod (PodScheduled=False,
	// reason Unschedulable).
	Unschedulable bool `json:",omitempty"`
	// Cause says what took the pod away, when Kubernetes told (LossCause).
	Cause string `json:",omitempty"`
}

// Exited reports a pod whose runner can no longer run: finished, failed, deleted
// or being deleted.
func (p PodState) Exited() bool {
	return !p.Exists || p.Deleting || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed
}

// Labels and names on runner pods. The first two are ARC's, so dashboards and
// policies written for ARC keep matching.
const (
	LabelRunner           = "actions-runner"
	LabelTemplateHash     = "runner-template-hash"
	LabelRunnerDeployment = "runner-deployment-name"
	LabelRunnerSet        = "runnerset-name"
	LabelPool             = "arcflow.dev/pool"
	TokenSecretKey        = "RUNNER_TOKEN"
	// AnnotationReadyUntold marks a pod whose runner is not signalled when the
	// pod starts running or turns Ready, only when it ends, is deleted or
	// cannot be scheduled (RunnerPodInput.ReadyUntold).
	AnnotationReadyUntold = "arcflow.dev/pod-ready-untold"
	RunnerContainerName   = "runner"
	DockerContainerName   = "docker"
)

// RunnerPodInput is everything needed to build one runner's pod. It holds no
// secret: the registration token is read from the token cache by the activity.
type RunnerPodInput struct {
	Namespace string
	// Name is the pod name, which is also the GitHub runner name.
	Name string
	// Pool is the name of the RunnerDeployment or RunnerSet.
	Pool string
	Kind string
	// Owner becomes the pod's owner reference, so deleting the pool's resource
	// garbage-collects its pods.
	Owner        *metav1.OwnerReference `json:",omitempty"`
	TemplateHash string
	Labels       map[string]string `json:",omitempty"`
	Annotations  map[string]string `json:",omitempty"`
	Spec         v1alpha1.RunnerSpec
	// GitHubURL is what runners register against (GITHUB_URL).
	GitHubURL string
	// JIT registers the runner with generate-jitconfig when it is created, and
	// starts its pod from ACTIONS_RUNNER_INPUT_JITCONFIG instead of a token
	// (v1alpha1.JITConfigAnnotation).
	JIT bool `json:",omitempty"`
	// ScaleSetID, with JIT, registers the runner with that runner scale set's
	// generatejitconfig: only its runners take the set's jobs.
	ScaleSetID int64 `json:",omitempty"`
	// ReadyUntold: the runner learns its registration from its job's start,
	// so its pod's start and readiness are not signalled to it (one Temporal
	// action a runner); it reads its pod when it needs them.
	ReadyUntold bool `json:",omitempty"`
	// VolumeSlot is the RunnerSet volume slot the runner mounts; nil without one
	// (a RunnerDeployment, or a RunnerSet whose pool predates volume slots,
	// whose StatefulSet then makes claims that go with it).
	VolumeSlot *VolumeSlotRef `json:",omitempty"`
	// StatefulSet is the RunnerSet's StatefulSet spec (service name, labels and
	// volumeClaimTemplates); nil for a RunnerDeployment.
	StatefulSet *appsv1.StatefulSetSpec `json:",omitempty"`
}

// RunnerPodPhasesInput names a pool's runners whose pods a scale-down must
// tell apart: the pod name is the runner name.
type RunnerPodPhasesInput struct {
	Namespace string
	Pool      string
	Names     []string
}
