//go:build !webhookonly

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// printScaleSets writes a row per scale set listener: its pool, the service's
// registered runners, and the set, its session and the service's counts of
// the last message, which say at once whether jobs wait for runners.
func printScaleSets(ctx context.Context, tc client.Client, out io.Writer, namespace string) error {
	ids, err := running(ctx, tc, contract.ScaleSetWorkflowType, "scaleset/", namespace)
	if err != nil {
		return err
	}
	for _, id := range ids {
		var s workflows.ScaleSetState
		if err := query(ctx, tc, id, &s); err != nil {
			fmt.Fprintf(out, "scaleset\t%s\t-\t\tstate query failed: %v\t%s\n", strings.TrimPrefix(id, "scaleset/"), err, id)
			continue
		}
		fmt.Fprintln(out, scaleSetRow(id, s))
	}
	return nil
}

// scaleSetRow is a listener's row: DESIRED is the HRA's (its own row), so
// "-"; RUNNERS the runners the service counts as registered in the set.
func scaleSetRow(id string, s workflows.ScaleSetState) string {
	st := s.Statistics
	detail := fmt.Sprintf("%s, %s; %d assigned, %d running, %d idle", scaleSetOf(s), sessionOf(s), st.Assigned, st.Running, st.Idle)
	if s.Deleting {
		detail = "deleting; " + detail
	}
	return fmt.Sprintf("scaleset\t%s/%s\t-\t%d\t%s\t%s", s.Spec.Namespace, s.Spec.Pool, st.Registered, detail, id)
}

func scaleSetOf(s workflows.ScaleSetState) string {
	if s.ScaleSetID == 0 {
		return fmt.Sprintf("set %s not found or made yet", s.Spec.Name)
	}
	return fmt.Sprintf("set %s (id %d)", s.Spec.Name, s.ScaleSetID)
}

// sessionOf says who holds the set's session: this listener, another one
// (the service's words), nobody while `arcflow drain` holds the listener, or
// nobody yet.
func sessionOf(s workflows.ScaleSetState) string {
	switch {
	case s.Held:
		return "no session (drained)"
	case s.SessionID != "":
		return "session held"
	case s.HeldBy != "":
		return "session held by another listener: " + s.HeldBy
	}
	return "no session"
}
