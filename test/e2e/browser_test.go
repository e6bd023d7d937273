package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/localstack"
)

// chromiumFlags keep headless Chromium off the network it cannot reach here.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
}

// chromium runs Debian's chromium (make tools links it) on a page and returns its
// output. --virtual-time-budget lets the Web UI's scripts fetch and render first.
func chromium(t *testing.T, ctx context.Context, page string, args ...string) string {
	tools, err := localstack.ToolsDir()
	require.NoError(t, err)
	all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "--virtual-time-budget=15000"), args...)
	cmd := exec.CommandContext(ctx, filepath.Join(tools, "chromium"), append(all, page)...)
	out, err := cmd.Output()
	require.NoError(t, err, "chromium %s", strings.Join(args, " "))
	return string(out)
}

// A person opens the Temporal Web UI and finds the runner workflows by their
// readable IDs. The screenshot is kept in .artifacts/ for people to look at.
func TestTemporalWebUIListsRunnerWorkflowsByReadableID(t *testing.T) {
	parallel(t)
	require.NotEmpty(t, stack.TemporalUIAddress, "the e2e stack serves the Web UI")
	w := startPoolWorld(t, "browser")
	w.apply(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: web
spec:
  replicas: 2
  template:
    spec:
      repository: octo/web
      labels: [linux]
`)
	w.eventually("two runners", func() bool { return w.converged("web", 2, "") })
	var names []string
	for _, p := range w.pods("web") {
		names = append(names, p.Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page := stack.TemporalUIAddress + "/namespaces/browser/workflows?query=" + url.QueryEscape(`WorkflowId STARTS_WITH "runner/browser/"`)
	var dom string
	require.Eventually(t, func() bool {
		dom = chromium(t, ctx, page, "--dump-dom")
		return strings.Contains(dom, "runner/browser/"+names[0]) && strings.Contains(dom, "runner/browser/"+names[1])
	}, time.Minute, time.Second, "the workflow list shows both runners by ID")
	require.Contains(t, dom, "RunnerWorkflow")

	artifacts := filepath.Join(repoRoot(t), ".artifacts")
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	shot := filepath.Join(artifacts, "temporal-ui-runner-workflows.png")
	_ = os.Remove(shot)
	chromium(t, ctx, page, "--window-size=1600,900", "--screenshot="+shot)
	info, err := os.Stat(shot)
	require.NoError(t, err)
	require.Greater(t, info.Size(), int64(10_000), "a real screenshot, not an empty page")
	t.Logf("screenshot: %s", shot)
}
