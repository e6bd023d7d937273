package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// warmVariant is one idle buffer the warm-runner rows compare: the HRAs'
// arcflow.dev/idle-runners value ("" for none) and their scale-down delay.
type warmVariant struct {
	annotation string
	delay      time.Duration
}

// warmDelay is the rows' scale-down delay unless a variant says otherwise.
const warmDelay = 30 * time.Second

func (v warmVariant) String() string {
	name := "none"
	switch {
	case v.annotation == "auto" || strings.HasPrefix(v.annotation, "auto,"):
		name = v.annotation
	case v.annotation != "":
		name = "fixed " + v.annotation
	}
	if v.delay != warmDelay {
		name += fmt.Sprintf(", delay %v", v.delay)
	}
	return name
}

func (v warmVariant) auto() bool { return strings.HasPrefix(v.annotation, "auto") }

// parseWarmVariants reads --warm-buffers: annotation values, "none" for no
// buffer, each with an optional "@<scale-down delay>", e.g. "none,2,auto,auto@2m".
func parseWarmVariants(list string) ([]warmVariant, error) {
	var out []warmVariant
	for _, f := range strings.Split(list, ";") {
		f = strings.TrimSpace(f)
		value, delay, hasDelay := strings.Cut(f, "@")
		v := warmVariant{annotation: value, delay: warmDelay}
		if value == "none" {
			v.annotation = ""
		}
		if hasDelay {
			d, err := time.ParseDuration(delay)
			if err != nil || d < time.Second {
				return nil, fmt.Errorf("--warm-buffers: %q: want a scale-down delay like 2m after @", f)
			}
			v.delay = d
		}
		if _, err := strconv.Atoi(v.annotation); v.annotation != "" && err != nil && !v.auto() {
			return nil, fmt.Errorf("--warm-buffers: %q is neither none, a number nor auto", f)
		}
		out = append(out, v)
	}
	return out, nil
}
