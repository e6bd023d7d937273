package activities

import (
	"context"
	"fmt"

	"github.com/arcflow/arcflow/github"
)

// CredentialSets gives the GitHub client of a githubAPICredentialsFrom Secret,
// "namespace/name" (credentials.Resolver). The Secret is read here, in
// activities, never in a workflow.
type CredentialSets interface {
	For(ctx context.Context, ref string) (*github.Client, error)
}

// clientFor is the client that acts for ref: the worker's own (fallback) when
// ref is empty or no credential sets are configured.
func clientFor[T any](ctx context.Context, sets CredentialSets, fallback T, ref string) (T, error) {
	if ref == "" || sets == nil {
		return fallback, nil
	}
	client, err := sets.For(ctx, ref)
	if err != nil {
		var none T
		return none, fmt.Errorf("github credentials: %w", err)
	}
	return any(client).(T), nil
}

func (g *GitHub) registry(ctx context.Context, scope github.Scope) (RunnerRegistry, error) {
	return clientFor(ctx, g.Credentials, g.Registry, scope.Credentials)
}

func (g *GitHub) jobs(ctx context.Context, credentials string) (JobLister, error) {
	return clientFor(ctx, g.Credentials, g.Jobs, credentials)
}

func (k *Kubernetes) tokens(ctx context.Context, scope github.Scope) (RunnerRegistry, error) {
	return clientFor(ctx, k.Credentials, k.Tokens, scope.Credentials)
}
