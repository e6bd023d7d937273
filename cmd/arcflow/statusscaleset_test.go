//go:build !webhookonly

package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows"
)

// A listener's row says which set, who holds its session, and whether its
// jobs wait: assigned beyond running is jobs without a runner.
func TestAScaleSetsStatusRow(t *testing.T) {
	const id = "scaleset/ci/runnerdeployment/linux"
	spec := workflows.ScaleSetSpec{Namespace: "ci", Kind: "RunnerDeployment", Pool: "linux", Name: "arc-linux"}
	stats := calls.ScaleSetStatistics{Assigned: 5, Running: 3, Registered: 4, Busy: 3, Idle: 1}
	for _, tc := range []struct {
		state workflows.ScaleSetState
		want  string
	}{
		{workflows.ScaleSetState{Spec: spec, ScaleSetID: 42, SessionID: "s-1", Statistics: stats},
			"scaleset\tci/linux\t-\t4\tset arc-linux (id 42), session held; 5 assigned, 3 running, 1 idle\t" + id},
		{workflows.ScaleSetState{Spec: spec, ScaleSetID: 42, HeldBy: "arc-runner-set-754b578d-listener", Statistics: stats},
			"scaleset\tci/linux\t-\t4\tset arc-linux (id 42), session held by another listener: arc-runner-set-754b578d-listener; 5 assigned, 3 running, 1 idle\t" + id},
		{workflows.ScaleSetState{Spec: spec, ScaleSetID: 42, Held: true},
			"scaleset\tci/linux\t-\t0\tset arc-linux (id 42), no session (drained); 0 assigned, 0 running, 0 idle\t" + id},
		{workflows.ScaleSetState{Spec: spec},
			"scaleset\tci/linux\t-\t0\tset arc-linux not found or made yet, no session; 0 assigned, 0 running, 0 idle\t" + id},
		{workflows.ScaleSetState{Spec: spec, ScaleSetID: 42, Deleting: true},
			"scaleset\tci/linux\t-\t0\tdeleting; set arc-linux (id 42), no session; 0 assigned, 0 running, 0 idle\t" + id},
	} {
		require.Equal(t, tc.want, scaleSetRow(id, tc.state))
	}
}
