package docscheck

import (
	"regexp"
	"strings"
)

// otherToolFlags are flags of other tools that the pages name in prose:
// kubectl apply --server-side and --force-conflicts, go build -tags, go test
// -short, --help, kube-controller-manager's --use-service-account-credentials.
var otherToolFlags = map[string]bool{"server-side": true, "force-conflicts": true, "tags": true, "short": true, "help": true,
	"use-service-account-credentials": true}

var (
	// flagSpanRe finds a code span that starts with a flag: `--name`,
	// `-n`, `--name=value`, `--a 1 --b 2`.
	flagSpanRe = regexp.MustCompile("`(--?[a-zA-Z][a-zA-Z0-9-]*[^`]*)`")
	flagWordRe = regexp.MustCompile(`^--?([a-zA-Z][a-zA-Z0-9-]*)(=.*)?$`)
	// simFlagRe reads the flags arcflow-sim (make bench, chaos, scale, demo)
	// defines: fs.Duration("name", ...), fs.IntVar(&v, "name", ...).
	simFlagRe = regexp.MustCompile(`\b(?:fs|flags|flag)\.\w+\((?:&[\w.]+,\s*)?"([a-z][a-z0-9-]*)"`)
)

// CheckFlagMentions reports flags that d's prose names in a code span and
// that no command has: known holds the flags of arcflow's commands and of the
// benchmark harness. Command blocks are checked by CheckBlocks.
func CheckFlagMentions(d *Doc, known map[string]bool) []Problem {
	var out []Problem
	fenced := fencedLines(d)
	for i, line := range d.Lines {
		if fenced[i] {
			continue
		}
		for _, m := range flagSpanRe.FindAllStringSubmatch(line, -1) {
			for _, word := range strings.Fields(m[1]) {
				f := flagWordRe.FindStringSubmatch(word)
				if f == nil {
					continue
				}
				if !known[f[1]] && !otherToolFlags[f[1]] {
					out = append(out, Problem{File: d.Path, Line: i + 1, Msg: word + ": no arcflow command or benchmark has this flag"})
				}
			}
		}
	}
	return out
}

// fencedLines marks the lines (0-based) of d's fenced blocks, fences included.
func fencedLines(d *Doc) []bool {
	in := make([]bool, len(d.Lines))
	for _, b := range d.Blocks {
		last := b.Line + strings.Count(b.Text, "\n") + 1 // the closing fence
		if b.Text == "" {
			last = b.Line
		}
		for l := b.Line - 1; l <= last && l < len(in); l++ {
			in[l] = true
		}
	}
	return in
}
