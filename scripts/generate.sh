#!/usr/bin/env bash
# Generates deepcopy code in api/v1alpha1 and CRD YAML under OUT/deploy/crds.
# OUT is the project root, or another directory when lint checks for drift. In the
# root it also refreshes the copies of the CRDs, of the Grafana dashboard and of
# the alert rules (make lint checks those itself).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(cd "${1:-$root}" && pwd) # absolute, so `make generate`'s "." is the root
cg="$root/.tools/bin/controller-gen"
cd "$root"
"$cg" object paths=./api/... output:object:dir="$out/api/v1alpha1"
"$cg" crd:generateEmbeddedObjectMeta=true,maxDescLen=0 paths=./api/... output:crd:artifacts:config="$out/deploy/crds"
# The Helm chart and the kustomize base carry the same CRDs (kustomize may not
# read files outside its directory; Helm installs crds/ before the templates).
if [ "$out" = "$root" ]; then
	cp deploy/crds/actions.summerwind.dev_*.yaml deploy/helm/arcflow/crds/
	cp deploy/crds/actions.summerwind.dev_*.yaml deploy/kustomize/base/crds/
	# The Grafana dashboard, likewise, for the chart's ConfigMap and the kustomize
	# component's configMapGenerator.
	cp deploy/monitoring/arcflow-dashboard.json deploy/helm/arcflow/files/
	cp deploy/monitoring/arcflow-dashboard.json deploy/kustomize/components/dashboard/
	# The alert rules file and the kustomize PrometheusRule, rendered from the
	# chart's template (with the helm of make tools).
	go test -count=1 -run '^TestGeneratedAlertRules$' ./deploy -args -update >/dev/null
fi
# The chart's README: its values table from the "# --" comments in values.yaml
# (helm-docs of make tools; make lint checks it is current).
if [ "$out" = "$root" ]; then
	"$root/.tools/bin/helm-docs" --chart-search-root deploy/helm --skip-version-footer --log-level warning
fi
