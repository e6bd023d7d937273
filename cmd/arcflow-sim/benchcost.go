package main

import (
	"fmt"

	"github.com/arcflow/arcflow/internal/simworld"
)

// costRows are what a burst costs in Temporal: Temporal Cloud's billable Actions
// and their list price, and the server's CPU and memory on this machine.
func (r *burstResult) costRows(row func(figure, arcflow, arcMeasured, target string)) {
	jobs := float64(r.jobs)
	from := r.actions.From
	row("Temporal Cloud actions per job ("+simworld.ActionsRuleURL+")",
		fmt.Sprintf("%.2f (%d for %d jobs over %d workflow runs: %s); %d more once, as the autoscaler and pool came up",
			float64(from.Total())/jobs, from.Total(), r.jobs, r.actions.Runs, from.PerUnit(r.jobs), r.actions.Before.Total()), "", "")
	row(fmt.Sprintf("Temporal Cloud price of 1,000 jobs ($%.0f per million actions, Pay-As-You-Go first tier)", simworld.CloudPricePerMillionActions),
		fmt.Sprintf("$%.2f", simworld.CloudPriceUSD(float64(from.Total())/jobs*1000)), "", "")
	row(fmt.Sprintf("Temporal server (%s) CPU seconds per job; peak RSS since the stack started", r.serverName),
		fmt.Sprintf("%.3f; %s", r.temporalServer.CPU.Seconds()/jobs, mib(r.temporalServer.PeakRSS)), "", "")
	if r.postgres.Processes > 0 {
		row("PostgreSQL CPU seconds per job; memory after the burst (PSS over its processes)",
			fmt.Sprintf("%.3f; %s (%d processes)", r.postgres.CPU.Seconds()/jobs, mib(r.postgres.PSS), r.postgres.Processes), "", "")
	}
}
