package main

import (
	"fmt"
	"strings"

	"github.com/arcflow/arcflow/sim/world"
)

// costRows are what a burst costs in Temporal: Temporal Cloud's billable Actions
// and their list price, and the server's CPU and memory on this machine.
func (r *burstResult) costRows(row func(figure, arcflow, arcMeasured, target string)) {
	jobs := float64(r.jobs)
	from := r.actions.From
	row("Temporal Cloud actions per job ("+world.ActionsRuleURL+")",
		fmt.Sprintf("%.2f (%d for %d jobs over %d workflow runs: %s); %d more once, as the autoscaler and pool came up",
			float64(from.Total())/jobs, from.Total(), r.jobs, r.actions.Runs, from.PerUnit(r.jobs), r.actions.Before.Total()), "", "")
	row("the same, by the workflow that paid it", world.PaidBy(r.actions.ByWorkflow, r.jobs), "",
		"≤ 8 per job in a burst of 100 (10.6 before ready-untold pods and the pools' registration timers: runner 8.0, pool 1.4, autoscaler 1.2)")
	row(fmt.Sprintf("Temporal Cloud price of 1,000 jobs ($%.0f per million actions, Pay-As-You-Go first tier)", world.CloudPricePerMillionActions),
		fmt.Sprintf("$%.2f", world.CloudPriceUSD(float64(from.Total())/jobs*1000)), "", "")
	row(fmt.Sprintf("Temporal server (%s) CPU seconds per job; peak RSS since the stack started", r.serverName),
		fmt.Sprintf("%.3f; %s", r.temporalServer.CPU.Seconds()/jobs, mib(r.temporalServer.PeakRSS)), "", "")
	if r.postgres.Processes > 0 {
		row("PostgreSQL CPU seconds per job; memory after the burst (PSS over its processes)",
			fmt.Sprintf("%.3f; %s (%d processes)", r.postgres.CPU.Seconds()/jobs, mib(r.postgres.PSS), r.postgres.Processes), "", "")
	}
}

// steadyCostRows are what a steady load costs in Temporal, in the steady
// tables' four columns, beside the targets: Actions per job by kind
// and by the workflow that paid them (everything recorded from the load's
// start, the wind-down after the last job included), their list price, and
// the server's CPU per job.
func steadyCostRows(b *strings.Builder, a world.RunActions, jobs int, server string, temporal, postgres world.ProcessUsage) {
	perJob := float64(a.From.Total()) / float64(max(jobs, 1))
	fmt.Fprintf(b, "| Temporal Cloud actions per job (%s) | %.2f: %s | 0 (no Temporal) | target ≤ 12 (17.4 before ready-untold pods, the pools' registration timers and deferred completions; 24.2 before kept timers, paced status, job starts told and quiet ends) |\n",
		world.ActionsRuleURL, perJob, a.From.PerUnit(jobs))
	fmt.Fprintf(b, "| the same, by the workflow that paid it | %s | | before: runner 8.0, pool 5.0, autoscaler 4.4 |\n", world.PaidBy(a.ByWorkflow, jobs))
	fmt.Fprintf(b, "| Temporal Cloud price of 1,000 jobs ($%.0f per million actions) | $%.2f | $0 | ≤ $0.60 (12 actions a job) |\n",
		world.CloudPricePerMillionActions, world.CloudPriceUSD(perJob*1000))
	cpu := fmt.Sprintf("%.3f", temporal.CPU.Seconds()/float64(max(jobs, 1)))
	if postgres.Processes > 0 {
		cpu += fmt.Sprintf(" + PostgreSQL %.3f", postgres.CPU.Seconds()/float64(max(jobs, 1)))
	}
	fmt.Fprintf(b, "| Temporal server (%s) CPU seconds per job | %s | about 0.08 (ARC's controller) | ≤ 0.25 on temporal-server + PostgreSQL (0.37 before) |\n", server, cpu)
}
