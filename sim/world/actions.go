package world

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// Temporal Cloud bills by Actions. The rule CountActions applies is Temporal
// Cloud's own, https://docs.temporal.io/cloud/actions (the Event History column of
// each Action type), read in November 2026:
//
//   - Workflow started: 1 per WorkflowExecutionStarted, whether by a client start,
//     a Signal-With-Start that started it, Continue-As-New (billed on the new run's
//     Started event, not on ContinuedAsNew) or a Child Workflow start.
//   - Start Child Workflow initiated: 2 Actions, "one for durably storing the intent
//     ... and one for the attempt to start it". The attempt is the child's own
//     Started event, counted in the child's history; the intent is counted here.
//   - Signal: 1 per WorkflowExecutionSignaled, from a client or from another
//     workflow (SignalExternalWorkflowExecutionInitiated is billed on the signaled
//     side only). Signal-With-Start is 1 Action in all: when it started the
//     workflow, the history shows Started then Signaled, and only Started counts.
//   - Activity: 1 per ActivityTaskScheduled, plus its retries: attempt-1 on its
//     ActivityTaskStarted (the server writes only the last attempt's Started).
//   - Local activities and markers: all markers one workflow task records
//     (side effects, versions, local activities) are 1 Action, plus
//     metering_metadata.nonfirst_local_activity_execution_attempts on each
//     WorkflowTaskCompleted.
//   - Timer started, Search Attribute upsert (unless it sets only
//     TemporalChangeVersion), Update accepted, Workflow Execution Options updated,
//     a reset (WorkflowTaskFailed with cause RESET_WORKFLOW), Nexus operation
//     scheduled or cancel requested: 1 each.
//
// Not in any history: activity heartbeats that reach the server and queries (1
// each). ClientActions counts those from the Temporal SDK's request counters of
// arcflow's processes. Rejected updates and schedule operations are not counted:
// arcflow uses neither.
const ActionsRuleURL = "https://docs.temporal.io/cloud/actions"

// CloudPricePerMillionActions is Temporal Cloud's Pay-As-You-Go list price, USD per
// million Actions: the first tier ("First 5M", $50; the Developer plan pays $50 at
// every volume), https://docs.temporal.io/cloud/pricing#payg-action-pricing,
// read in November 2026. Later tiers fall to $25 above 100M a month.
const CloudPricePerMillionActions = 50.0

// CloudPriceUSD is what n Actions cost at CloudPricePerMillionActions.
func CloudPriceUSD(actions float64) float64 {
	return actions * CloudPricePerMillionActions / 1e6
}

// Actions are billable Temporal Cloud Actions, by the kind of operation.
type Actions struct {
	WorkflowStarts       int // client start, Signal-With-Start, continue-as-new, child start
	ChildStartIntents    int // StartChildWorkflowExecutionInitiated
	Signals              int
	Activities           int // scheduled, first attempt
	ActivityRetries      int
	LocalActivityRetries int
	MarkerTasks          int // workflow tasks that recorded one marker or more
	Timers               int
	SearchAttrUpserts    int
	Updates              int
	OptionsUpdates       int
	Resets               int
	NexusOperations      int
	// Not in histories: from the clients' request counters (ClientActions).
	Heartbeats int
	Queries    int
}

// Total is the number of Actions billed.
func (a Actions) Total() int {
	total := 0
	for _, k := range a.kinds() {
		total += k.n
	}
	return total
}

// Plus adds two counts.
func (a Actions) Plus(b Actions) Actions {
	return Actions{
		WorkflowStarts: a.WorkflowStarts + b.WorkflowStarts, ChildStartIntents: a.ChildStartIntents + b.ChildStartIntents,
		Signals: a.Signals + b.Signals, Activities: a.Activities + b.Activities, ActivityRetries: a.ActivityRetries + b.ActivityRetries,
		LocalActivityRetries: a.LocalActivityRetries + b.LocalActivityRetries, MarkerTasks: a.MarkerTasks + b.MarkerTasks,
		Timers: a.Timers + b.Timers, SearchAttrUpserts: a.SearchAttrUpserts + b.SearchAttrUpserts, Updates: a.Updates + b.Updates,
		OptionsUpdates: a.OptionsUpdates + b.OptionsUpdates, Resets: a.Resets + b.Resets, NexusOperations: a.NexusOperations + b.NexusOperations,
		Heartbeats: a.Heartbeats + b.Heartbeats, Queries: a.Queries + b.Queries,
	}
}

type actionKind struct {
	name string
	n    int
}

func (a Actions) kinds() []actionKind {
	return []actionKind{
		{"workflow starts", a.WorkflowStarts}, {"child start intents", a.ChildStartIntents}, {"signals", a.Signals},
		{"activities", a.Activities}, {"activity retries", a.ActivityRetries}, {"local activity retries", a.LocalActivityRetries},
		{"marker tasks", a.MarkerTasks}, {"timers", a.Timers}, {"search attribute upserts", a.SearchAttrUpserts},
		{"updates", a.Updates}, {"options updates", a.OptionsUpdates}, {"resets", a.Resets}, {"nexus operations", a.NexusOperations},
		{"activity heartbeats", a.Heartbeats}, {"queries", a.Queries},
	}
}

// PerUnit lists the kinds that occurred, each divided by units (jobs).
func (a Actions) PerUnit(units int) string {
	var parts []string
	for _, k := range a.kinds() {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%.2f %s", float64(k.n)/float64(units), k.name))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// changeVersionAttribute is the search attribute the SDK's versioning (GetVersion)
// upserts; Temporal Cloud does not bill those upserts.
const changeVersionAttribute = "TemporalChangeVersion"

// CountActions counts the billable Actions in the events of one workflow run's
// history (or a contiguous part of it), by the rule documented on ActionsRuleURL.
func CountActions(events []*historypb.HistoryEvent) Actions {
	var a Actions
	markerTasks := map[int64]bool{}
	// A Signal-With-Start that starts a workflow writes Started and Signaled
	// together, before the first workflow task is scheduled: one Action.
	lastWasClientStart := false
	for _, e := range events {
		signalWithStart := lastWasClientStart
		lastWasClientStart = false
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a.WorkflowStarts++
			attrs := e.GetWorkflowExecutionStartedEventAttributes()
			lastWasClientStart = attrs.GetParentWorkflowExecution() == nil && attrs.GetContinuedExecutionRunId() == ""
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if !signalWithStart {
				a.Signals++
			}
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			a.ChildStartIntents++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a.Activities++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if attempt := e.GetActivityTaskStartedEventAttributes().GetAttempt(); attempt > 1 {
				a.ActivityRetries += int(attempt) - 1
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			meter := e.GetWorkflowTaskCompletedEventAttributes().GetMeteringMetadata()
			a.LocalActivityRetries += int(meter.GetNonfirstLocalActivityExecutionAttempts())
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			task := e.GetMarkerRecordedEventAttributes().GetWorkflowTaskCompletedEventId()
			if !markerTasks[task] {
				markerTasks[task] = true
				a.MarkerTasks++
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			a.Timers++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if billableUpsert(e) {
				a.SearchAttrUpserts++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			a.Updates++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
			a.OptionsUpdates++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
				a.Resets++
			}
		case enumspb.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED, enumspb.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED:
			a.NexusOperations++
		}
	}
	return a
}

// billableUpsert is false for an upsert of TemporalChangeVersion alone.
func billableUpsert(e *historypb.HistoryEvent) bool {
	fields := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
	for name := range fields {
		if name != changeVersionAttribute {
			return true
		}
	}
	return len(fields) == 0
}
