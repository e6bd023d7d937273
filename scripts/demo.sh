#!/usr/bin/env bash
# make demo: arcflow end to end on local defaults. Ctrl-C stops everything it started.
set -euo pipefail
exec go run ./cmd/arcflow-sim demo "$@"
