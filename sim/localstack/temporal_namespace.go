package localstack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/util/wait"
)

// clusterNamespace is the namespace arcflow uses by default. A cluster, unlike the
// dev server, creates only its system namespace; an operator registers the rest.
const clusterNamespace = "default"

// clusterRetention keeps closed workflows a day, long enough to inspect a run.
const clusterRetention = 24 * time.Hour

// registerNamespace registers a namespace and its custom search attributes (name
// to type: Keyword, Int, ...) and waits until the frontend lists all of them, so
// the first workflow started with them is accepted.
func registerNamespace(ctx context.Context, address, namespace string, searchAttributes map[string]string) error {
	wanted := map[string]enumspb.IndexedValueType{}
	for name, typ := range searchAttributes {
		t, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil {
			return fmt.Errorf("search attribute %s: %w", name, err)
		}
		wanted[name] = t
	}
	c, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: quietLogger{}})
	if err != nil {
		return fmt.Errorf("connect to temporal-server at %s: %w", address, err)
	}
	defer c.Close()
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(clusterRetention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register namespace %s: %w", namespace, err)
	}
	if len(wanted) > 0 {
		if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: namespace, SearchAttributes: wanted,
		}); err != nil && !errors.As(err, new(*serviceerror.AlreadyExists)) {
			return fmt.Errorf("add search attributes %v to namespace %s: %w", slices.Sorted(maps.Keys(wanted)), namespace, err)
		}
	}
	// Each service caches namespaces and refreshes them every few seconds.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if err != nil {
			return false, nil
		}
		for name, t := range wanted {
			if have.GetCustomAttributes()[name] != t {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s with search attributes %v not served: %w", namespace, slices.Sorted(maps.Keys(wanted)), err)
	}
	return nil
}

// AddTemporalNamespace registers a namespace on the stack's Temporal server with
// the stack's search attributes, and waits until it serves them. A test gives
// itself one, so that its workflows, task queue and workers are its own while
// other tests run beside it on the same server. Registering one that exists
// does nothing.
func (s *Stack) AddTemporalNamespace(ctx context.Context, name string) error {
	return registerNamespace(ctx, s.TemporalAddress, name, s.searchAttributes)
}
