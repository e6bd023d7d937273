package workflows

import (
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"
)

// stopAwaitsRegistrationVersion marks runners that, asked to stop while their
// runner process may still register, wait for the registration (or its timeout)
// instead of deleting the pod at once. Deleting it then lost a race: the
// runner registered, took a job, and the job died with the pod.
const stopAwaitsRegistrationVersion = "stop-awaits-registration"

// stopAwaitsRegistration reports whether a stop that arrived before the runner
// registered must wait: its pod is Running, so config.sh may register it at any
// moment and GitHub may hand it a job right after. Such a runner keeps checking
// for its registration as it would without the stop (no extra GitHub calls),
// and once listed it is removed with RemoveRunner, whose 422 protects a job it
// took meanwhile; a registration timeout ends the wait as it would anyway.
//
// Nothing waits when no process can register: a pod still Pending (no
// container ran; ARC treats it the same, #1975), a pod that ended, or a JIT
// runner, which is removed by its ID first so a late start fails.
func (r *runnerRun) stopAwaitsRegistration(ctx workflow.Context) bool {
	if r.in.Pod.JIT || r.state.RunnerID != 0 || r.state.Pod.Exited() || r.state.Pod.Phase != corev1.PodRunning {
		return false
	}
	return workflow.GetVersion(ctx, stopAwaitsRegistrationVersion, workflow.DefaultVersion, 1) >= 1
}

// stopNotPatientVersion: a runner asked to stop before it was seen registered
// makes its next registration checks usual ones (backing off from the short
// interval, on the shared list), not patient ones, since the stop waits on
// them (issue 27) and a patient check reads a list up to a minute old every
// 30 s.
const stopNotPatientVersion = "stop-not-patient"

// patient says whether this runner's registration checks may be patient
// (RunnerInput.PatientRegistration). The version is asked only where the
// answer changes, so other runners record no marker.
func (r *runnerRun) patient(ctx workflow.Context) bool {
	if !r.in.PatientRegistration {
		return false
	}
	if !r.state.StopRequested {
		return true
	}
	return workflow.GetVersion(ctx, stopNotPatientVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion
}
