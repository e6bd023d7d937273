// Package replaytest records the histories that workflows/replay_test.go replays.
//
// Its test starts two Temporal dev servers of the local stack (one of them suggests
// continue-as-new after a few dozen events), a worker with the real workflows and
// fake activities under the real activity names, and drives runner, pool and
// autoscaler workflows through their paths with signals. Each history is exported
// as the JSON of `temporal workflow show -o json`.
//
// In `make test` the histories go to a temporary directory and are replayed at
// once, so the recorder cannot rot. `make record-histories` writes the ones not
// yet in workflows/testdata/histories; an existing history is never overwritten,
// because it stands for workflows already running in somebody's cluster.
package replaytest
