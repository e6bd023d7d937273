package world

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A window takes the events recorded from its start up to (not at) its end,
// and counts every event up to its end as the run's history by then.
func TestEventsInCutsAHistoryAtTheWindowsEdges(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var events []*historypb.HistoryEvent
	for i := range 6 {
		events = append(events, &historypb.HistoryEvent{
			EventId: int64(i + 1), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
			EventTime: timestamppb.New(t0.Add(time.Duration(i) * 10 * time.Second)),
		})
	}
	for _, c := range []struct {
		w              Window
		first, n, upTo int
	}{
		{Window{t0.Add(15 * time.Second), t0.Add(40 * time.Second)}, 3, 2, 4}, // events at 20 s, 30 s
		{Window{t0.Add(40 * time.Second), t0.Add(time.Hour)}, 5, 2, 6},        // 40 s, 50 s
		{Window{t0.Add(-time.Minute), t0}, 0, 0, 0},                           // before the first
		{Window{t0.Add(time.Hour), t0.Add(2 * time.Hour)}, 0, 0, 6},           // after the last
	} {
		part, upTo := eventsIn(events, c.w)
		if len(part) != c.n || upTo != c.upTo || (c.n > 0 && part[0].GetEventId() != int64(c.first)) {
			t.Errorf("window %v–%v: %d events from %v, %d by its end; want %d from %d, %d",
				c.w.From.Sub(t0), c.w.To.Sub(t0), len(part), part, upTo, c.n, c.first, c.upTo)
		}
	}
}
