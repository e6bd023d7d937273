package docscheck

import (
	"regexp"
	"strings"
)

// kubeNameRe matches an arcflow.dev/ label or annotation key.
var kubeNameRe = regexp.MustCompile(`arcflow\.dev/[a-z0-9][a-z0-9.-]*[a-z0-9]`)

// CheckKubeNames reports arcflow.dev/ labels and annotations that d names
// anywhere (prose, code spans, blocks) and the code does not have (known).
func CheckKubeNames(d *Doc, known map[string]int) []Problem {
	var out []Problem
	for i, line := range d.Lines {
		for _, name := range kubeNameRe.FindAllString(line, -1) {
			if _, ok := known[name]; !ok {
				out = append(out, Problem{File: d.Path, Line: i + 1, Msg: name + ": the code has no such label or annotation"})
			}
		}
	}
	return out
}

// CheckKubeNamesDocumented reports arcflow.dev/ labels and annotations of the
// code (known) that d, the configuration reference, does not name.
func CheckKubeNamesDocumented(d *Doc, known map[string]int) []Problem {
	named := map[string]bool{}
	for _, line := range d.Lines {
		for _, name := range kubeNameRe.FindAllString(line, -1) {
			named[name] = true
		}
	}
	var out []Problem
	for _, name := range sortedKeys(known) {
		if !named[name] {
			out = append(out, Problem{File: d.Path, Msg: "label or annotation " + name + " is not documented"})
		}
	}
	return out
}

// printColumnRe reads a kubebuilder printer column marker's name.
var printColumnRe = regexp.MustCompile(`\+kubebuilder:printcolumn:.*\bname=([A-Za-z0-9-]+)`)

// PrinterColumns reads the printer columns (as kubectl prints them: upper
// case) of the kubebuilder markers in Go sources, leaving out AGE, which
// kubectl shows for every resource.
func PrinterColumns(sources map[string]string) []string {
	seen := map[string]bool{}
	for _, src := range sources {
		for _, m := range printColumnRe.FindAllStringSubmatch(src, -1) {
			if c := strings.ToUpper(m[1]); c != "AGE" {
				seen[c] = true
			}
		}
	}
	return sortedKeys(seen)
}

// CheckPrinterColumns reports printer columns that d does not name as a code
// span (`WARM`).
func CheckPrinterColumns(d *Doc, columns []string) []Problem {
	text := strings.Join(d.Lines, "\n")
	var out []Problem
	for _, c := range columns {
		if !strings.Contains(text, "`"+c+"`") {
			out = append(out, Problem{File: d.Path, Msg: "printer column " + c + " is not documented (as `" + c + "`)"})
		}
	}
	return out
}
