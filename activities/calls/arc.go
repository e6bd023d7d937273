package calls

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdoptARCClaimsInput gives claims ARC made to a pool's volume slots.
type AdoptARCClaimsInput struct {
	Namespace, Pool string
	// Owner is the RunnerSet, which then owns the claims as it owns its slots'.
	Owner *metav1.OwnerReference `json:",omitempty"`
	Slots []VolumeSlotRef
}

// ARCRunnersInput names a pool whose runners ARC may have left.
type ARCRunnersInput struct {
	Namespace string
	Kind      string
	Name      string
}

// ARCRunner is one runner a pool takes over: one ARC created and left
// running, or, with Own, one arcflow made whose workflow is gone (OwnRunners).
type ARCRunner struct {
	// Name is the Runner's, its pod's and GitHub's runner name.
	Name      string
	Ephemeral bool
	// RunnerID is what ARC annotated the pod with once GitHub listed it, or
	// what a JIT runner's Secret or GitHub's list says for an own one.
	RunnerID int64 `json:",omitempty"`
	Pod      PodState
	// Claims are the volumes ARC's StatefulSet made for a RunnerSet runner.
	Claims *ARCClaimSet `json:",omitempty"`
	// Own: arcflow made this runner; nothing of ARC's is left to remove.
	Own bool `json:",omitempty"`
	// TemplateHash is an own runner's runner-template-hash label.
	TemplateHash string `json:",omitempty"`
	// JIT: an own runner started from a JIT configuration (its Secret holds one).
	JIT bool `json:",omitempty"`
}

// ARCRunnerSetInput names a RunnerSet whose runners ARC may have left, with
// its volumeClaimTemplates now, which ARC's claims must match to be reused.
type ARCRunnerSetInput struct {
	Namespace string
	Name      string
	Templates []corev1.PersistentVolumeClaim `json:",omitempty"`
}

// ARCClaimSet is the claims ARC made for one of its runners' StatefulSets.
type ARCClaimSet struct {
	StatefulSet string
	// Claims are the claim names by volumeClaimTemplate name.
	Claims map[string]string
	// Match: one claim per template of the RunnerSet now, each of the same
	// storage class, access modes, volume mode and size, so a runner of the
	// RunnerSet can mount them as its own.
	Match bool `json:",omitempty"`
}

// ARCRunnerSetRunners is what ARC left of a RunnerSet: its runners, with the
// claims of each, and the claims of StatefulSets ARC already deleted.
type ARCRunnerSetRunners struct {
	Runners []ARCRunner   `json:",omitempty"`
	Claims  []ARCClaimSet `json:",omitempty"`
}
