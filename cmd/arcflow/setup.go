//go:build !webhookonly

package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
)

// runSetup is `arcflow setup`: it registers arcflow's custom search attributes in
// the Temporal namespace. It is idempotent; the dev server gets them at start.
func runSetup(args []string) error {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arcflow setup\n\nRegisters the search attributes arcflow's workflows set (ArcflowKind, ArcflowPool, ArcflowScope,\nArcflowRunnerName, ArcflowRunnerState) in the Temporal namespace. Safe to run again.\n\nflags:")
		fs.PrintDefaults()
	}
	temporalFlags := addTemporalFlags(fs)
	_ = fs.Parse(args)
	tc, err := temporalFlags.dial(newLogger("error", "text"))
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ops := tc.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: temporalFlags.namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %s: %w", temporalFlags.namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	var names []string
	for name := range contract.SearchAttributeTypes() {
		names = append(names, name)
		if current, ok := have.GetCustomAttributes()[name]; ok {
			if current != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
				return fmt.Errorf("search attribute %s exists with type %s; arcflow needs Keyword", name, current)
			}
			continue
		}
		missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	sort.Strings(names)
	if len(missing) > 0 {
		if _, err := ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: temporalFlags.namespace, SearchAttributes: missing,
		}); err != nil {
			return fmt.Errorf("add search attributes to namespace %s: %w", temporalFlags.namespace, err)
		}
	}
	for _, name := range names {
		state := "present"
		if _, added := missing[name]; added {
			state = "added"
		}
		fmt.Printf("%-20s Keyword  %s\n", name, state)
	}
	return nil
}
