package docscheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Paths of the files the checks read, relative to the repository root.
const (
	ConfigurationDoc = "docs/configuration.md"
	OperationsDoc    = "docs/operations.md"
	ChartReadme      = "deploy/helm/arcflow/README.md"
	AlertRules       = "deploy/monitoring/arcflow-alerts.yaml"
	// ReadmeMaxLines keeps the README an index, not a manual.
	ReadmeMaxLines = 160
)

// Repo is the repository's documentation and what it is checked against.
type Repo struct {
	Root string
	// Commands are arcflow's commands (from `arcflow --help`, see
	// ParseCommands); Help maps each to its `arcflow <command> --help`.
	Commands []string
	Help     map[string]string
	// HelmDocs is what helm-docs generates for the chart's README.
	HelmDocs string
	// TemporalMetrics are the Temporal SDK's metric families as arcflow's
	// MetricsHandler exports them (internal/telemetry), which no literal in
	// the code names.
	TemporalMetrics map[string]Metric
}

var (
	makeTargetRe = regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):`)
	codeEnvRe    = regexp.MustCompile(`"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|KUBECONFIG|GOGC)"`)
	// webhookResultRe reads the results the webhook answers with, which
	// label arcflow_webhook_deliveries_total and are no metric names.
	webhookResultRe = regexp.MustCompile(`reply\(http\.\w+, "([a-z_]+)"`)
)

// kubeNameSources are the packages whose arcflow.dev/ labels and annotations
// arcflow reads or sets.
var kubeNameSources = []string{"api/v1alpha1/*.go", "activities/*.go", "activities/calls/*.go", "workflows/*.go", "worker/*.go", "webhook/*.go"}

// metricSources are the packages of the shipped binaries that register
// Prometheus metrics.
var metricSources = []string{"cmd/arcflow/*.go", "github/*.go", "webhook/*.go", "worker/*.go", "activities/*.go", "internal/telemetry/*.go"}

// guideDoc reports whether a Markdown file is user documentation, whose
// blocks and paths are checked (links are checked in every file).
func guideDoc(name string) bool {
	return name == "README.md" || strings.HasPrefix(name, "docs/") || name == ChartReadme
}

// Check runs every check and returns the problems found.
func (r Repo) Check() ([]Problem, error) {
	docs, err := r.markdown()
	if err != nil {
		return nil, err
	}
	files := Files{Docs: docs, Exists: r.exists}
	out := CheckLinks(files)

	rules, err := r.read(AlertRules)
	if err != nil {
		return nil, err
	}
	out = append(out, CheckRunbooks(files, AlertRules, rules)...)

	help := map[string]map[string]Flag{}
	for _, cmd := range r.Commands {
		help[cmd] = ParseHelp(r.Help[cmd])
	}
	config, ok := docs[ConfigurationDoc]
	if !ok {
		return append(out, Problem{File: ConfigurationDoc, Msg: "missing"}), nil
	}
	out = append(out, CheckFlags(ConfigurationDoc, FlagRows(config, r.Commands), help)...)

	codeEnv, err := r.grep(codeEnvRe, 1, "cmd/arcflow/*.go", "github/config.go")
	if err != nil {
		return nil, err
	}
	out = append(out, CheckNames(ConfigurationDoc, "environment variable", codeEnv, EnvRows(config))...)

	// Every arcflow.dev/ label and annotation the code has is documented.
	kubeNames, err := r.grep(kubeNameRe, 0, kubeNameSources...)
	if err != nil {
		return nil, err
	}
	out = append(out, CheckKubeNamesDocumented(config, kubeNames)...)

	types, err := r.sources("api/v1alpha1/*_types.go")
	if err != nil {
		return nil, err
	}
	out = append(out, CheckPrinterColumns(config, PrinterColumns(types))...)

	metrics, notMetrics, err := r.metrics()
	if err != nil {
		return nil, err
	}
	flagNames, err := r.flagNames(help)
	if err != nil {
		return nil, err
	}
	if ops, ok := docs[OperationsDoc]; ok {
		out = append(out, CheckMetricTable(ops, metrics)...)
	}

	// Every reason a condition or an event of arcflow's has is explained.
	reasonCode, err := r.sources(reasonSources...)
	if err != nil {
		return nil, err
	}
	reasons, err := CodeReasons(reasonCode)
	if err != nil {
		return nil, err
	}
	if ts, ok := docs[TroubleshootingDoc]; ok {
		out = append(out, CheckReasonRows(ts, reasons)...)
	} else {
		out = append(out, Problem{File: TroubleshootingDoc, Msg: "missing"})
	}

	makefile, err := r.read("Makefile")
	if err != nil {
		return nil, err
	}
	ctx := BlockContext{Help: help, MakeTargets: map[string]bool{}, Exists: r.exists, Read: func(p string) (string, bool) {
		text, err := r.read(p)
		return text, err == nil
	}}
	for _, m := range makeTargetRe.FindAllStringSubmatch(makefile, -1) {
		ctx.MakeTargets[m[1]] = true
	}
	for _, name := range sortedKeys(docs) {
		d := docs[name]
		if !guideDoc(name) {
			continue
		}
		out = append(out, CheckBlocks(d, ctx)...)
		out = append(out, CheckLocalPaths(d)...)
		out = append(out, CheckKubeNames(d, kubeNames)...)
		out = append(out, CheckMetrics(d, metrics, notMetrics)...)
		out = append(out, CheckFlagMentions(d, flagNames)...)
	}
	if readme, ok := docs["README.md"]; ok && len(readme.Lines) > ReadmeMaxLines {
		out = append(out, Problem{File: "README.md", Msg: "longer than " + strconv.Itoa(ReadmeMaxLines) + " lines: move the detail into docs/"})
	}
	if chart, ok := docs[ChartReadme]; !ok || normalize(strings.Join(chart.Lines, "\n")) != normalize(r.HelmDocs) {
		out = append(out, Problem{File: ChartReadme, Msg: "not what helm-docs generates from values.yaml: run make generate"})
	}
	return out, nil
}

// EnvRows collects the environment variable names in the Environment (or
// Variable) column of d's tables, with the line of each.
func EnvRows(d *Doc) map[string]int {
	names := map[string]int{}
	col := -1
	for i, line := range d.Lines {
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "|") || d.Prose[i] == "" {
			col = -1
			continue
		}
		cells := splitRow(line)
		if col == -1 {
			col = -2 // a table without such a column
			for j, c := range cells {
				if h := strings.ToLower(strings.TrimSpace(c)); h == "environment" || h == "variable" {
					col = j
				}
			}
			continue
		}
		if col < 0 || col >= len(cells) {
			continue
		}
		for _, m := range codeCellRe.FindAllStringSubmatch(cells[col], -1) {
			for _, name := range envNameRe.FindAllString(m[1], -1) {
				if _, seen := names[name]; !seen {
					names[name] = i + 1
				}
			}
		}
	}
	return names
}

// markdown parses every Markdown file of the repository outside hidden
// directories (tool caches, stacks, results).
func (r Repo) markdown() (map[string]*Doc, error) {
	docs := map[string]*Doc{}
	err := filepath.WalkDir(r.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && p != r.Root && strings.HasPrefix(e.Name(), ".") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(r.Root, p)
		rel = filepath.ToSlash(rel)
		text, err := r.read(rel)
		if err != nil {
			return err
		}
		docs[rel] = Parse(rel, text)
		return nil
	})
	return docs, err
}

// grep collects the matches (group) of re in the non-test Go files of globs.
func (r Repo) grep(re *regexp.Regexp, group int, globs ...string) (map[string]int, error) {
	sources, err := r.sources(globs...)
	if err != nil {
		return nil, err
	}
	found := map[string]int{}
	for _, text := range sources {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			found[m[group]]++
		}
	}
	return found, nil
}

// metrics returns the metric families the code exports (its registrations and
// the Temporal SDK's), and the words with a metric prefix that are label
// values instead.
func (r Repo) metrics() (map[string]Metric, map[string]bool, error) {
	sources, err := r.sources(metricSources...)
	if err != nil {
		return nil, nil, err
	}
	metrics, err := CodeMetrics(sources)
	if err != nil {
		return nil, nil, err
	}
	if len(r.TemporalMetrics) == 0 {
		return nil, nil, fmt.Errorf("no Temporal SDK metrics to check the docs against")
	}
	for name, m := range r.TemporalMetrics {
		metrics[name] = m
	}
	results, err := r.grep(webhookResultRe, 1, "webhook/*.go")
	if err != nil {
		return nil, nil, err
	}
	notMetrics := map[string]bool{}
	for name := range results {
		notMetrics[name] = true
	}
	return metrics, notMetrics, nil
}

// flagNames are the flags a page may name: every command's (from --help, as
// help holds them) and the benchmark harness's (sim/cmd/arcflow-sim).
func (r Repo) flagNames(help map[string]map[string]Flag) (map[string]bool, error) {
	sim, err := r.grep(simFlagRe, 1, "sim/cmd/arcflow-sim/*.go")
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for name := range sim {
		names[name] = true
	}
	for _, flags := range help {
		for name := range flags {
			names[name] = true
		}
	}
	return names, nil
}

// sources reads the non-test Go files of globs, by path.
func (r Repo) sources(globs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, g := range globs {
		paths, err := filepath.Glob(filepath.Join(r.Root, g))
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			rel, _ := filepath.Rel(r.Root, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
	}
	return out, nil
}

func (r Repo) read(p string) (string, error) {
	b, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(p)))
	return string(b), err
}

func (r Repo) exists(p string) bool {
	_, err := os.Stat(filepath.Join(r.Root, filepath.FromSlash(p)))
	return err == nil
}
