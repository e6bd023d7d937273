package docscheck

import (
	"path"
	"strings"
)

// Markers are the HTML comments a fenced block may carry on the line before it.
const (
	// MarkerRealCluster: the block runs against a real cluster (or GitHub, or
	// Temporal Cloud), so no test runs it.
	MarkerRealCluster = "needs a real cluster"
	// MarkerExample prefixes the path of the file under deploy/examples that a
	// manifest block shows exactly; a test applies those files to a real API server.
	MarkerExample = "example:"
)

// ExamplesDir holds the manifests that documentation blocks may show.
const ExamplesDir = "deploy/examples/"

// BlockContext is what the block check compares commands and manifests with.
type BlockContext struct {
	// Help maps an arcflow command to its flags (from --help).
	Help map[string]map[string]Flag
	// MakeTargets are the Makefile's targets.
	MakeTargets map[string]bool
	// Exists reports whether a repository path exists.
	Exists func(path string) bool
	// Read returns a repository file's content.
	Read func(path string) (string, bool)
}

// CheckBlocks reports fenced blocks of d that no test runs and no marker
// excuses. Command blocks (sh, bash, shell, console): `arcflow` lines must use
// only flags the command's --help lists, `make` lines existing targets, `go`
// lines existing packages; any other command needs the real-cluster marker
// (arcflow lines are checked there too). Manifest blocks (yaml): an ARC
// manifest must be an example file, shown exactly; other YAML needs the
// marker. Every block names its language.
func CheckBlocks(d *Doc, c BlockContext) []Problem {
	var out []Problem
	add := func(line int, msg string) { out = append(out, Problem{File: d.Path, Line: line, Msg: msg}) }
	for _, b := range d.Blocks {
		realCluster := b.Marker == MarkerRealCluster
		switch b.Lang {
		case "":
			add(b.Line, "a fenced block without a language (sh, yaml, text, ...)")
		case "sh", "bash", "shell", "console":
			for _, cmd := range commands(b.Text) {
				if msg := c.checkCommand(cmd, realCluster); msg != "" {
					add(b.Line+1+cmd.line, msg)
				}
			}
		case "yaml", "yml":
			if p, ok := strings.CutPrefix(b.Marker, MarkerExample); ok {
				out = append(out, c.checkExample(d.Path, b, strings.TrimSpace(p))...)
				continue
			}
			if strings.Contains(b.Text, "actions.summerwind.dev/") {
				add(b.Line, "an ARC manifest must be a file under "+ExamplesDir+", shown with <!-- "+MarkerExample+" path -->")
			} else if !realCluster {
				add(b.Line, "a YAML block no test applies: make it an example file or mark it <!-- "+MarkerRealCluster+" -->")
			}
		}
	}
	return out
}

func (c BlockContext) checkExample(file string, b Block, p string) []Problem {
	if !strings.HasPrefix(p, ExamplesDir) || path.Ext(p) != ".yaml" {
		return []Problem{{File: file, Line: b.Line, Msg: "example " + p + " is not a .yaml file under " + ExamplesDir}}
	}
	text, ok := c.Read(p)
	if !ok {
		return []Problem{{File: file, Line: b.Line, Msg: "example " + p + " does not exist"}}
	}
	if normalize(text) != normalize(b.Text) {
		return []Problem{{File: file, Line: b.Line, Msg: "the block differs from " + p + "; show the file as it is"}}
	}
	return nil
}

func normalize(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// command is one command of a block: its words, and the line (0-based) of
// the block it starts on.
type command struct {
	line  int
	words []string
}

// commands splits a shell block into commands: continuation lines joined,
// comments dropped, split at ;, &&, || and |; leading VAR=value words and
// the $ prompt dropped.
func commands(text string) []command {
	var out []command
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		line := lines[i]
		for strings.HasSuffix(strings.TrimRight(line, " "), "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(strings.TrimRight(line, " "), "\\") + " " + lines[i]
		}
		line = stripComment(line)
		for _, part := range splitCommands(line) {
			words := shellWords(part)
			for len(words) > 0 && (words[0] == "$" || isAssignment(words[0])) {
				words = words[1:]
			}
			if len(words) > 0 {
				out = append(out, command{line: start, words: words})
			}
		}
	}
	return out
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && name != "" && strings.ToUpper(name) == name && !strings.HasPrefix(name, "-")
}

// stripComment drops a # comment that starts a word outside quotes.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// splitCommands splits at ;, &&, || and | outside quotes.
func splitCommands(line string) []string {
	var parts []string
	var quote byte
	last := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '|' || (c == '&' && i+1 < len(line) && line[i+1] == '&'):
			parts = append(parts, line[last:i])
			if i+1 < len(line) && (line[i+1] == '&' || line[i+1] == '|') {
				i++
			}
			last = i + 1
		}
	}
	return append(parts, line[last:])
}

// shellWords splits at spaces outside quotes and drops the quotes.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	var quote byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}

// checkCommand returns what is wrong with one command of a block, or "".
func (c BlockContext) checkCommand(cmd command, realCluster bool) string {
	w := cmd.words
	switch base := path.Base(w[0]); {
	case base == "arcflow" || base == "arcflow-webhook":
		return c.checkArcflow(base, w[1:])
	case base == "make":
		for _, t := range w[1:] {
			if strings.HasPrefix(t, "-") || strings.Contains(t, "=") {
				continue
			}
			if !c.MakeTargets[t] {
				return "make " + t + ": the Makefile has no such target"
			}
		}
		return ""
	case base == "go" && len(w) > 1 && (w[1] == "test" || w[1] == "run" || w[1] == "build" || w[1] == "vet"):
		for _, t := range w[2:] {
			if strings.HasPrefix(t, "./") {
				dir := strings.TrimSuffix(strings.TrimSuffix(t, "..."), "/")
				if dir != "." && !c.Exists(strings.TrimPrefix(dir, "./")) {
					return "go " + w[1] + " " + t + ": no such package"
				}
			}
		}
		return ""
	}
	if realCluster {
		return ""
	}
	return "`" + strings.Join(w, " ") + "`: no test runs this command; check it (arcflow, make, go) or mark the block <!-- " + MarkerRealCluster + " -->"
}

// checkArcflow checks an arcflow command line (after the binary's name).
func (c BlockContext) checkArcflow(binary string, args []string) string {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" || args[0] == "version" {
		return ""
	}
	flags, ok := c.Help[args[0]]
	if !ok || (binary == "arcflow-webhook" && args[0] != "webhook") {
		return binary + " " + args[0] + ": no such command"
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "help" || name == "h" {
			continue
		}
		if _, ok := flags[name]; !ok {
			return "arcflow " + args[0] + " " + a + ": not a flag of arcflow " + args[0] + " --help"
		}
	}
	return ""
}
