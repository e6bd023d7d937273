package docscheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each way the code sets a reason is found; comparisons, run-time strings and
// end reasons (kebab-case) are not reasons it sets.
func TestCodeReasons(t *testing.T) {
	sources := map[string]string{
		"worker/w.go": `package worker

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"example/internal/temporalerr"
)

const runnersFailing = "RunnersFailing"

func (w *W) setConditions(ctx any, kind string, status metav1.ConditionStatus, reason, message string) {
	conds := []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason}}
	_ = conds
}

func (w *W) event(kind string, reason string) {}

func (s S) Reason() string {
	if s.x {
		return "ARCControllerUnknown"
	}
	return "ARCControllerActive"
}

func conditionReason(end string) string {
	f := func() string { return "NotThisOne" }
	if end == "" {
		return "RunnerCannotStart"
	}
	return strings.ToUpper(end) + f()
}

func (w *W) sync() {
	w.setConditions(nil, "k", metav1.ConditionFalse, "InvalidSpec", "bad")
	w.setConditions(nil, "k", metav1.ConditionFalse, s.Reason(), "arc")
	w.setConditions(nil, "k", metav1.ConditionFalse, problem.Reason, "m")
	w.event("k", runnersFailing)
	var c metav1.Condition
	c.Status, c.Reason = metav1.ConditionTrue, "Throttled"
	c.Reason = conditionReason(last)
	if c.Reason == "NotSetHere" {
	}
	_ = metav1.Condition{Type: "UnsupportedFields", Reason: "Ignored"}
	_ = RunnerDone{Reason: "pod-failed"}
	_ = temporalerr.ReasonUnavailable
}
`,
		"internal/temporalerr/c.go": `package temporalerr

const (
	ReasonUnavailable = "TemporalUnavailable"
	ReasonNotSetUp    = "TemporalNotSetUp"
	ReasonUnused      = "NeverSet"
)

func Classify() Problem {
	if x {
		return Problem{Reason: ReasonNotSetUp}
	}
	return Problem{Reason: ReasonUnavailable}
}
`,
		"activities/calls/e.go": "package calls\n\nconst ErrTypeAdmissionRefused = \"AdmissionRefused\"\n",
		"activities/e.go": `package activities

const ErrTypeAdmissionRefused = calls.ErrTypeAdmissionRefused

func RecordEvent(ctx any, on any, eventType, reason, message string) error { return nil }

func refuse() {
	_ = RecordEvent(nil, nil, "Warning", ErrTypeAdmissionRefused, "m")
	eventType, reason := "Warning", "JobLost"
	if x {
		eventType, reason = "Normal", "JobRerun"
	}
	_ = RecordEvent(nil, nil, eventType, reason, "m")
}
`,
	}
	found, err := CodeReasons(sources)
	require.NoError(t, err)
	require.Equal(t, []string{
		"ARCControllerActive", "ARCControllerUnknown", "AdmissionRefused", "Ignored", "InvalidSpec",
		"JobLost", "JobRerun", "RunnerCannotStart", "RunnersFailing", "TemporalNotSetUp", "TemporalUnavailable", "Throttled",
	}, sortedKeys(found))
	require.Equal(t, "worker/w.go:33", found["InvalidSpec"])
	require.Equal(t, "internal/temporalerr/c.go:11", found["TemporalNotSetUp"])
}

// A reason needs a row, in code, in the first column of a Reason table.
func TestCheckReasonRows(t *testing.T) {
	doc := Parse("docs/troubleshooting.md", "# T\n\n"+
		"| Reason | Means |\n|---|---|\n| `InvalidSpec`, `InvalidCredentials` | bad |\n\n"+
		"Prose names `Throttled` but has no row.\n\n"+
		"| Query | Finds |\n|---|---|\n| `Ignored` | not a Reason table |\n")
	require.Equal(t, map[string]bool{"InvalidSpec": true, "InvalidCredentials": true}, ReasonRows(doc))
	require.Equal(t, []string{
		"docs/troubleshooting.md: reason Ignored (set at w.go:3) has no row in a table whose first column is Reason",
		"docs/troubleshooting.md: reason Throttled (set at w.go:9) has no row in a table whose first column is Reason",
	}, msgs(CheckReasonRows(doc, map[string]string{"InvalidSpec": "w.go:1", "Ignored": "w.go:3", "Throttled": "w.go:9"})))
}
