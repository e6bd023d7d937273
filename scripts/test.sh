#!/usr/bin/env bash
# Runs the lint and every Go test, side by side: the lint (scripts/lint.sh),
# the packages, and the e2e package in E2E_SHARDS processes (default 1), each
# with a local stack of its own. Within a shard the e2e tests run side by
# side too (parallel(t), E2E_PARALLEL at once, default 6), each in a world of
# its own on the shard's stack (docs/development.md); a test that acts on the
# whole cluster runs alone, before the others start.
#
#   scripts/test.sh            everything (make test)
#   scripts/test.sh e2e        the full-stack packages only, ./test/... (make e2e)
#
# GO_TEST_FLAGS, E2E_SHARDS and E2E_PARALLEL come from the environment
# (E2E_SHARDS=2 E2E_PARALLEL=1, two stacks each running one test at a time,
# takes about twice as long). Each part writes its own log, printed whole when
# it ends, so the output of one part never interleaves with another's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# shellcheck source=scripts/goflags.sh
source "$root/scripts/goflags.sh"

flags=${GO_TEST_FLAGS:--count=1 -timeout 20m}
shards=${E2E_SHARDS:-1}
parallel=${E2E_PARALLEL:-6}
e2e=./test/e2e
logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT

# The e2e tests, heaviest first as listed in e2e-weights.txt (seconds measured
# on two cores); a test missing there counts as 60 s. A test that calls
# parallel(t) first thing shares its shard's time with E2E_PARALLEL others, so
# it weighs that much less; one that runs alone weighs its whole length.
# Shards are filled greedily, each test to the lightest shard; the last shard
# runs whatever the others' patterns do not name, so a test can never fall
# between shards.
mapfile -t tests < <(grep -hoE '^func (Test[A-Za-z0-9_]+)\([a-z]+ \*testing\.T\)' test/e2e/*_test.go |
	sed -E 's/^func (Test[A-Za-z0-9_]+).*/\1/' | sort -u)
declare -A weight=() side_by_side=()
while read -r name seconds; do
	[[ -z "$name" || "$name" == \#* ]] || weight[$name]=$seconds
done <test/e2e/e2e-weights.txt
while read -r name; do side_by_side[$name]=1; done < <(grep -hA1 -E '^func Test[A-Za-z0-9_]+\(t \*testing\.T\)' test/e2e/*_test.go |
	grep -B1 -E '^\s+parallel(WithRoom)?\(t' | sed -nE 's/^func (Test[A-Za-z0-9_]+).*/\1/p')
declare -a load=() named=()
for ((s = 0; s < shards; s++)); do load[s]=0; named[s]=""; done
while read -r seconds name; do
	lightest=0
	for ((s = 1; s < shards; s++)); do
		((load[s] < load[lightest])) && lightest=$s
	done
	load[lightest]=$((load[lightest] + seconds))
	named[lightest]+="${named[lightest]:+|}$name"
done < <(for name in "${tests[@]}"; do
	seconds=${weight[$name]:-60}
	[[ -z "${side_by_side[$name]:-}" ]] || seconds=$(((seconds + parallel - 1) / parallel))
	echo "$seconds $name"
done | sort -rn)

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
	start lint bash scripts/lint.sh
	# The lint runs the chart, layout and docs packages itself.
	mapfile -t others < <(go list ./... | grep -vxE "github.com/arcflow/arcflow/(test/e2e|deploy(/.*)?|tools/layout|tools/docscheck)")
fi
# shellcheck disable=SC2086
start packages go test $flags "${others[@]}"
last=$((shards - 1))
all=""
for ((s = 0; s < last; s++)); do
	# shellcheck disable=SC2086
	start "e2e-$((s + 1))" go test $flags -parallel "$parallel" -run "^(${named[s]})\$" "$e2e"
	all+="${all:+|}${named[s]}"
done
if ((shards > 1)); then
	# shellcheck disable=SC2086
	start "e2e-$shards" go test $flags -parallel "$parallel" -skip "^(${all})\$" "$e2e"
else
	# shellcheck disable=SC2086
	start "e2e-1" go test $flags -parallel "$parallel" "$e2e"
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
