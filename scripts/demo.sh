#!/usr/bin/env bash
# make demo: arcflow end to end on local defaults. Ctrl-C stops everything it started
# and exits 0.
set -euo pipefail
# Build first and run the binary itself, not through go run, so its exit status is
# make's.
go build -o bin/arcflow-sim ./sim/cmd/arcflow-sim
# On a terminal, job control runs the demo as the terminal's foreground process
# group: Ctrl-C then reaches the demo alone, which stops everything and exits 0.
# Without it, make would get the SIGINT too and end itself by it (status 130).
if [ -t 0 ]; then set -m; fi
bin/arcflow-sim demo "$@"
