package monitoring

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The dashboard parses, and every panel but a row has queries on the templated
// data source, each naming at least one metric.
func TestDashboardPanelsHaveQueries(t *testing.T) {
	d, err := ParseDashboard()
	require.NoError(t, err)
	require.Equal(t, "arcflow", d.UID)
	ids := map[int]bool{}
	panels := 0
	for _, p := range d.AllPanels() {
		require.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		require.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, p.Title)
		if p.Type == "row" {
			continue
		}
		panels++
		require.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			require.NotEmpty(t, MetricNames(target.Expr), "%s (%s): %q", p.Title, target.RefID, target.Expr)
		}
	}
	require.GreaterOrEqual(t, panels, 10)
	require.Contains(t, string(DashboardFile()), `"uid": "${datasource}"`)
}

// Every alert has a summary, a description and a runbook_url that points at its
// own section of docs/operations.md, which exists.
func TestAlertsHaveRunbooks(t *testing.T) {
	alerts, err := Alerts()
	require.NoError(t, err)
	docs, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	n := 0
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			n++
			require.NotEmpty(t, r.Annotations["summary"], r.Alert)
			require.NotEmpty(t, r.Annotations["description"], r.Alert)
			require.True(t, strings.HasSuffix(r.Annotations["runbook_url"], "docs/operations.md#"+strings.ToLower(r.Alert)), r.Alert)
			require.Contains(t, string(docs), "\n### "+r.Alert+"\n", "docs/operations.md has a section for %s", r.Alert)
			require.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], r.Alert)
			require.NotEmpty(t, MetricNames(r.Expr), r.Alert)
		}
	}
	require.Equal(t, 12, n)
}
