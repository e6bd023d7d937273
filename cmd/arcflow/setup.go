//go:build !webhookonly

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arcflow/arcflow/workflows/contract"
)

// defaultNamespaceRetention is how long a namespace that setup registers
// keeps closed workflows' histories: long enough to read a runner's life in
// the Web UI after a weekend.
const defaultNamespaceRetention = 72 * time.Hour

// runSetup is `arcflow setup`: it registers the Temporal namespace when it is
// missing and arcflow's custom search attributes in it. It is idempotent; the
// dev server gets both at start.
func runSetup(args []string) error {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arcflow setup\n\nRegisters the Temporal namespace when it is missing, and the search attributes arcflow's workflows set\n(ArcflowKind, ArcflowPool, ArcflowScope, ArcflowRunnerName, ArcflowRunnerState) in it. Safe to run again.\n`arcflow worker --setup-temporal` does the same at start.\n\nflags:")
		fs.PrintDefaults()
	}
	temporalFlags := addTemporalFlags(fs)
	retention := fs.Duration("namespace-retention", defaultNamespaceRetention, "retention of the namespace, when setup registers it")
	_ = fs.Parse(args)
	tc, err := temporalFlags.dial(newLogger("error", "text"))
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lines, err := setUpTemporal(ctx, tc, temporalFlags.namespace, *retention)
	for _, line := range lines {
		fmt.Println(line)
	}
	return err
}

// setUpTemporal makes namespace ready for arcflow: registered (with
// retention) when missing, and with every search attribute arcflow sets, of
// type Keyword. It returns a line per thing it looked at.
func setUpTemporal(ctx context.Context, tc client.Client, namespace string, retention time.Duration) ([]string, error) {
	var lines []string
	_, err := tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	var missing *serviceerror.NamespaceNotFound
	switch {
	case errors.As(err, &missing):
		if _, err := tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(retention),
			Description: "arcflow: GitHub Actions runner autoscaling",
		}); err != nil {
			var exists *serviceerror.NamespaceAlreadyExists
			if !errors.As(err, &exists) {
				return lines, fmt.Errorf("register namespace %s (on Temporal Cloud, create it in the Cloud console): %w", namespace, err)
			}
		}
		lines = append(lines, fmt.Sprintf("%-20s namespace added (retention %s)", namespace, retention))
	case err != nil:
		return lines, fmt.Errorf("describe namespace %s: %w", namespace, err)
	default:
		lines = append(lines, fmt.Sprintf("%-20s namespace present", namespace))
	}
	// A namespace registered a moment ago is not served until the server's
	// namespace cache refreshes (about 10 s): its search attributes wait.
	for wait := time.Second; ; wait = min(2*wait, 5*time.Second) {
		attrLines, err := addSearchAttributes(ctx, tc, namespace)
		if !errors.As(err, &missing) {
			return append(lines, attrLines...), err
		}
		select {
		case <-ctx.Done():
			return lines, fmt.Errorf("namespace %s registered but not served yet: %w", namespace, err)
		case <-time.After(wait):
		}
	}
}

// addSearchAttributes registers the search attributes namespace lacks.
func addSearchAttributes(ctx context.Context, tc client.Client, namespace string) ([]string, error) {
	ops := tc.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %s: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	var names []string
	for name := range contract.SearchAttributeTypes() {
		names = append(names, name)
		if current, ok := have.GetCustomAttributes()[name]; ok {
			if current != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
				return nil, fmt.Errorf("search attribute %s exists with type %s; arcflow needs Keyword", name, current)
			}
			continue
		}
		missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	sort.Strings(names)
	if len(missing) > 0 {
		if _, err := ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: namespace, SearchAttributes: missing,
		}); err != nil {
			return nil, fmt.Errorf("add search attributes to namespace %s: %w", namespace, err)
		}
	}
	var lines []string
	for _, name := range names {
		state := "present"
		if _, added := missing[name]; added {
			state = "added"
		}
		lines = append(lines, fmt.Sprintf("%-20s Keyword  %s", name, state))
	}
	return lines, nil
}
