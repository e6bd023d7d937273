package docscheck

import "regexp"

// localPathRe matches a path that only exists on the machine that wrote it:
// a home directory, a scratch directory, or this workplace's checkout.
var localPathRe = regexp.MustCompile(`(^|[\s("'` + "`" + `=:])(/root|/home/[^/\s]+|/Users/[^/\s]+|/tmp|/var/folders|/work)(/|\b)`)

// containerPaths look like a home directory but are a runner image's:
// GitHub's runner image keeps its runner in /home/runner (run.sh, _work).
var containerPaths = map[string]bool{"/home/runner": true}

// CheckLocalPaths reports lines of d, code blocks included, that name such a path.
func CheckLocalPaths(d *Doc) []Problem {
	var out []Problem
	for i, line := range d.Lines {
		for _, m := range localPathRe.FindAllStringSubmatch(line, -1) {
			if !containerPaths[m[2]] {
				out = append(out, Problem{File: d.Path, Line: i + 1, Msg: "names " + m[2] + ", a path on the machine that wrote it"})
				break
			}
		}
	}
	return out
}
