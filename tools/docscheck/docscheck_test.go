package docscheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func msgs(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestSlugIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"ArcflowWorkerDown":                        "arcflowworkerdown",
		"A job waits and no runner starts":         "a-job-waits-and-no-runner-starts",
		"`arcflow worker`, `arcflow all`":          "arcflow-worker-arcflow-all",
		"Webhook deliveries get 401/503":           "webhook-deliveries-get-401503",
		"GitHub App or PAT (exact permissions)":    "github-app-or-pat-exact-permissions",
		"[Linked](x.md) *emphasis* and snake_case": "linked-emphasis-and-snake_case",
	} {
		require.Equal(t, want, Slug(heading), heading)
	}
}

func TestParse(t *testing.T) {
	d := Parse("docs/a.md", strings.Join([]string{
		"# Title",
		"See [install](install.md#helm), `[not](a-link.md)` and <a href=\"b.md\">b</a>.",
		"## Title",
		"<a id=\"custom\"></a>",
		"<!-- needs a real cluster -->",
		"",
		"```sh",
		"# [not a link](x.md)",
		"## Not a heading",
		"```",
		"[ref]: ../README.md",
	}, "\n"))
	require.Equal(t, map[string]bool{"title": true, "title-1": true, "custom": true}, d.Anchors)
	require.Equal(t, []Link{{2, "install.md#helm"}, {2, "b.md"}, {11, "../README.md"}}, d.Links)
	require.Equal(t, []Block{{Lang: "sh", Marker: MarkerRealCluster, Line: 7, Text: "# [not a link](x.md)\n## Not a heading"}}, d.Blocks)
}

func TestCheckLinks(t *testing.T) {
	docs := map[string]*Doc{
		"README.md": Parse("README.md", "[a](docs/a.md#usage) [b](docs/a.md#nope) [c](docs/missing.md) [d](https://example.com/x) "+
			"[e](#top) [f](https://github.com/arcflow/arcflow/blob/main/docs/a.md#usage) [g](workflows/runner.go#L10) [h](../outside.md)\n# Top"),
		"docs/a.md": Parse("docs/a.md", "## Usage\n[back](../README.md#top)"),
	}
	exists := func(p string) bool { return p == "docs/a.md" || p == "README.md" || p == "workflows/runner.go" }
	require.Equal(t, []string{
		"README.md:1: link to docs/a.md#nope: docs/a.md has no heading or anchor #nope",
		"README.md:1: link to docs/missing.md: no docs/missing.md",
		"README.md:1: link to ../outside.md: no ../outside.md",
	}, msgs(CheckLinks(Files{Docs: docs, Exists: exists})))

	rules := "  runbook_url: https://github.com/arcflow/arcflow/blob/main/docs/a.md#usage\n" +
		"  runbook_url: https://github.com/arcflow/arcflow/blob/main/docs/a.md#gone\n" +
		"  runbook_url: https://wiki.example.com/arcflow\n"
	require.Equal(t, []string{
		"rules.yaml:2: link to https://github.com/arcflow/arcflow/blob/main/docs/a.md#gone: docs/a.md has no heading or anchor #gone",
		"rules.yaml:3: runbook_url https://wiki.example.com/arcflow is not in this repository",
	}, msgs(CheckRunbooks(Files{Docs: docs, Exists: exists}, "rules.yaml", rules)))
}

const workerHelp = `Usage of worker:
  -batch-window duration
    	window that collects workflow_job events (ARC: 3s; 0 decides at once)
  -docker-gid string
    	docker group ID in the sidecar (default "1001")
  -enable-leader-election
    	run the Kubernetes watchers in one replica at a time
  -kube-api-qps int
    	Kubernetes API requests per second, sustained
    	(each new runner costs three writes) (default 100)
`

func TestParseHelp(t *testing.T) {
	require.Equal(t, map[string]Flag{
		"batch-window":           {Name: "batch-window"},
		"docker-gid":             {Name: "docker-gid", Default: "1001"},
		"enable-leader-election": {Name: "enable-leader-election"},
		"kube-api-qps":           {Name: "kube-api-qps", Default: "100"},
	}, ParseHelp(workerHelp))
}

func TestParseCommands(t *testing.T) {
	usage := "usage: arcflow <command> [flags]\n\ncommands:\n  worker    run the worker\n  drain     stop creating runners\n  version   print the version\n\n`arcflow <command> --help` lists a command's flags."
	require.Equal(t, []string{"worker", "drain"}, ParseCommands(usage))
}

func TestCheckFlags(t *testing.T) {
	doc := Parse("docs/configuration.md", strings.Join([]string{
		"| Flag | Environment | Default | Commands | Meaning |",
		"|---|---|---|---|---|",
		"| `--batch-window` | `ARCFLOW_BATCH_WINDOW` | `0s` | worker, all | window |",
		"| `--docker-gid` | | `1001` | worker | gid |",
		"| `--kube-api-qps` | `ARCFLOW_KUBE_API_QPS` | 50 | worker | qps |",
		"| `--gone` | | | worker | removed |",
		"| `--docker-gid` | | `1001` | worker | twice |",
		"",
		"| Flag | Meaning |",
		"|---|---|",
		"| `--not-checked` | a table without Default and Commands columns |",
	}, "\n"))
	rows := FlagRows(doc, []string{"worker", "webhook"})
	require.Len(t, rows, 5)
	require.Equal(t, []string{"worker", "all"}, rows[0].Commands)
	require.Equal(t, []string{"ARCFLOW_BATCH_WINDOW"}, rows[0].Env)
	help := map[string]map[string]Flag{"worker": ParseHelp(workerHelp)}
	require.Equal(t, []string{
		"docs/configuration.md:3: --batch-window: no command all",
		"docs/configuration.md:5: --kube-api-qps: arcflow worker --help says the default is 100; the Default cell should hold `100`",
		"docs/configuration.md:6: --gone is documented for arcflow worker, whose --help does not have it",
		"docs/configuration.md:7: --docker-gid of arcflow worker is documented twice (also line 4)",
		"docs/configuration.md: arcflow worker --enable-leader-election (from --help) is not in a flags table",
	}, msgs(CheckFlags("docs/configuration.md", rows, help)))
}

