package workflows

import (
	"crypto/rand"
	"crypto/sha256"
	"strconv"

	"go.temporal.io/sdk/workflow"
)

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789" // no vowels: no words in names

// randomSuffix is called only inside workflow.SideEffect, which records its result.
func randomSuffix() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b)
}

// derivedSuffix is the n-th runner name suffix of a pool's chain of runs: as
// random as the chain's first run ID, which Temporal draws at random, and the
// same on replay (and after a reset), so it needs no side effect.
func derivedSuffix(runID string, n int) string {
	sum := sha256.Sum256([]byte(runID + "/" + strconv.Itoa(n)))
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[int(sum[i])%len(suffixAlphabet)]
	}
	return string(b)
}

// newRunnerName is <pool>-<5 random characters>, like ARC's generated names; for a
// RunnerSet it is the pod name of a one-replica StatefulSet, <statefulset>-0.
func (p *poolRun) newRunnerName(ctx workflow.Context) string {
	prefix := p.state.Spec.Name
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	nameOf := func(suffix string) string {
		if p.state.Spec.Kind == "RunnerSet" {
			return prefix + "-" + suffix + "-0"
		}
		return prefix + "-" + suffix
	}
	if workflow.GetVersion(ctx, derivedNamesVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		var suffix string
		_ = workflow.SideEffect(ctx, func(workflow.Context) any { return randomSuffix() }).Get(&suffix)
		return nameOf(suffix)
	}
	// The first run's ID of the chain of continue-as-new and resets: a reset
	// run replays the names the run it resets made.
	runID := workflow.GetInfo(ctx).OriginalRunID
	for {
		p.state.NamesMade++
		name := nameOf(derivedSuffix(runID, p.state.NamesMade))
		if !p.state.hasRunner(name) {
			return name
		}
	}
}

// derivedNamesVersion marks pools that derive runner names (derivedSuffix)
// instead of recording a random one per runner: a side-effect marker per
// decision that creates runners is a Temporal Cloud action.
const derivedNamesVersion = "derived-runner-names"
