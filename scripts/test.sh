#!/usr/bin/env bash
# Runs every Go test: the e2e package in E2E_SHARDS processes side by side,
# each with a local stack of its own, beside the other packages. The e2e tests
# spend most of their time waiting on timers and jobs, not on the CPU, so two
# shards roughly halve the wall time of `make test` even on two cores; four
# were faster once and then failed on timeouts, the machine overloaded.
#
#   scripts/test.sh            everything (make test)
#   scripts/test.sh e2e        the full-stack packages only, ./test/... (make e2e)
#
# GO_TEST_FLAGS and E2E_SHARDS (default 2) come from the environment. Each
# part writes its own log, printed whole when it ends, so the output of one
# part never interleaves with another's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

flags=${GO_TEST_FLAGS:--count=1 -timeout 20m}
shards=${E2E_SHARDS:-2}
e2e=./test/e2e
logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT

# The e2e tests, heaviest first as listed in e2e-weights.txt (seconds measured
# on two cores); a test missing there counts as 60 s. Shards are filled
# greedily, each test to the lightest shard; the last shard runs whatever the
# others' patterns do not name, so a test can never fall between shards.
mapfile -t tests < <(grep -hoE '^func (Test[A-Za-z0-9_]+)\([a-z]+ \*testing\.T\)' test/e2e/*_test.go |
	sed -E 's/^func (Test[A-Za-z0-9_]+).*/\1/' | sort -u)
declare -A weight=()
while read -r name seconds; do
	[[ -z "$name" || "$name" == \#* ]] || weight[$name]=$seconds
done <test/e2e/e2e-weights.txt
declare -a load=() named=()
for ((s = 0; s < shards; s++)); do load[s]=0; named[s]=""; done
while read -r seconds name; do
	lightest=0
	for ((s = 1; s < shards; s++)); do
		((load[s] < load[lightest])) && lightest=$s
	done
	load[lightest]=$((load[lightest] + seconds))
	named[lightest]+="${named[lightest]:+|}$name"
done < <(for name in "${tests[@]}"; do echo "${weight[$name]:-60} $name"; done | sort -rn)

pids=() parts=()
start() { # start NAME COMMAND...: one part in the background, its output in its log
	local name=$1; shift
	parts+=("$name")
	# The status is written whatever it is: under set -e a failing command
	# would end the subshell before a plain `echo $?` ran.
	(
		rc=0
		"$@" >"$logs/$name.log" 2>&1 || rc=$?
		echo "$rc" >"$logs/$name.rc"
	) &
	pids+=($!)
}

if [[ "${1:-all}" == e2e ]]; then
	others=(./test/cluster)
else
	mapfile -t others < <(go list ./... | grep -vx "github.com/arcflow/arcflow/test/e2e")
fi
# shellcheck disable=SC2086
start packages go test $flags "${others[@]}"
last=$((shards - 1))
all=""
for ((s = 0; s < last; s++)); do
	# shellcheck disable=SC2086
	start "e2e-$((s + 1))" go test $flags -run "^(${named[s]})\$" "$e2e"
	all+="${all:+|}${named[s]}"
done
if ((shards > 1)); then
	# shellcheck disable=SC2086
	start "e2e-$shards" go test $flags -skip "^(${all})\$" "$e2e"
else
	# shellcheck disable=SC2086
	start "e2e-1" go test $flags "$e2e"
fi

failed=()
for i in "${!pids[@]}"; do
	wait "${pids[i]}" || true
	name=${parts[i]}
	echo "=== $name"
	cat "$logs/$name.log"
	[[ "$(cat "$logs/$name.rc")" == 0 ]] || failed+=("$name")
done
if ((${#failed[@]})); then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "all tests passed (${parts[*]})"