func TestEnvRowsAndNames(t *testing.T) {
	doc := Parse("docs/configuration.md", strings.Join([]string{
		"| Variable | Meaning |",
		"|---|---|",
		"| `GITHUB_TOKEN` | a PAT, not `ARCFLOW_IN_PROSE` |",
		"| `ARCFLOW_OLD` | removed |",
		"",
		"Prose naming `ARCFLOW_ELSEWHERE` is not a row.",
	}, "\n"))
	documented := EnvRows(doc)
	require.Equal(t, map[string]int{"GITHUB_TOKEN": 3, "ARCFLOW_OLD": 4}, documented)
	code := map[string]int{"GITHUB_TOKEN": 1, "ARCFLOW_NEW": 1}
	require.Equal(t, []string{
		"docs/configuration.md: environment variable ARCFLOW_NEW is not documented",
		"docs/configuration.md:4: environment variable ARCFLOW_OLD is documented, but the code has none",
	}, msgs(CheckNames("docs/configuration.md", "environment variable", code, documented)))
}

func TestCheckBlocks(t *testing.T) {
	doc := Parse("docs/x.md", strings.Join([]string{
		"```sh",
		"make demo   # comment",
		"make nope",
		"arcflow worker --batch-window=1s \\",
		"  --docker-gid 1 --no-such-flag",
		"arcflow scale --replicas 2 # scale is not a command here",
		"GOFLAGS=-x go test ./tools/docscheck ./gone/...",
		"kubectl get pods",
		"```",
		"<!-- needs a real cluster -->",
		"```sh",
		"kubectl get pods | grep runner && arcflow worker --enable-leader-election --oops",
		"```",
		"<!-- example: deploy/examples/a.yaml -->",
		"```yaml",
		"kind: RunnerDeployment",
		"```",
		"<!-- example: deploy/examples/b.yaml -->",
		"```yaml",
		"kind: Other",
		"```",
		"```yaml",
		"apiVersion: actions.summerwind.dev/v1alpha1",
		"```",
		"```yaml",
		"patches: []",
		"```",
		"```text",
		"anything",
		"```",
		"```",
		"no language",
		"```",
	}, "\n"))
	files := map[string]string{"deploy/examples/a.yaml": "kind: RunnerDeployment\n", "deploy/examples/b.yaml": "kind: Changed\n"}
	ctx := BlockContext{
		Help:        map[string]map[string]Flag{"worker": ParseHelp(workerHelp)},
		MakeTargets: map[string]bool{"demo": true},
		Exists:      func(p string) bool { return p == "tools/docscheck" },
		Read:        func(p string) (string, bool) { s, ok := files[p]; return s, ok },
	}
	require.Equal(t, []string{
		"docs/x.md:3: make nope: the Makefile has no such target",
		"docs/x.md:4: arcflow worker --no-such-flag: not a flag of arcflow worker --help",
		"docs/x.md:6: arcflow scale: no such command",
		"docs/x.md:7: go test ./gone/...: no such package",
		"docs/x.md:8: `kubectl get pods`: no test runs this command; check it (arcflow, make, go) or mark the block <!-- needs a real cluster -->",
		"docs/x.md:12: arcflow worker --oops: not a flag of arcflow worker --help",
		"docs/x.md:19: the block differs from deploy/examples/b.yaml; show the file as it is",
		"docs/x.md:22: an ARC manifest must be a file under deploy/examples/, shown with <!-- example: path -->",
		"docs/x.md:25: a YAML block no test applies: make it an example file or mark it <!-- needs a real cluster -->",
		"docs/x.md:31: a fenced block without a language (sh, yaml, text, ...)",
	}, msgs(CheckBlocks(doc, ctx)))
}

func TestCheckLocalPaths(t *testing.T) {
	doc := Parse("docs/x.md", strings.Join([]string{
		"cached under `${XDG_CACHE_HOME:-$HOME/.cache}/arcflow/`",
		"see /root/.cache/arcflow",
		"results in /tmp/bench",
		"https://example.com/work/tmp is a URL",
		"(/home/alice/arcflow)",
		"clone at /work/main",
		"command: [\"/home/runner/run.sh\"], GitHub's runner image's",
		"`/home/runner/_work` beside /home/bob/x",
	}, "\n"))
	require.Equal(t, []string{
		"docs/x.md:2: names /root, a path on the machine that wrote it",
		"docs/x.md:3: names /tmp, a path on the machine that wrote it",
		"docs/x.md:5: names /home/alice, a path on the machine that wrote it",
		"docs/x.md:6: names /work, a path on the machine that wrote it",
		"docs/x.md:8: names /home/bob, a path on the machine that wrote it",
	}, msgs(CheckLocalPaths(doc)))
}
