//go:build !webhookonly

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// runStatus is `arcflow status`: autoscalers, pools and scale set listeners from
// their `state` queries, runners counted by state from the ArcflowRunnerState
// search attribute.
func runStatus(args []string) error {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arcflow status [-n NAMESPACE]\n\nA table of autoscalers, pools and their runners, and runner scale sets, from the workflows' state queries.\n\nflags:")
		fs.PrintDefaults()
	}
	namespace := fs.String("n", "", "only this Kubernetes namespace (default: all)")
	temporalFlags := addTemporalFlags(fs)
	_ = fs.Parse(args)
	tc, err := temporalFlags.dial(newLogger("error", "text"))
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	runnerStates, err := runnerStatesByPool(ctx, tc, *namespace)
	if err != nil {
		return err
	}
	out := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(out, "KIND\tNAMESPACE/NAME\tDESIRED\tRUNNERS\tDETAIL\tWORKFLOW")
	ids, err := running(ctx, tc, "AutoscalerWorkflow", "hra/", *namespace)
	if err != nil {
		return err
	}
	for _, id := range ids {
		var s workflows.AutoscalerState
		if err := query(ctx, tc, id, &s); err != nil {
			fmt.Fprintf(out, "hra\t%s\t?\t\tstate query failed: %v\t%s\n", strings.TrimPrefix(id, "hra/"), err, id)
			continue
		}
		detail := fmt.Sprintf("min %d max %d, %d reservations", s.Spec.Min, s.Spec.Max, len(s.Reservations.Active))
		if s.Force != nil {
			detail += fmt.Sprintf(", forced to %d until %s", s.Force.Replicas, s.Force.Until.Format(time.RFC3339))
		}
		fmt.Fprintf(out, "hra\t%s/%s\t%s\t\t%s → %s\t%s\n", s.Spec.Namespace, s.Spec.Name, intOrDash(s.Desired), detail, s.Spec.TargetKind+"/"+s.Spec.TargetName, id)
	}
	if ids, err = running(ctx, tc, "PoolWorkflow", "pool/", *namespace); err != nil {
		return err
	}
	for _, id := range ids {
		var s workflows.PoolState
		if err := query(ctx, tc, id, &s); err != nil {
			fmt.Fprintf(out, "pool\t%s\t?\t\tstate query failed: %v\t%s\n", strings.TrimPrefix(id, "pool/"), err, id)
			continue
		}
		pool := s.Spec.Namespace + "/" + s.Spec.Name
		detail := runnerStates[pool]
		if n := takenOver(s.Runners); n > 0 {
			// Until they end: runners of ARC's, or of a Temporal whose store was lost.
			detail = strings.TrimPrefix(detail+fmt.Sprintf("; %d taken over", n), "; ")
		}
		if s.Deleting {
			detail = strings.TrimSuffix("deleting, waiting for its runners; "+detail, "; ")
			if !s.DeletingSince.IsZero() && !s.DeletionForced {
				detail += ", busy ones until " + s.DeletingSince.Add(s.Spec.DeletionGrace()).UTC().Format(time.RFC3339)
			}
		}
		fmt.Fprintf(out, "%s\t%s\t%d\t%d\t%s\t%s\n", strings.ToLower(s.Spec.Kind), pool, s.Desired(), len(s.Runners), detail, id)
	}
	if err := printScaleSets(ctx, tc, out, *namespace); err != nil {
		return err
	}
	return out.Flush()
}

// takenOver counts the pool's runners it took over rather than created.
func takenOver(runners []workflows.PoolRunner) int {
	n := 0
	for _, r := range runners {
		if r.Adopted {
			n++
		}
	}
	return n
}

func intOrDash(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// running lists the IDs of running workflows of a type, optionally in one namespace.
func running(ctx context.Context, tc client.Client, workflowType, prefix, namespace string) ([]string, error) {
	q := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", workflowType)
	if namespace != "" {
		q += fmt.Sprintf(" AND WorkflowId STARTS_WITH '%s%s/'", prefix, namespace)
	}
	var ids []string
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list %s workflows: %w", workflowType, err)
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func query(ctx context.Context, tc client.Client, id string, into any) error {
	v, err := tc.QueryWorkflow(ctx, id, "", contract.QueryState)
	if err != nil {
		return err
	}
	return v.Get(into)
}

// runnerStatesByPool counts running runner workflows by pool and state, e.g.
// "Busy 3, Idle 1".
func runnerStatesByPool(ctx context.Context, tc client.Client, namespace string) (map[string]string, error) {
	counts, err := runnerCounts(ctx, tc, namespace)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for pool, byState := range counts {
		out[pool] = formatCounts(byState)
	}
	return out, nil
}

// runnerCounts counts running runner workflows by pool and state, from the
// ArcflowPool and ArcflowRunnerState search attributes.
func runnerCounts(ctx context.Context, tc client.Client, namespace string) (map[string]map[string]int, error) {
	q := "WorkflowType = 'RunnerWorkflow' AND ExecutionStatus = 'Running'"
	if namespace != "" {
		q += fmt.Sprintf(" AND WorkflowId STARTS_WITH 'runner/%s/'", namespace)
	}
	counts := map[string]map[string]int{}
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list runner workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			fields := e.GetSearchAttributes().GetIndexedFields()
			pool, state := keyword(fields[contract.SearchAttrPool.GetName()]), keyword(fields[contract.SearchAttrRunnerState.GetName()])
			if state == "" {
				state = "Creating"
			}
			if counts[pool] == nil {
				counts[pool] = map[string]int{}
			}
			counts[pool][state]++
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return counts, nil
}

// formatCounts writes counts by state as "Busy 3, Idle 1".
func formatCounts(byState map[string]int) string {
	var parts []string
	for state, n := range byState {
		parts = append(parts, fmt.Sprintf("%s %d", state, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func keyword(p *commonpb.Payload) string {
	var s string
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &s) != nil {
		return ""
	}
	return s
}
