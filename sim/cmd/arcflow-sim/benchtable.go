package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// arcFigures are ARC legacy v0.27.6's measured figures and arcflow's targets
// (DESIGN.md, "Numbers to beat") for `queued` webhook -> runner pod Running.
var arcFigures = map[int][2]string{
	1:   {"3.1 s (its 3 s batch window)", "≤ 0.3 s"},
	20:  {"p50 2.5–4.8 s / p99 3.1–5.3 s", "≤ 0.5 s / ≤ 1 s"},
	100: {"p50 17–18 s / p99 21–23 s", "≤ 1 s / ≤ 2 s"},
}

func (r *burstResult) table() string {
	var b strings.Builder
	arc, ok := arcFigures[r.jobs]
	if !ok {
		arc = [2]string{"not measured", "—"}
	}
	perJob := func(v float64) string { return fmt.Sprintf("%.2f", v/float64(r.jobs)) }
	row := func(figure, arcflow, arcMeasured, target string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", figure, arcflow, arcMeasured, target)
	}
	fmt.Fprintf(&b, "\n### %d jobs at once on the %s (5 s jobs, runners register 1 s after Running, HRA min 0 / max %d, scale-down delay 30 s)\n\n", r.jobs, r.serverName, r.maxRunners)
	b.WriteString("| Figure | arcflow | ARC measured | target |\n|---|---|---|---|\n")
	row("webhook accepted → runner pod created, p50 / p95 / p99", r.webhookToPod.String(), "", "")
	row("webhook accepted → runner pod Running, p50 / p95 / p99", r.webhookToRunning.String(), arc[0], arc[1])
	for _, st := range r.steps {
		row(fmt.Sprintf("critical path: %s, p50 / p95 / p99", st.Name), st.Took.String(), "", "")
	}
	row("job queued → job started, p50 / p95 / p99", r.queuedToStarted.String(), "", "")
	row("webhook answer (after the durable signal), p50 / p95 / p99", r.webhookAnswer.String(), "1–6 ms, before anything is durable", "p99 ≤ 50 ms")
	row("Temporal signals per webhook delivery (group commit)", r.webhookSignals.PerDelivery(), "", "")
	row("the webhook's SignalWithStart call to Temporal, p50 / p99 (histogram bucket bounds)",
		fmt.Sprintf("≤ %v / ≤ %v (%d calls)", r.signalRPC.AtMost(0.5), r.signalRPC.AtMost(0.99), r.signalRPC.Calls()), "", "")
	row("last job done → no runner pods left", r.lastDoneToEmpty.Round(10*time.Millisecond).String(), "16–159 s", "≤ 35 s")
	row("runner pods created per job", perJob(float64(r.podsCreated)), "2.0", "1.00")
	row("runner pods at peak", fmt.Sprintf("%d (max %d)", r.peakPods, r.maxRunners), "21 at max 20", "never above max")
	calls, detail := 0, []string{}
	for ep, n := range r.githubCalls {
		calls += n
		detail = append(detail, fmt.Sprintf("%s %s", perJob(float64(n)), shortEndpoint(ep)))
	}
	sort.Strings(detail)
	row("GitHub calls per job", fmt.Sprintf("%s (%s)", perJob(float64(calls)), strings.Join(detail, ", ")), "single 4–5; bursts 0.02–0.2", "no more than ARC")
	writes, wdetail := 0.0, []string{}
	for k, v := range r.kubeWrites {
		if v > 0 {
			writes += v
			wdetail = append(wdetail, fmt.Sprintf("%s %s", perJob(v), k))
		}
	}
	sort.Strings(wdetail)
	row("Kubernetes writes per job (worker)", fmt.Sprintf("%s (%s)", perJob(writes), strings.Join(wdetail, ", ")), "", "")
	row("history events per runner workflow, mean / max", fmt.Sprintf("%.1f / %d (%d runs)", r.histories.Mean, r.histories.Max, r.histories.Executions), "", "")
	row("pool; autoscaler workflow: runs (continue-as-new), longest run's history",
		fmt.Sprintf("%d, %d events; %d, %d events", r.poolHistories.Executions, r.poolHistories.Max, r.autoscalerHistories.Executions, r.autoscalerHistories.Max), "", "")
	if r.allInOne {
		row("peak RSS, `arcflow all` (worker and webhook in one process)", mib(r.workerRSS),
			"44–56 MiB manager + 36–41 MiB webhook server", "≤ 90 MiB together at 100 runners")
		row("CPU seconds per job, `arcflow all`", fmt.Sprintf("%.3f", r.workerCPU.Seconds()/float64(r.jobs)), "", "")
	} else {
		row("peak RSS, worker + arcflow-webhook", fmt.Sprintf("%s + %s = %s", mib(r.workerRSS), mib(r.webhookRSS), mib(r.workerRSS+r.webhookRSS)),
			"44–56 MiB manager + 36–41 MiB webhook server", "≤ 90 MiB together at 100 runners")
		row("CPU seconds per job, worker / webhook", fmt.Sprintf("%.3f / %.3f", r.workerCPU.Seconds()/float64(r.jobs), r.webhookCPU.Seconds()/float64(r.jobs)), "", "")
	}
	if r.allInOne {
		row("RSS after the burst: anonymous (heap, stacks) + file (the binary's pages), `arcflow all`",
			fmt.Sprintf("%s + %s", mib(r.workerAnon), mib(r.workerFile)), "", "")
	} else {
		row("RSS after the burst: anonymous (heap, stacks) + file (the binary's pages), worker; webhook",
			fmt.Sprintf("%s + %s; %s + %s", mib(r.workerAnon), mib(r.workerFile), mib(r.webhookAnon), mib(r.webhookFile)), "", "")
	}
	r.costRows(row)
	row("pods deleted while busy; deliveries refused / failed", fmt.Sprintf("%d; %d / %d", r.violations, r.rejected, r.failedDlv), "", "0")
	row("wall time, first webhook → pool empty", r.total.Round(100*time.Millisecond).String(), "", "")
	return b.String()
}

