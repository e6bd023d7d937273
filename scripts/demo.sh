#!/usr/bin/env bash
# make demo: arcflow end to end on local defaults. Ctrl-C stops everything it started
# and exits 0.
set -euo pipefail
# Build first and exec the binary, so the interrupt reaches the demo itself and its
# exit status is make's (go run would stand between them).
go build -o bin/arcflow-sim ./cmd/arcflow-sim
exec bin/arcflow-sim demo "$@"
