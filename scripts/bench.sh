#!/usr/bin/env bash
# make bench: latency, cost and memory tables per workload size, beside ARC's figures.
set -euo pipefail
exec go run ./sim/cmd/arcflow-sim bench "$@"
