package docscheck

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ParseCommands reads the command names from `arcflow --help` (the lines
// under "commands:"), leaving out version, which has no flags.
func ParseCommands(usage string) []string {
	var cmds []string
	in := false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.TrimSpace(line) == "commands:":
			in = true
		case in && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
			if name := strings.Fields(line)[0]; name != "version" {
				cmds = append(cmds, name)
			}
		case in:
			in = len(cmds) == 0
		}
	}
	return cmds
}

// Flag is one flag as Go's flag package prints it in --help.
type Flag struct {
	Name string
	// Default is the "(default X)" of the help text, unquoted; "" when none
	// is printed (the zero value).
	Default string
}

var (
	helpFlagRe    = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9-]*)`)
	helpDefaultRe = regexp.MustCompile(`\(default (.*)\)\s*$`)
)

// ParseHelp reads the flags of a command's --help output (Go's flag package:
// "  -name type" lines, each followed by indented usage lines that may end in
// "(default X)").
func ParseHelp(help string) map[string]Flag {
	flags := map[string]Flag{}
	var current string
	for _, line := range strings.Split(help, "\n") {
		if m := helpFlagRe.FindStringSubmatch(line); m != nil {
			current = m[1]
			flags[current] = Flag{Name: current}
			line = strings.TrimPrefix(line, m[0])
		} else if current == "" || !strings.HasPrefix(line, "    ") {
			continue
		}
		if m := helpDefaultRe.FindStringSubmatch(line); m != nil {
			f := flags[current]
			f.Default = strings.Trim(m[1], `"`)
			flags[current] = f
		}
	}
	return flags
}

// FlagRow is a row of a flags table in docs/configuration.md.
type FlagRow struct {
	Line     int
	Flag     string
	Default  string // the Default cell
	Commands []string
	Env      []string // names in the Environment cell
}

var (
	codeCellRe = regexp.MustCompile("`([^`]*)`")
	envNameRe  = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\bKUBECONFIG\b|\bGOGC\b|\bGOMEMLIMIT\b`)
)

// FlagRows reads every table whose header has the columns Flag, Default and
// Commands. A Commands cell names commands, or says "every command" (each of
// all).
func FlagRows(d *Doc, all []string) []FlagRow {
	var rows []FlagRow
	var cols map[string]int
	for i, line := range d.Lines {
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "|") || d.Prose[i] == "" {
			cols = nil // not a table row, or inside a fenced block
			continue
		}
		cells := splitRow(line)
		if cols == nil {
			cols = map[string]int{}
			for j, c := range cells {
				cols[strings.ToLower(strings.TrimSpace(c))] = j
			}
			if _, ok := cols["flag"]; !ok {
				cols = map[string]int{"skip": -1}
			} else if _, ok := cols["commands"]; !ok {
				cols = map[string]int{"skip": -1}
			}
			continue
		}
		if _, skip := cols["skip"]; skip || strings.Trim(line, "|-: ") == "" {
			continue
		}
		cell := func(name string) string {
			if j, ok := cols[name]; ok && j < len(cells) {
				return cells[j]
			}
			return ""
		}
		m := codeCellRe.FindStringSubmatch(cell("flag"))
		if m == nil {
			continue
		}
		row := FlagRow{Line: i + 1, Flag: strings.TrimLeft(m[1], "-"), Default: cell("default")}
		if c := strings.ToLower(cell("commands")); strings.Contains(c, "every command") {
			row.Commands = append([]string(nil), all...)
		} else {
			for _, word := range strings.FieldsFunc(c, func(r rune) bool { return r == ',' || r == ' ' || r == '`' }) {
				row.Commands = append(row.Commands, word)
			}
		}
		row.Env = envNameRe.FindAllString(cell("environment"), -1)
		rows = append(rows, row)
	}
	return rows
}

// splitRow splits a Markdown table row into its cells; a | inside a code span
// or escaped as \| does not split.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	var b strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '`':
			inCode = !inCode
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
			continue
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// CheckFlags compares the commands' --help (command → flags) with the rows of
// file: each flag of each command is documented once for that command, with
// its default in a code span of the Default cell; each row's commands exist
// and have the flag.
func CheckFlags(file string, rows []FlagRow, help map[string]map[string]Flag) []Problem {
	var out []Problem
	documented := map[string]map[string]FlagRow{}
	for _, r := range rows {
		if len(r.Commands) == 0 {
			out = append(out, Problem{File: file, Line: r.Line, Msg: "--" + r.Flag + ": the Commands cell names no command"})
		}
		for _, cmd := range r.Commands {
			flags, ok := help[cmd]
			if !ok {
				out = append(out, Problem{File: file, Line: r.Line, Msg: "--" + r.Flag + ": no command " + cmd})
				continue
			}
			f, ok := flags[r.Flag]
			if !ok {
				out = append(out, Problem{File: file, Line: r.Line, Msg: "--" + r.Flag + " is documented for arcflow " + cmd + ", whose --help does not have it"})
				continue
			}
			if documented[cmd] == nil {
				documented[cmd] = map[string]FlagRow{}
			}
			if prev, dup := documented[cmd][r.Flag]; dup {
				out = append(out, Problem{File: file, Line: r.Line, Msg: "--" + r.Flag + " of arcflow " + cmd + " is documented twice (also line " + strconv.Itoa(prev.Line) + ")"})
			}
			documented[cmd][r.Flag] = r
			if f.Default != "" && !strings.Contains(r.Default, "`"+f.Default+"`") {
				out = append(out, Problem{File: file, Line: r.Line, Msg: "--" + r.Flag + ": arcflow " + cmd + " --help says the default is " + f.Default + "; the Default cell should hold `" + f.Default + "`"})
			}
		}
	}
	for _, cmd := range sortedKeys(help) {
		for _, name := range sortedKeys(help[cmd]) {
			if _, ok := documented[cmd][name]; !ok {
				out = append(out, Problem{File: file, Msg: "arcflow " + cmd + " " + dashed(name) + " (from --help) is not in a flags table"})
			}
		}
	}
	return out
}

// CheckNames reports names the code has that the documentation lacks (what)
// and names the documentation has that the code lacks.
func CheckNames(file, what string, code, documented map[string]int) []Problem {
	var out []Problem
	for _, name := range sortedKeys(code) {
		if _, ok := documented[name]; !ok {
			out = append(out, Problem{File: file, Msg: what + " " + name + " is not documented"})
		}
	}
	for _, name := range sortedKeys(documented) {
		if _, ok := code[name]; !ok {
			out = append(out, Problem{File: file, Line: documented[name], Msg: what + " " + name + " is documented, but the code has none"})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dashed writes a flag as the docs do: -n, --namespace.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
