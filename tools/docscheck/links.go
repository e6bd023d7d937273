package docscheck

import (
	"path"
	"regexp"
	"strings"
)

// RepoURL is this repository's GitHub address: links under it are checked like
// relative ones (blob/main/<path> and tree/main/<path>).
const RepoURL = "https://github.com/arcflow/arcflow/"

// Files is the repository as the link check sees it: Markdown files parsed,
// and which other paths exist (files and directories, slash-separated,
// relative to the root).
type Files struct {
	Docs   map[string]*Doc
	Exists func(path string) bool
}

// CheckLinks reports links in docs that lead nowhere: a relative path (or one
// of RepoURL's) that does not exist, or an #anchor that the Markdown file it
// points into does not have.
func CheckLinks(f Files) []Problem {
	var out []Problem
	for _, name := range sortedKeys(f.Docs) {
		d := f.Docs[name]
		for _, l := range d.Links {
			if msg := f.resolve(name, l.Target); msg != "" {
				out = append(out, Problem{File: name, Line: l.Line, Msg: msg})
			}
		}
	}
	return out
}

// resolve returns what is wrong with target, written in file from, or "".
func (f Files) resolve(from, target string) string {
	rel, ok := repoPath(from, target)
	if !ok {
		return ""
	}
	file, anchor, _ := strings.Cut(rel, "#")
	if file == "" {
		file = from
	}
	if file != from && !f.Exists(file) {
		return "link to " + target + ": no " + file
	}
	if anchor == "" {
		return ""
	}
	d, ok := f.Docs[file]
	if !ok {
		if strings.HasSuffix(file, ".md") {
			return "link to " + target + ": " + file + " is not a checked Markdown file"
		}
		return "" // an anchor into code (a line number) is not checked
	}
	if !d.Anchors[anchor] {
		return "link to " + target + ": " + file + " has no heading or anchor #" + anchor
	}
	return ""
}

// repoPath turns a link target into a path relative to the repository root,
// with its #anchor; ok is false for links elsewhere (other sites, mail).
func repoPath(from, target string) (string, bool) {
	switch {
	case strings.HasPrefix(target, RepoURL):
		rest := strings.TrimPrefix(target, RepoURL)
		for _, prefix := range []string{"blob/main/", "tree/main/"} {
			if strings.HasPrefix(rest, prefix) {
				return strings.TrimPrefix(rest, prefix), true
			}
		}
		return "", false
	case strings.Contains(target, "://"), strings.HasPrefix(target, "mailto:"):
		return "", false
	case strings.HasPrefix(target, "#"):
		return target, true
	}
	file, anchor, hasAnchor := strings.Cut(target, "#")
	joined := path.Clean(path.Join(path.Dir(from), file))
	if strings.HasPrefix(target, "/") {
		joined = strings.TrimPrefix(path.Clean(file), "/")
	}
	if hasAnchor {
		joined += "#" + anchor
	}
	return joined, true
}

var runbookRe = regexp.MustCompile(`runbook_url:\s*(\S+)`)

// CheckRunbooks reports runbook_url annotations in an alert rules file (name,
// text) whose page or anchor does not exist.
func CheckRunbooks(f Files, name, text string) []Problem {
	var out []Problem
	for i, line := range strings.Split(text, "\n") {
		if m := runbookRe.FindStringSubmatch(line); m != nil {
			if msg := f.resolve(name, m[1]); msg != "" {
				out = append(out, Problem{File: name, Line: i + 1, Msg: msg})
			} else if !strings.HasPrefix(m[1], RepoURL) {
				out = append(out, Problem{File: name, Line: i + 1, Msg: "runbook_url " + m[1] + " is not in this repository"})
			}
		}
	}
	return out
}