func shortEndpoint(pattern string) string {
	pattern = strings.Replace(pattern, "/repos/{owner}/{repo}", "", 1)
	return strings.TrimPrefix(pattern, " ")
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// benchWebhook measures how many signed deliveries the webhook accepts per second,
// each answered only after its signal is durable in Temporal.
func benchWebhook(ctx context.Context, s *session, deliveries int) (string, error) {
	const ns = "bench-webhook"
	w, err := s.world(ctx, world.Config{Namespace: ns, Seed: 7})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	// maxReplicas 1 keeps the phase about the webhook, not about pods.
	if err := w.Apply(ctx, autoscaledPool("bench", "load-org/app", 1)); err != nil {
		return "", err
	}
	if err := s.waitAccepted(ctx, ns, "bench"); err != nil {
		return "", err
	}
	sender := w.Sender
	sender.Workers = 16
	start := time.Now()
	for i := range deliveries {
		action := "queued"
		if i%2 == 1 {
			action = "completed"
		}
		id := int64(1_000_000 + i/2)
		sender.Send(fakegithub.JobEvent{Action: action, Job: fakegithub.JobInfo{
			ID: id, RunID: id, Repo: "load-org/app", Name: "load", Labels: []string{"self-hosted", "linux", "bench"}, Status: action, CreatedAt: start,
		}})
	}
	if err := sender.Flush(ctx); err != nil {
		return "", err
	}
	took := time.Since(start)
	stats := sender.Stats()
	rss := w.Webhook.PeakRSS()
	signals, err := world.WebhookSignalCounts(ctx, w.WebhookMetricsURL)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Webhook throughput (%d signed deliveries, 16 at a time)\n\n", deliveries)
	b.WriteString("| Figure | arcflow | ARC measured | target |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| deliveries accepted per second | %.0f (%d accepted, %d refused, %d failed in %s) | | |\n",
		float64(stats.Accepted)/took.Seconds(), stats.Accepted, stats.Rejected, stats.Failed, took.Round(10*time.Millisecond))
	fmt.Fprintf(&b, "| answer latency, p50 / p95 / p99 | %s | 1–6 ms, before anything is durable | p99 ≤ 50 ms |\n", world.PercentilesOf(stats.Latencies))
	fmt.Fprintf(&b, "| Temporal signals per delivery (group commit) | %s | | |\n", signals.PerDelivery())
	fmt.Fprintf(&b, "| webhook peak RSS | %s | 36–41 MiB | |\n", mib(rss))
	return b.String(), nil
}

// writeReport writes a run's report, headed by the machine and how loaded
// it was since started (readCPUTimes at the run's start).
func writeReport(path, title, body string, started cpuTimes) error {
	header := fmt.Sprintf("# arcflow %s, %s\n\nMachine: %s.%s Every figure is measured on this run; ARC's are from DESIGN.md.\n",
		title, time.Now().UTC().Format(time.RFC3339), machine(), loadSince(started, readCPUTimes()))
	if err := os.WriteFile(path, []byte(header+body), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Printf("\nresults written to %s\n", path)
	return nil
}
