package deploy_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

// ARC's chart values beside arcflow's: docs/migrating-from-arc.md has a row
// per ARC value, and this file holds the chart to it. A value the table calls
// "same" is rendered (arcSameChecks, arcvalues_same_test.go) and found where
// ARC's chart puts it; a row that quotes a message fails the render with it.

// arcRow is a row of the table: its ARC values, what arcflow does with them
// (same, renamed, refused at render, not applicable), and the quoted start
// of the render's failure, if the row has one.
type arcRow struct {
	names           []string
	status, message string
}

var (
	codeSpanRe = regexp.MustCompile("`([^`]+)`")
	quotedRe   = regexp.MustCompile(`"([^"]+)"`)
)

// arcRows reads the table of "ARC's chart values beside arcflow's". Names
// with a wildcard (`actionsMetrics.*`) stand for values that are not applicable.
func arcRows(t *testing.T) []arcRow {
	t.Helper()
	data, err := os.ReadFile("../docs/migrating-from-arc.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## ARC's chart values beside arcflow's\n")
	require.True(t, ok, "the section is in docs/migrating-from-arc.md")
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []arcRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		row := arcRow{status: strings.TrimSpace(cells[2])}
		for _, m := range codeSpanRe.FindAllStringSubmatch(cells[1], -1) {
			if !strings.Contains(m[1], "*") {
				row.names = append(row.names, m[1])
			}
		}
		if m := quotedRe.FindStringSubmatch(cells[3]); m != nil {
			row.message = m[1]
		}
		rows = append(rows, row)
	}
	require.Greater(t, len(rows), 50, "ARC's chart has some 150 values")
	return rows
}

// Each row is one of the four kinds; "same" rows have a check, rows that
// quote a message have a refusal, and the checks name only values of the
// table, so the page and this file cannot drift apart.
func TestARCValuesTableMatchesTheChecks(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, row := range arcRows(t) {
		require.Contains(t, []string{"same", "renamed", "refused at render", "not applicable"}, row.status, "%v", row.names)
		if row.status == "renamed" || row.status == "refused at render" {
			require.NotEmpty(t, row.message, "%v: a refusal quotes its message", row.names)
		}
		for _, name := range row.names {
			require.False(t, seen[name], "%s has one row", name)
			seen[name] = true
			if row.status == "same" {
				require.Contains(t, arcSameChecks, name, "a check that %s reaches its place", name)
			}
			if row.message != "" {
				require.Contains(t, arcRefusals, name, "a render that %s fails", name)
			}
		}
	}
	for name := range arcSameChecks {
		require.True(t, seen[name], "%s: checked here but not in the table", name)
	}
	for name := range arcRefusals {
		require.True(t, seen[name], "%s: refused here but not in the table", name)
	}
}

// Every value the table calls "same" reaches its place: most in one render
// of an ARC values file (arcValues), the rest in renders of their own.
func TestChartReadsARCValues(t *testing.T) {
	t.Parallel()
	shared := objects(t, helmTemplate(t, "-f", arcValuesFile(t)))
	for name, c := range arcSameChecks {
		objs := shared
		if c.own != nil {
			objs = objects(t, helmTemplate(t, c.own...))
		}
		t.Run(name, func(t *testing.T) { c.check(t, objs) })
	}
}

