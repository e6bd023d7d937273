package workflows_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/replaytest"
)

// Histories recorded on a real Temporal server (workflows/replaytest) are replayed
// against the code as it is now. A change that makes a workflow issue other
// commands than an older version did breaks the workflows that version started;
// it fails here until it is guarded with workflow.GetVersion.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories: run `make record-histories`")

	types := map[string]int{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			info, err := replaytest.ReadHistoryInfo(path)
			require.NoError(t, err)
			require.True(t, info.Closed, "a recorded run must have completed or continued as new")
			types[info.WorkflowType]++
			if err := replaytest.ReplayFile(path); err != nil {
				t.Fatalf("%s no longer replays: the workflow code changed in a way that breaks running %s workflows; "+
					"guard the change with workflow.GetVersion (README, Upgrading arcflow)\n%v", filepath.Base(path), info.WorkflowType, err)
			}
		})
	}
	for _, typ := range replaytest.WorkflowTypes() {
		require.Positive(t, types[typ], "no recorded history of %s", typ)
	}
}
