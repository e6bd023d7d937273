#!/usr/bin/env bash
# make bench: benchmarks against ARC's measured figures.
set -euo pipefail
echo "make bench: not yet. The benchmarks need the workflows and the simulator, which are not built yet."
