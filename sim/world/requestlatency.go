package world

import (
	"context"
	"fmt"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// RequestLatency is one Temporal client operation's latency histogram from a
// process's /metrics: cumulative counts by bucket upper bound.
type RequestLatency struct {
	Bounds []float64 // seconds
	Counts []uint64
}

// TemporalRequestLatency reads temporal_request_latency_seconds of one operation
// (for example SignalWithStartWorkflowExecution), summed over its label sets.
func TemporalRequestLatency(ctx context.Context, metricsURL, operation string) (RequestLatency, error) {
	return HistogramOf(ctx, metricsURL, "temporal_request_latency_seconds", func(labels map[string]string) bool {
		return labels["operation"] == operation
	})
}

// HistogramOf reads the histogram family name from a process's /metrics, summed
// over the label sets match accepts (nil: all). Zero when the process has none.
func HistogramOf(ctx context.Context, metricsURL, name string, match func(labels map[string]string) bool) (RequestLatency, error) {
	histograms, err := histogramsOf(ctx, metricsURL, name, match)
	if err != nil {
		return RequestLatency{}, err
	}
	var out RequestLatency
	for _, h := range histograms {
		buckets := h.GetBucket()
		if out.Bounds == nil {
			out.Bounds, out.Counts = make([]float64, len(buckets)), make([]uint64, len(buckets))
		}
		if len(buckets) != len(out.Bounds) {
			return RequestLatency{}, fmt.Errorf("%s: label sets with different buckets", name)
		}
		for i, b := range buckets {
			out.Bounds[i] = b.GetUpperBound()
			out.Counts[i] += b.GetCumulativeCount()
		}
	}
	return out, nil
}

// histogramsOf scrapes a process's /metrics and keeps the histograms of
// family name whose label sets match accepts (nil: all).
func histogramsOf(ctx context.Context, metricsURL, name string, match func(labels map[string]string) bool) ([]*dto.Histogram, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return nil, err
	}
	var out []*dto.Histogram
	for _, m := range families[name].GetMetric() {
		if match == nil || match(labelsOf(m)) {
			out = append(out, m.GetHistogram())
		}
	}
	return out, nil
}

// CounterSum sums the counter family name over its label sets in a process's
// /metrics; zero when the process has none.
func CounterSum(ctx context.Context, metricsURL, name string) (float64, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, m := range families[name].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum, nil
}

// Minus is the histogram of what happened since base.
func (r RequestLatency) Minus(base RequestLatency) RequestLatency {
	out := RequestLatency{Bounds: r.Bounds, Counts: make([]uint64, len(r.Counts))}
	for i := range r.Counts {
		out.Counts[i] = r.Counts[i]
		if i < len(base.Counts) {
			out.Counts[i] -= base.Counts[i]
		}
	}
	return out
}

// Plus is the two histograms summed, as of two processes with the same
// buckets; an empty one adds nothing.
func (r RequestLatency) Plus(o RequestLatency) (RequestLatency, error) {
	switch {
	case len(o.Counts) == 0:
		return r, nil
	case len(r.Counts) == 0:
		return o, nil
	case len(r.Counts) != len(o.Counts):
		return RequestLatency{}, fmt.Errorf("histograms with %d and %d buckets", len(r.Counts), len(o.Counts))
	}
	out := RequestLatency{Bounds: r.Bounds, Counts: make([]uint64, len(r.Counts))}
	for i := range r.Counts {
		out.Counts[i] = r.Counts[i] + o.Counts[i]
	}
	return out, nil
}

// Calls is how many requests the histogram counts within its largest bucket.
func (r RequestLatency) Calls() uint64 {
	if len(r.Counts) == 0 {
		return 0
	}
	return r.Counts[len(r.Counts)-1]
}

// AtMost is the upper bound of the bucket that holds the q-quantile: a bucketed
// histogram says no more precisely than that. Zero when nothing was counted.
func (r RequestLatency) AtMost(q float64) time.Duration {
	total := r.Calls()
	if total == 0 {
		return 0
	}
	for i, c := range r.Counts {
		if float64(c) >= q*float64(total) {
			return time.Duration(r.Bounds[i] * float64(time.Second))
		}
	}
	return time.Duration(r.Bounds[len(r.Bounds)-1] * float64(time.Second))
}

// HistogramTotals are a histogram's sample count and sum, summed over label sets.
type HistogramTotals struct{ Count, Sum float64 }

// Minus is what was observed since base.
func (h HistogramTotals) Minus(base HistogramTotals) HistogramTotals {
	return HistogramTotals{Count: h.Count - base.Count, Sum: h.Sum - base.Sum}
}

// Mean is the mean observation, zero when there was none.
func (h HistogramTotals) Mean() float64 {
	if h.Count <= 0 {
		return 0
	}
	return h.Sum / h.Count
}

// HistogramTotalsOf reads the count and sum of the histogram family name from
// a process's /metrics over the label sets match accepts (nil: all).
func HistogramTotalsOf(ctx context.Context, metricsURL, name string, match func(labels map[string]string) bool) (HistogramTotals, error) {
	histograms, err := histogramsOf(ctx, metricsURL, name, match)
	var out HistogramTotals
	for _, h := range histograms {
		out.Count += float64(h.GetSampleCount())
		out.Sum += h.GetSampleSum()
	}
	return out, err
}

// Bound says where the q-quantile lies as text: "≤ <bucket bound>", or
// "> <largest finite bound>" when it is in the +Inf bucket; "n/a" when nothing
// was counted.
func (r RequestLatency) Bound(q float64) string {
	d := r.AtMost(q)
	switch {
	case r.Calls() == 0:
		return "n/a"
	case d < 0 || math.IsInf(r.boundOf(q), 1):
		finite := 0.0
		for _, b := range r.Bounds {
			if !math.IsInf(b, 1) {
				finite = b
			}
		}
		return "> " + time.Duration(finite*float64(time.Second)).String()
	}
	return "≤ " + d.String()
}

// boundOf is the upper bound, in seconds, of the bucket holding the q-quantile.
func (r RequestLatency) boundOf(q float64) float64 {
	total := r.Calls()
	for i, c := range r.Counts {
		if float64(c) >= q*float64(total) {
			return r.Bounds[i]
		}
	}
	return r.Bounds[len(r.Bounds)-1]
}