// arcRefusals are, for each ARC value a row refuses, the helm arguments that
// set it; the render must fail with the row's message.
var arcRefusals = map[string][]string{
	"replicaCount":        {"--set", "replicaCount=1"},
	"resources":           {"--set", "resources.limits.memory=1Gi"},
	"nodeSelector":        {"--set", "nodeSelector.pool=system"},
	"tolerations":         {"--set", "tolerations[0].key=system", "--set", "tolerations[0].operator=Exists"},
	"affinity":            {"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool"},
	"podDisruptionBudget": {"--set", "podDisruptionBudget.enabled=false"},
	// ARC's controller image, by any of its names.
	"image.repository":                              {"--set", "image.repository=summerwind/actions-runner-controller"},
	"leaderElectionId":                              {"--namespace", "actions-runner-system", "--set", "leaderElectionId=actions-runner-controller"},
	"authSecret.github_basicauth_username":          {"--set", "authSecret.github_basicauth_username=proxy"},
	"authSecret.github_basicauth_password":          {"--set", "authSecret.github_basicauth_password=secret"},
	"serviceAccount.name":                           {"--set", "serviceAccount.name=actions-runner-controller"},
	"githubWebhookServer.serviceAccount.name":       {"--set", "githubWebhookServer.serviceAccount.name=webhook"},
	"metrics.serviceMonitor.enable":                 {"--set", "metrics.serviceMonitor.enable=true"},
	"metrics.serviceMonitorLabels":                  {"--set", "metrics.serviceMonitorLabels.release=prometheus"},
	"githubWebhookServer.useRunnerGroupsVisibility": {"--set", "githubWebhookServer.useRunnerGroupsVisibility=true"},
	"githubWebhookServer.service.ports":             {"--set", "githubWebhookServer.service.ports[0].port=80", "--set", "githubWebhookServer.service.ports[0].targetPort=http"},
	"actionsMetricsServer.enabled":                  {"--set", "actionsMetricsServer.enabled=true"},
}

// Each refused value fails the render with the table's message; the other
// names of ARC's controller image too, and a runner image set twice.
func TestChartRefusesARCValues(t *testing.T) {
	t.Parallel()
	messages := map[string]string{}
	for _, row := range arcRows(t) {
		for _, name := range row.names {
			messages[name] = row.message
		}
	}
	fails := func(t *testing.T, want string, values ...string) {
		t.Helper()
		namespace := releaseNS
		if len(values) > 1 && values[0] == "--namespace" {
			namespace, values = values[1], values[2:]
		}
		cmd := exec.Command(tool(t, "helm"), append([]string{"template", release, chartDir, "--namespace", namespace}, values...)...)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%v renders", values)
		require.Contains(t, string(out), want, "%v", values)
	}
	for name, values := range arcRefusals {
		fails(t, messages[name], values...)
	}
	for _, repo := range []string{"ghcr.io/actions/actions-runner-controller", "registry.example.org/mirror/actions-runner-controller", "summerwind/actions-runner-controller:v0.27.6"} {
		fails(t, "image.repository is ARC's controller image ("+repo+"); arcflow's image is image.repository=ghcr.io/arcflow/arcflow; put the runner image in image.actionsRunnerRepositoryAndTag",
			"--set", "image.repository="+repo)
	}
	fails(t, "both name the runner image: set one",
		"--set", "image.actionsRunnerRepositoryAndTag=summerwind/actions-runner:v2", "--set", "runner.image=summerwind/actions-runner:v1")

	// ARC's empty defaults, its Lease in another namespace, and one runner
	// image under both names pass.
	helmTemplate(t, "--set", "replicaCount=0", "--set", "podDisruptionBudget=null", "--set", "metrics.serviceMonitor.enable=false",
		"--set", "githubWebhookServer.useRunnerGroupsVisibility=false", "--set", "leaderElectionId=actions-runner-controller",
		"--set", "image.actionsRunnerRepositoryAndTag=r:1", "--set", "runner.image=r:1")
}

