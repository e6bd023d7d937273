package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
)

// Kubernetes holds the Kubernetes activities. Register one value with the worker.
type Kubernetes struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Tokens is the worker's own GitHub client; Credentials, when set, gives
	// the client of a runner's githubAPICredentialsFrom Secret.
	Tokens      RunnerRegistry
	Credentials CredentialSets
	Defaults    PodDefaults
	// LostJobs counts jobs lost to infrastructure (nil: not counted).
	LostJobs *LostJobMetrics
	// ScaleSets gives the Actions service client of a scope, which registers
	// the runners of a runner scale set (nil: no pool joins one).
	ScaleSets func(ctx context.Context, scope github.Scope) (*scaleset.Client, error)

	accounts   kubernetesModeAccounts
	poolTokens poolTokens
}

// EnsureRunnerPod creates a runner: its pod, or for a RunnerSet its
// one-replica StatefulSet, after the Secret it reads its credential from (the
// pool's shared token Secret, or a JIT runner's own). A runner that exists keeps its pod
// (a retry only refreshes the token in its Secret). The
// registration token goes from the process-level cache straight into the Secret:
// it is in no activity input, output or error.
func (k *Kubernetes) EnsureRunnerPod(ctx context.Context, in RunnerPodInput) (RunnerPodOutput, error) {
	if in.Kind == v1alpha1.KindRunnerSet {
		return k.ensureRunnerStatefulSet(ctx, in)
	}
	// No Get first: a new runner's pod never exists, and a retry learns of an
	// earlier attempt's pod from AlreadyExists, after refreshing its Secret.
	pods := k.Client.CoreV1().Pods(in.Namespace)
	if err := k.ensureKubernetesModeAccount(ctx, in); err != nil {
		return RunnerPodOutput{}, err
	}
	poolToken := sharesPoolToken(in)
	runnerID, err := k.writeCredential(ctx, in)
	if err != nil {
		return RunnerPodOutput{}, err
	}
	created, err := pods.Create(ctx, BuildRunnerPod(in, k.Defaults), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		if created, err = pods.Get(ctx, in.Name, metav1.GetOptions{}); err != nil {
			return RunnerPodOutput{}, fmt.Errorf("get runner pod %s/%s: %w", in.Namespace, in.Name, err)
		}
		if poolToken && readsSecret(created, TokenSecretName(in.Name)) {
			// An earlier version's pod, reading a Secret of its own: refresh that.
			poolToken = false
			if err := k.writeToken(ctx, in); err != nil {
				return RunnerPodOutput{}, err
			}
		}
		return RunnerPodOutput{UID: string(created.UID), RunnerID: runnerID, PoolToken: poolToken}, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		return RunnerPodOutput{}, invalidSpec("pod", in, err)
	case err != nil:
		return RunnerPodOutput{}, fmt.Errorf("create runner pod %s/%s: %w", in.Namespace, in.Name, err)
	}
	if !poolToken {
		// The pod owns its Secret, so the Secret goes when the pod goes.
		if err := k.adoptTokenSecret(ctx, in, "v1", "Pod", created.Name, string(created.UID)); err != nil {
			return RunnerPodOutput{}, err
		}
	}
	return RunnerPodOutput{UID: string(created.UID), Created: true, RunnerID: runnerID, PoolToken: poolToken}, nil
}

// deletedWithPool is the owner reference of an object the pool's resource owns
// without controlling it, so that deleting the resource deletes the object too;
// none without an owner.
func deletedWithPool(owner *metav1.OwnerReference) []metav1.OwnerReference {
	if owner == nil {
		return nil
	}
	ref := *owner
	ref.Controller, ref.BlockOwnerDeletion = nil, nil
	return []metav1.OwnerReference{ref}
}

func invalidSpec(what string, in RunnerPodInput, err error) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("create runner %s %s/%s: %v", what, in.Namespace, in.Name, err), ErrTypeInvalidSpec, nil)
}

// DeleteRunnerPod deletes a runner's pod and its token Secret. Both being gone
// already is success. A write an admission webhook refuses is reported on the
// pool's resource and returned as ErrTypeAdmissionRefused.
func (k *Kubernetes) DeleteRunnerPod(ctx context.Context, ref PodRef) error {
	return k.asAdmissionRefused(ctx, ref, k.deleteRunnerPod(ctx, ref))
}

func (k *Kubernetes) deleteRunnerPod(ctx context.Context, ref PodRef) error {
	if ref.Kind == v1alpha1.KindRunnerSet {
		name := StatefulSetName(ref.Name)
		err := k.Client.AppsV1().StatefulSets(ref.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete runner statefulset %s/%s: %w", ref.Namespace, name, err)
		}
	}
	if ref.ARC {
		return k.releaseARCRunner(ctx, ref)
	}
	return k.deletePodAndSecret(ctx, ref)
}

// deletePodAndSecret deletes a runner's pod (of its UID), its token Secret and,
// in kubernetes container mode, its job pods.
func (k *Kubernetes) deletePodAndSecret(ctx context.Context, ref PodRef) error {
	opts := metav1.DeleteOptions{}
	if ref.UID != "" {
		uid := types.UID(ref.UID)
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := k.Client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, opts)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete runner pod %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if !ref.PoolToken {
		err = k.Client.CoreV1().Secrets(ref.Namespace).Delete(ctx, TokenSecretName(ref.Name), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete token secret of %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	}
	if ref.JobPods {
		return k.deleteJobPods(ctx, ref)
	}
	return nil
}

// PodStateOf summarizes a pod; nil means it does not exist.
func PodStateOf(pod *corev1.Pod) PodState {
	if pod == nil {
		return PodState{}
	}
	s := PodState{
		UID: string(pod.UID), ResourceVersion: pod.ResourceVersion, Exists: true,
		Deleting: pod.DeletionTimestamp != nil, Phase: pod.Status.Phase,
	}
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			s.Ready, s.ReadySince = true, c.LastTransitionTime.Time
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
			s.Unschedulable = true
		}
	}
	s.Cause = calls.LossCause(pod)
	// A StatefulSet restarts an exited runner container (restartPolicy Always); its
	// first exit is the runner's end, as Succeeded or Failed would be for a pod.
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != calls.RunnerContainerName {
			continue
		}
		exit := c.State.Terminated
		if exit == nil {
			exit = c.LastTerminationState.Terminated
		}
		if exit != nil && s.Phase == corev1.PodRunning {
			s.Phase, s.Ready = corev1.PodSucceeded, false
			if exit.ExitCode != 0 {
				s.Phase = corev1.PodFailed
			}
		}
	}
	return s
}

// GetRunnerPod reads a runner pod's state.
func (k *Kubernetes) GetRunnerPod(ctx context.Context, ref PodRef) (PodState, error) {
	pod, err := k.Client.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return PodState{}, nil
	}
	if err != nil {
		return PodState{}, fmt.Errorf("get runner pod %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if ref.UID != "" && string(pod.UID) != ref.UID {
		return PodState{}, nil // a newer pod with the same name is not ours
	}
	return PodStateOf(pod), nil
}
