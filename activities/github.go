package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/arcflow/arcflow/github"
)

// RunnerRegistry is the part of the GitHub client the activities use.
type RunnerRegistry interface {
	// SharedRunners is the scope's runner list shared by the whole process,
	// read at most once per the client's runner-list interval.
	SharedRunners(ctx context.Context, scope github.Scope) ([]github.Runner, error)
	// FreshRunners is the list read now; it becomes the shared one.
	FreshRunners(ctx context.Context, scope github.Scope) ([]github.Runner, error)
	FindRunner(ctx context.Context, scope github.Scope, name string) (github.Runner, bool, error)
	FindRunnerFresh(ctx context.Context, scope github.Scope, name string) (github.Runner, bool, error)
	FindRunnerPatient(ctx context.Context, scope github.Scope, name string) (github.Runner, bool, error)
	RemoveRunner(ctx context.Context, scope github.Scope, id int64) error
	RegistrationToken(ctx context.Context, scope github.Scope) (github.RegistrationToken, error)
	GenerateJITConfig(ctx context.Context, scope github.Scope, in github.JITRequest) (github.JITConfig, error)
}

// GitHub holds the GitHub activities. Register one value with the worker.
type GitHub struct {
	// Registry and Jobs are the worker's own client; Credentials, when set,
	// gives the client of a scope's githubAPICredentialsFrom Secret.
	Registry    RunnerRegistry
	Jobs        JobLister
	Credentials CredentialSets
	// Reruns re-runs jobs lost to infrastructure (rerun.go).
	Reruns JobRerunner

	// knownRuns are the runs the process's autoscalers knew at their last
	// reconcile (knownruns.go).
	knownRuns knownRuns
}

// FindRunner looks a runner up by name through the shared HTTP cache.
func (g *GitHub) FindRunner(ctx context.Context, in FindRunnerInput) (FindRunnerOutput, error) {
	registry, err := g.registry(ctx, in.Scope)
	if err != nil {
		return FindRunnerOutput{}, err
	}
	find, purpose := registry.FindRunner, "registration"
	switch {
	case in.Fresh:
		find, purpose = registry.FindRunnerFresh, "fresh"
	case in.Patient:
		find, purpose = registry.FindRunnerPatient, "patient-registration"
	}
	ctx = github.WithPurpose(ctx, purpose)
	r, found, err := find(ctx, in.Scope, in.Name)
	if err != nil {
		return FindRunnerOutput{}, githubError(fmt.Errorf("find runner %s: %w", in.Name, err))
	}
	return FindRunnerOutput{Found: found, ID: r.ID, Busy: r.Busy, Online: r.Status == "online"}, nil
}

// RemoveRunner unregisters a runner. A runner that is already gone is success; a
// busy one fails with ErrTypeRunnerBusy and a rate limit with ErrTypeRateLimited,
// both non-retryable so the workflow decides how long to wait.
func (g *GitHub) RemoveRunner(ctx context.Context, in RemoveRunnerInput) (RemoveRunnerOutput, error) {
	registry, err := g.registry(ctx, in.Scope)
	if err != nil {
		return RemoveRunnerOutput{}, err
	}
	err = registry.RemoveRunner(ctx, in.Scope, in.ID)
	if errors.Is(err, github.ErrNotFound) {
		return RemoveRunnerOutput{AlreadyGone: true}, nil
	}
	if err != nil {
		return RemoveRunnerOutput{}, githubError(fmt.Errorf("remove runner %s: %w", in.Name, err))
	}
	return RemoveRunnerOutput{}, nil
}

// RunnerBusy reports which of the named runners GitHub lists as busy, from the
// scope's shared list: no call when another runner or pool of the scope read it
// within the interval. A flag that is stale only orders the pool's choice of
// runners to stop: RemoveRunner's 422 keeps a runner that took a job since.
func (g *GitHub) RunnerBusy(ctx context.Context, in RunnerBusyInput) (map[string]bool, error) {
	listed, err := g.listedRunners(ctx, in, "busy")
	if err != nil {
		return nil, err
	}
	busy := map[string]bool{}
	for name, r := range listed {
		if r.Busy {
			busy[name] = true
		}
	}
	return busy, nil
}

// listedRunners are the named runners the scope's shared list holds, by name;
// with in.Fresh, the list read now (read for purpose otherwise).
func (g *GitHub) listedRunners(ctx context.Context, in RunnerBusyInput, purpose string) (map[string]github.Runner, error) {
	registry, err := g.registry(ctx, in.Scope)
	if err != nil {
		return nil, err
	}
	list := registry.SharedRunners
	if in.Fresh && len(in.Names) > 0 {
		list, purpose = registry.FreshRunners, "fresh"
	}
	runners, err := list(github.WithPurpose(ctx, purpose), in.Scope)
	if err != nil {
		return nil, githubError(fmt.Errorf("list runners of %s: %w", in.Scope, err))
	}
	wanted := map[string]bool{}
	for _, n := range in.Names {
		wanted[n] = true
	}
	listed := map[string]github.Runner{}
	for _, r := range runners {
		if wanted[r.Name] {
			listed[r.Name] = r
		}
	}
	return listed, nil
}
