#!/usr/bin/env bash
# gofmt, go vet, and generated files that match their sources.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...
go vet -tags webhookonly ./cmd/arcflow # the webhook server alone (arcflow-webhook)

# A clone holds source: no tracked file over 1 MB (a build output committed by
# accident is the usual culprit; generated CRDs and fixtures stay well under it).
sizes=$(git ls-files -z 2>/dev/null | xargs -0 -r stat -c '%s %n' 2>/dev/null | sort -n)
large=$(awk '$1 > 1048576 {print "  " $2 " (" $1 " bytes)"}' <<<"$sizes")
if [ -n "$large" ]; then
	echo "tracked files over 1 MB:" >&2; echo "$large" >&2; exit 1
fi
if [ -n "$sizes" ]; then
	echo "lint: no tracked file over 1 MB (largest: $(tail -n 1 <<<"$sizes" | awk '{print $2 ", " $1 " bytes"}'))"
fi

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/api/v1alpha1" "$tmp/deploy/crds"
bash scripts/generate.sh "$tmp"
if ! diff -q "$tmp/api/v1alpha1/zz_generated.deepcopy.go" api/v1alpha1/zz_generated.deepcopy.go >/dev/null \
	|| ! diff -rq "$tmp/deploy/crds" deploy/crds >/dev/null; then
	echo "generated files are stale: run make generate" >&2; exit 1
fi
for copy in deploy/helm/arcflow/crds deploy/kustomize/base/crds; do
	if ! diff -rq deploy/crds "$copy" >/dev/null; then
		echo "$copy differs from deploy/crds: run make generate" >&2; exit 1
	fi
done
echo "lint: ok"
