package world

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// Window is a span of time one step of a scale run measured.
type Window struct{ From, To time.Time }

// Seconds is the window's length.
func (w Window) Seconds() float64 { return w.To.Sub(w.From).Seconds() }

// WindowStats is what the workflow histories of a run recorded in one window.
type WindowStats struct {
	Actions Actions
	// BusiestSignals is the most signals one workflow (over all its runs)
	// received in the window; BusiestID names that workflow.
	BusiestSignals int
	BusiestID      string
	// LargestHistory is the most events any one run had by the window's end,
	// among the runs that recorded events in the window; LargestID names it.
	LargestHistory int
	LargestID      string
}

// WindowHistories reads every autoscaler, pool and runner workflow run of
// namespaces once, and splits what they recorded over windows (which must
// not overlap) by event time. Runs counts the runs read.
func WindowHistories(ctx context.Context, tc client.Client, namespaces []string, windows []Window) (stats []WindowStats, runs int, err error) {
	stats = make([]WindowStats, len(windows))
	signals := make([]map[string]int, len(windows))
	for i := range signals {
		signals[i] = map[string]int{}
	}
	err = walkRuns(ctx, tc, arcflowRunQueries(namespaces), 8, func(ref runRef, events []*historypb.HistoryEvent) {
		runs++
		for i, w := range windows {
			part, upTo := eventsIn(events, w)
			if len(part) == 0 {
				continue
			}
			stats[i].Actions = stats[i].Actions.Plus(CountActions(part))
			for _, e := range part {
				if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
					signals[i][ref.id]++
				}
			}
			if upTo > stats[i].LargestHistory {
				stats[i].LargestHistory, stats[i].LargestID = upTo, ref.id
			}
		}
	})
	for i, byID := range signals {
		for id, n := range byID {
			if n > stats[i].BusiestSignals || (n == stats[i].BusiestSignals && id < stats[i].BusiestID) {
				stats[i].BusiestSignals, stats[i].BusiestID = n, id
			}
		}
	}
	return stats, runs, err
}

// eventsIn is the part of a run's history recorded in w, and how many events
// the run had by w's end.
func eventsIn(events []*historypb.HistoryEvent, w Window) (part []*historypb.HistoryEvent, upTo int) {
	from, to := len(events), len(events)
	for i, e := range events {
		t := e.GetEventTime().AsTime()
		if from == len(events) && !t.Before(w.From) {
			from = i
		}
		if !t.Before(w.To) {
			to = i
			break
		}
	}
	if from > to {
		from = to
	}
	return events[from:to], to
}