// The ARC values that configure runner pods reach the pods the worker makes:
// the rendered worker's flags and environment, read as `arcflow worker`
// reads them (runnerPodDefaults), go into the worker's own pod builder.
func TestChartARCRunnerValuesReachRunnerPods(t *testing.T) {
	t.Parallel()
	worker := container(t, objects(t, helmTemplate(t, "-f", arcValuesFile(t))), "arcflow-worker")
	gh := github.Config{
		EnterpriseURL:   envValue(worker, "GITHUB_ENTERPRISE_URL"),
		URL:             envValue(worker, "GITHUB_URL"),
		RunnerGitHubURL: envValue(worker, "RUNNER_GITHUB_URL"),
	}
	pod := activities.BuildRunnerPod(activities.RunnerPodInput{
		Namespace: "ci", Name: "runners-x1", Pool: "runners", Kind: v1alpha1.KindRunnerDeployment,
		Spec: v1alpha1.RunnerSpec{RunnerConfig: v1alpha1.RunnerConfig{Repository: "o/r"}}, GitHubURL: gh.RunnerURL(),
	}, runnerPodDefaults(t, args(worker)))

	runner, docker := podContainer(t, pod, "runner"), podContainer(t, pod, "docker")
	require.Equal(t, arcValues.runnerImage, runner.Image, "image.actionsRunnerRepositoryAndTag")
	require.Equal(t, arcValues.dockerImage, docker.Image, "image.dindSidecarRepositoryAndTag")
	require.Contains(t, docker.Args, "--registry-mirror="+arcValues.mirror, "dockerRegistryMirror")
	require.Contains(t, docker.Env, corev1.EnvVar{Name: "DOCKER_GROUP_GID", Value: arcValues.dockerGID}, "dockerGID")
	require.Equal(t, []corev1.LocalObjectReference{{Name: arcValues.runnerPullSecret}}, pod.Spec.ImagePullSecrets, "image.actionsRunnerImagePullSecrets")
	require.Contains(t, runner.Env, corev1.EnvVar{Name: "GITHUB_URL", Value: arcValues.runnerURL}, "runnerGithubURL")

	// Without runnerGithubURL, runners register at the Enterprise Server's
	// web address (githubEnterpriseServerURL), as in ARC.
	gh.RunnerGitHubURL = ""
	require.Equal(t, arcValues.enterpriseURL+"/", gh.RunnerURL())

	// At the chart's defaults the worker passes none of these flags: its
	// defaults are ARC's.
	dflt := runnerPodDefaults(t, args(container(t, objects(t, helmTemplate(t)), "arcflow-worker")))
	require.Equal(t, activities.DefaultPodDefaults(), dflt)
}

// runnerPodDefaults reads a worker's runner-pod flags as addWorkerFlags in
// cmd/arcflow/worker_flags.go does (TestChartFlagsExist holds the names to
// the worker's --help); the flags of no concern here are skipped.
func runnerPodDefaults(t *testing.T, workerArgs []string) activities.PodDefaults {
	t.Helper()
	d := activities.DefaultPodDefaults()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.StringVar(&d.RunnerImage, "runner-image", d.RunnerImage, "")
	fs.StringVar(&d.DockerImage, "docker-image", d.DockerImage, "")
	fs.StringVar(&d.DockerGID, "docker-gid", d.DockerGID, "")
	fs.StringVar(&d.RegistryMirror, "docker-registry-mirror", "", "")
	pullSecrets := fs.String("runner-image-pull-secret", "", "")
	var own []string
	for _, a := range workerArgs[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if fs.Lookup(name) != nil {
			own = append(own, a)
		}
	}
	require.NoError(t, fs.Parse(own))
	for _, s := range strings.Split(*pullSecrets, ",") {
		if s = strings.TrimSpace(s); s != "" {
			d.PullSecrets = append(d.PullSecrets, s)
		}
	}
	return d
}

func podContainer(t *testing.T, pod *corev1.Pod, name string) corev1.Container {
	t.Helper()
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	require.Failf(t, "no container", "%s in %s", name, pod.Name)
	return corev1.Container{}
}

// envValue is a container's plain environment variable, or "".
func envValue(c map[string]any, name string) string {
	v, _ := envOrNil(c, name)["value"].(string)
	return v
}

// arcValuesFile writes arcValuesYAML for helm's -f.
func arcValuesFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arc-values.yaml")
	require.NoError(t, os.WriteFile(path, []byte(arcValuesYAML), 0o644))
	return path
}

// at is the value at a path of the object of a kind and name; a number in
// the path indexes a list.
func at(t *testing.T, objs []*unstructured.Unstructured, kind, name string, path ...string) any {
	t.Helper()
	o := find(objs, kind, name)
	require.NotNil(t, o, "%s %s", kind, name)
	var v any = o.Object
	for _, p := range path {
		switch node := v.(type) {
		case map[string]any:
			v = node[p]
		case []any:
			i, err := strconv.Atoi(p)
			require.NoError(t, err, "%s %s: %v", kind, name, path)
			require.Less(t, i, len(node), "%s %s: %v", kind, name, path)
			v = node[i]
		default:
			require.Failf(t, "no such path", "%s %s: %v", kind, name, path)
		}
	}
	require.NotNil(t, v, "%s %s: %v", kind, name, path)
	return v
}
