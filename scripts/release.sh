#!/usr/bin/env bash
# make release: everything a release publishes, in dist/ (ignored by git):
#   arcflow-<version>-oci.tar              the OCI image layout (linux/amd64 + linux/arm64 index), tarred
#   arcflow-<version>-linux-<arch>.tar     docker load -i ...
#   arcflow-temporal-linux-<arch>.tar      the bundled Temporal's image (the Temporal CLI), docker load -i ...
#   arcflow-<chart version>.tgz            the Helm chart, appVersion = `arcflow version` = image tag
#   SHA256SUMS
# dist/image/oci stays as a directory for `crane push --index` (.github/workflows/release.yml).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
# Chart versions are SemVer 2 without the tag's v; a build between tags keeps its
# describe suffix as a pre-release, and an untagged one is 0.0.0-<describe>.
if [[ $version =~ ^v?[0-9]+\.[0-9]+\.[0-9]+ ]]; then
	chart_version=${version#v}
else
	chart_version=0.0.0-$version
fi

# A tagged release must be what the kustomize base deploys (the chart gets its
# appVersion below; the base is plain YAML): bump its newTag before tagging.
if git describe --tags --exact-match >/dev/null 2>&1; then
	base_tag=$(awk '$1 == "newTag:" {print $2}' deploy/kustomize/base/kustomization.yaml)
	if [[ $base_tag != "$version" ]]; then
		echo "release: deploy/kustomize/base/kustomization.yaml deploys $base_tag, not $version: set its newTag and the chart's appVersion to $version" >&2
		exit 1
	fi
fi

bash scripts/tools.sh helm
rm -rf dist
mkdir -p dist
bash scripts/image.sh --out dist/image --version "$version"
for tarball in dist/image/arcflow-linux-*.tar; do
	mv "$tarball" "dist/arcflow-$version-${tarball#dist/image/arcflow-}"
done
# A reproducible tar of the layout: sorted names, fixed owner and times.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	-cf "dist/arcflow-$version-oci.tar" -C dist/image/oci .
# The bundled Temporal's image (the chart's temporal.bundled.image), tagged with
# the Temporal CLI's version; dist/image-temporal/oci stays for crane push.
bash scripts/image.sh -temporal --out dist/image-temporal
for tarball in dist/image-temporal/arcflow-temporal-linux-*.tar; do
	mv "$tarball" "dist/${tarball#dist/image-temporal/}"
done

.tools/bin/helm package deploy/helm/arcflow --version "$chart_version" --app-version "$version" -d dist >/dev/null

(cd dist && sha256sum -- *.tar *.tgz > SHA256SUMS)
echo
echo "dist/ (arcflow $version, chart $chart_version):"
(cd dist && ls -l -- *.tar *.tgz SHA256SUMS && cat SHA256SUMS)
