// Package monitoring reads arcflow's alert rules (arcflow-alerts.yaml) and Grafana
// dashboard (arcflow-dashboard.json), which sit beside it, and names the metrics
// their PromQL queries select, so that tests can hold them against what the
// worker and the webhook export.
package monitoring

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

var (
	//go:embed arcflow-alerts.yaml
	alertsFile []byte
	//go:embed arcflow-dashboard.json
	dashboardFile []byte
)

// AlertsFile and DashboardFile are the files as committed.
func AlertsFile() []byte    { return alertsFile }
func DashboardFile() []byte { return dashboardFile }

// RuleGroups is a Prometheus rules file, or a PrometheusRule's spec.
type RuleGroups struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one group of rules.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is an alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Alerts parses arcflow-alerts.yaml.
func Alerts() (RuleGroups, error) {
	var g RuleGroups
	if err := yaml.UnmarshalStrict(alertsFile, &g); err != nil {
		return g, fmt.Errorf("arcflow-alerts.yaml: %w", err)
	}
	return g, nil
}

// Dashboard is the part of a Grafana dashboard that holds queries.
type Dashboard struct {
	Title  string  `json:"title"`
	UID    string  `json:"uid"`
	Panels []Panel `json:"panels"`
}

// Panel is a Grafana panel; a row holds its panels while collapsed.
type Panel struct {
	ID      int      `json:"id"`
	Type    string   `json:"type"`
	Title   string   `json:"title"`
	Targets []Target `json:"targets"`
	Panels  []Panel  `json:"panels"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
}

// Target is one query of a panel.
type Target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
}

// ParseDashboard parses arcflow-dashboard.json.
func ParseDashboard() (Dashboard, error) {
	var d Dashboard
	if err := json.Unmarshal(dashboardFile, &d); err != nil {
		return d, fmt.Errorf("arcflow-dashboard.json: %w", err)
	}
	return d, nil
}

// Query is a PromQL expression and where it comes from.
type Query struct {
	Source string // "alert ArcflowWorkerDown" or "panel CPU (A)"
	Expr   string
}

// Queries are every alert's and every dashboard panel's PromQL expression.
func Queries() ([]Query, error) {
	alerts, err := Alerts()
	if err != nil {
		return nil, err
	}
	d, err := ParseDashboard()
	if err != nil {
		return nil, err
	}
	var qs []Query
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			qs = append(qs, Query{Source: "alert " + r.Alert, Expr: r.Expr})
		}
	}
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			qs = append(qs, Query{Source: fmt.Sprintf("panel %s (%s)", p.Title, t.RefID), Expr: t.Expr})
		}
	}
	return qs, nil
}

// AllPanels are the dashboard's panels, rows' nested panels included.
func (d Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}
