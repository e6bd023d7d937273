#!/usr/bin/env bash
# gofmt, go vet, generated files that match their sources, the alert rules
# (promtool), the Helm chart and kustomize components (go test ./deploy/...),
# the import rules (go test ./tools/layout/) and the docs (go test ./tools/docscheck/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# shellcheck source=scripts/goflags.sh
source "$root/scripts/goflags.sh"

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
# The Grafana dashboard's copies (make generate writes them).
for copy in deploy/helm/arcflow/files/arcflow-dashboard.json deploy/kustomize/components/dashboard/arcflow-dashboard.json; do
	if ! cmp -s deploy/monitoring/arcflow-dashboard.json "$copy"; then
		echo "$copy differs from deploy/monitoring/arcflow-dashboard.json: run make generate" >&2; exit 1
	fi
done

# The alert rules: promtool's checks and its unit tests (each alert fires on the
# series of its problem, not on healthy ones).
promtool="$root/.tools/bin/promtool"
"$promtool" check rules deploy/monitoring/arcflow-alerts.yaml
"$promtool" test rules deploy/monitoring/arcflow-alerts_test.yaml

# The Helm chart and the kustomize components: rendered with defaults and every
# option, their objects' references to each other, the alert rules generated from
# the chart, the dashboard's queries parsed, and a server-side dry run on a local
# kube-apiserver with the Prometheus Operator's CRDs (see deploy/doc.go).
go test -count=1 ./deploy/...

# The layout's import rules: the shipped binary links nothing of sim/, tools/
# or test/; internal/ holds only what ships; the workflows link no I/O (see
# tools/layout/doc.go).
go test -count=1 ./tools/layout/

# The docs: links and anchors, flags and defaults against --help, environment
# variables and annotations against the code, every command and manifest block
# checked or marked, the chart's README as helm-docs writes it, no local paths
# (see tools/docscheck/doc.go).
go test -count=1 ./tools/docscheck/

echo "lint: ok"
