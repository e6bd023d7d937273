package docscheck

import "regexp"

// localPathRe matches a path that only exists on the machine that wrote it:
// a home directory, a scratch directory, or this workplace's checkout.
var localPathRe = regexp.MustCompile(`(^|[\s("'` + "`" + `=:])(/root|/home/[^/\s]+|/Users/[^/\s]+|/tmp|/var/folders|/work)(/|\b)`)

// CheckLocalPaths reports lines of d, code blocks included, that name such a path.
func CheckLocalPaths(d *Doc) []Problem {
	var out []Problem
	for i, line := range d.Lines {
		if m := localPathRe.FindStringSubmatch(line); m != nil {
			out = append(out, Problem{File: d.Path, Line: i + 1, Msg: "names " + m[2] + ", a path on the machine that wrote it"})
		}
	}
	return out
}
