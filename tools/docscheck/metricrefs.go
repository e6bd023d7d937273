package docscheck

import (
	"regexp"
	"strings"
)

// scrapeLabels are the labels a scrape adds to every series (Prometheus's job
// and instance, and what the Prometheus Operator's ServiceMonitors add), so a
// query or a sample line may name them beside the metric's own.
var scrapeLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "pod": true, "service": true, "container": true, "__name__": true}

// histogramSuffixes are the series a histogram family exposes.
var histogramSuffixes = []string{"_bucket", "_sum", "_count"}

var (
	// metricWordRe finds a lower-case word and the {...} after it, so the
	// label values inside the braces are skipped with it.
	metricWordRe = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)(\{[^{}]*\})?`)
	labelNameRe  = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)`)
)

// checkedPrefixes are the metric names a document may only name if the code
// exports them: arcflow's own, and the Temporal SDK's.
var checkedPrefixes = []string{"arcflow_", "temporal_"}

// CheckMetrics reports metric names in d (prose, code spans and blocks) that
// start with arcflow_ or temporal_ but are not a series of a known family, and
// labels in braces after a known name, {credential,endpoint} or
// {job="x",le="1"}, that the family does not have. notMetrics are words with
// those prefixes that are not metrics (label values such as the webhook's
// temporal_unavailable result).
func CheckMetrics(d *Doc, known map[string]Metric, notMetrics map[string]bool) []Problem {
	var out []Problem
	for i, line := range d.Lines {
		for _, m := range metricWordRe.FindAllStringSubmatch(line, -1) {
			name, braces := m[1], m[2]
			family, metric, ok := seriesOf(name, known)
			if !ok {
				if checked(name) && !notMetrics[name] {
					msg := name + ": no such metric"
					if _, ok := known[name+"_seconds"]; ok {
						msg += " (the code exports " + name + "_seconds)"
					}
					out = append(out, Problem{File: d.Path, Line: i + 1, Msg: msg})
				}
				continue
			}
			for _, l := range labelNames(braces) {
				if !hasLabel(metric, l, name != family && strings.HasSuffix(name, "_bucket")) {
					out = append(out, Problem{File: d.Path, Line: i + 1, Msg: name + "{" + l + "}: " + family + " has no label " + l + " (its labels: " + strings.Join(metric.Labels, ", ") + ")"})
				}
			}
		}
	}
	return out
}

// checked reports whether a word is a metric name to check: one of the
// prefixes and more, not a prefix alone (arcflow_, temporal_*).
func checked(name string) bool {
	for _, p := range checkedPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) && !strings.HasSuffix(name, "_") {
			return true
		}
	}
	return false
}

// seriesOf finds the family a series name belongs to: the name itself, or a
// histogram's name with one of its suffixes.
func seriesOf(name string, known map[string]Metric) (string, Metric, bool) {
	if m, ok := known[name]; ok {
		return name, m, true
	}
	for _, s := range histogramSuffixes {
		if base, ok := strings.CutSuffix(name, s); ok {
			if m, ok := known[base]; ok && m.Histogram {
				return base, m, true
			}
		}
	}
	return "", Metric{}, false
}

func hasLabel(m Metric, label string, bucket bool) bool {
	own := func(l string) bool {
		for _, x := range m.Labels {
			if x == l {
				return true
			}
		}
		return false
	}
	switch {
	case own(label), scrapeLabels[label], bucket && label == "le":
		return true
	case strings.HasPrefix(label, "exported_"):
		// A label the target has too is renamed exported_<label> on scrape.
		return own(strings.TrimPrefix(label, "exported_"))
	}
	return false
}

// labelNames reads the label names of a {...}: matchers (name="v", name=~"v",
// name!="v") or bare names, separated by commas outside quotes.
func labelNames(braces string) []string {
	if braces == "" {
		return nil
	}
	inner := braces[1 : len(braces)-1]
	var names []string
	var quote byte
	start := 0
	for i := 0; i <= len(inner); i++ {
		if i < len(inner) {
			c := inner[i]
			switch {
			case quote != 0:
				if c == '\\' {
					i++
				} else if c == quote {
					quote = 0
				}
				continue
			case c == '"' || c == '\'' || c == '`':
				quote = c
				continue
			case c != ',':
				continue
			}
		}
		if m := labelNameRe.FindStringSubmatch(inner[start:i]); m != nil {
			names = append(names, m[1])
		}
		start = i + 1
	}
	return names
}

// CheckMetricTable checks the metrics table of d (the rows of a table whose
// first header cell is Metric): every arcflow_ family of the code has a row,
// and a row that lists a family's labels, `name{a,b}`, lists all of them.
func CheckMetricTable(d *Doc, known map[string]Metric) []Problem {
	var out []Problem
	rows := map[string]bool{}
	inTable := false
	for i, line := range d.Lines {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "|") || d.Prose[i] == "" {
			inTable = false
			continue
		}
		cells := splitRow(line)
		if !inTable {
			inTable = strings.EqualFold(strings.TrimSpace(cells[0]), "metric")
			continue
		}
		for _, span := range codeCellRe.FindAllStringSubmatch(cells[0], -1) {
			m := metricWordRe.FindStringSubmatch(span[1])
			if m == nil {
				continue
			}
			rows[m[1]] = true
			metric, ok := known[m[1]]
			if !ok || m[2] == "" || strings.ContainsAny(m[2], "=~!") {
				continue
			}
			listed := map[string]bool{}
			for _, l := range labelNames(m[2]) {
				listed[l] = true
			}
			for _, l := range metric.Labels {
				if !listed[l] {
					out = append(out, Problem{File: d.Path, Line: i + 1, Msg: m[1] + m[2] + ": the row lists labels but not " + l})
				}
			}
		}
	}
	for _, name := range sortedKeys(known) {
		if strings.HasPrefix(name, "arcflow_") && !rows[name] {
			out = append(out, Problem{File: d.Path, Msg: "metric " + name + " has no row in the metrics table"})
		}
	}
	return out
}
