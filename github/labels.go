package github

import "strings"

// LabelsFit reports whether a runner with runnerLabels can take a job asking for
// jobLabels: every job label but self-hosted must be among the runner's. The metric
// compares case-sensitively, as ARC does; the webhook does not.
func LabelsFit(jobLabels, runnerLabels []string, caseSensitive bool) bool {
	if len(jobLabels) == 0 {
		return false
	}
	for _, want := range jobLabels {
		if strings.EqualFold(want, "self-hosted") {
			continue
		}
		found := false
		for _, have := range runnerLabels {
			if have == want || (!caseSensitive && strings.EqualFold(have, want)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
