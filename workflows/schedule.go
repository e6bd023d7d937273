package workflows

import (
	"fmt"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// ScheduleMatch is what scheduled overrides say at one instant.
type ScheduleMatch struct {
	// Active is the first override in list order whose window contains now.
	Active *v1alpha1.ScheduledOverride
	// ActiveStart and ActiveUntil bound the active occurrence's window.
	ActiveStart, ActiveUntil time.Time
	// NextStart is the earliest upcoming window start (zero: none), used to wake
	// the autoscaler and for the summary.
	NextStart time.Time
	NextMin   *int
}

var frequencies = map[string]rrule.Frequency{
	"Daily": rrule.DAILY, "Weekly": rrule.WEEKLY, "Monthly": rrule.MONTHLY, "Yearly": rrule.YEARLY,
}

// MatchSchedule evaluates scheduled overrides at now, as ARC does (reference §3.5):
// a one-off window is [start, end); a recurring one repeats its window from
// startTime by the rrule until untilTime.
func MatchSchedule(overrides []v1alpha1.ScheduledOverride, now time.Time) (ScheduleMatch, error) {
	var m ScheduleMatch
	for i := range overrides {
		o := &overrides[i]
		start, end := o.StartTime.Time, o.EndTime.Time
		length := end.Sub(start)
		if length <= 0 {
			return ScheduleMatch{}, fmt.Errorf("scheduledOverrides[%d]: endTime must be after startTime", i)
		}
		var last, next time.Time
		if o.RecurrenceRule.Frequency == "" {
			last, next = start, start
			if !start.After(now) {
				next = time.Time{}
			} else {
				last = time.Time{}
			}
		} else {
			freq, ok := frequencies[o.RecurrenceRule.Frequency]
			if !ok {
				return ScheduleMatch{}, fmt.Errorf("scheduledOverrides[%d]: unknown frequency %q", i, o.RecurrenceRule.Frequency)
			}
			if length > v1alpha1.FrequencyPeriod(o.RecurrenceRule.Frequency) {
				return ScheduleMatch{}, fmt.Errorf("scheduledOverrides[%d]: window longer than one %s period", i, o.RecurrenceRule.Frequency)
			}
			rule, err := rrule.NewRRule(rrule.ROption{Freq: freq, Dtstart: start, Until: o.RecurrenceRule.UntilTime.Time})
			if err != nil {
				return ScheduleMatch{}, fmt.Errorf("scheduledOverrides[%d]: %w", i, err)
			}
			last, next = rule.Before(now, true), rule.After(now, false)
		}
		if !last.IsZero() && now.Before(last.Add(length)) && m.Active == nil {
			m.Active, m.ActiveStart, m.ActiveUntil = o, last, last.Add(length)
		}
		if !next.IsZero() && (m.NextStart.IsZero() || next.Before(m.NextStart)) {
			m.NextStart, m.NextMin = next, o.MinReplicas
		}
	}
	return m, nil
}

// Summary is the HRA status's scheduledOverridesSummary, as ARC writes it.
func (m ScheduleMatch) Summary() *string {
	var s string
	switch {
	case m.Active != nil && m.Active.MinReplicas != nil:
		s = fmt.Sprintf("min=%d time=%s", *m.Active.MinReplicas, m.ActiveStart.UTC().Format(time.RFC3339))
	case !m.NextStart.IsZero() && m.NextMin != nil:
		s = fmt.Sprintf("min=%d time=%s", *m.NextMin, m.NextStart.UTC().Format(time.RFC3339))
	default:
		return nil
	}
	return &s
}
