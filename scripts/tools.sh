#!/usr/bin/env bash
# Installs the binaries that the local stack and code generation need, building them
# from the Go module proxy. Built binaries are cached outside the clone, keyed by
# version, so a fresh clone on a warm machine links them in seconds:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/arcflow/<tool>-<key>/
# .tools/bin in the clone holds symlinks to the cached binaries.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ARCFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arcflow}
bin="$root/.tools/bin"
mkdir -p "$cache" "$bin"

KUBE_VERSION=v1.36.3
TEMPORAL_CLI_VERSION=v1.5.1
CONTROLLER_GEN_VERSION=v0.20.1
HELM_VERSION=v3.22.0
# promtool checks and unit-tests the alert rules in deploy/monitoring (Prometheus
# 3.16.0; the module's versions are v0.<minor>.<patch>). It is built without
# Prometheus's service discovery plugins (tag remove_all_sd), which the rule
# checks never use and which took half of its build.
PROMTOOL_VERSION=v0.316.0
# helm-docs writes the chart's README from the comments in values.yaml.
HELM_DOCS_VERSION=v1.14.2
# The server version the Temporal CLI above embeds, for TEMPORAL=cluster. Both are
# required in tools/pins/temporal/go.mod too, which temporal_tools checks.
TEMPORAL_SERVER_VERSION=v1.29.1

log() { printf '[tools] %s\n' "$*" >&2; }

# link NAME DIR: point .tools/bin/NAME at DIR/NAME.
link() { ln -sfn "$2/$1" "$bin/$1"; }

# have DIR NAME...: all named binaries exist in DIR.
have() {
	local dir=$1; shift
	for name in "$@"; do [ -x "$dir/$name" ] || return 1; done
}

# The Kubernetes control plane, etcd, kubectl and kwok come from tools/pins/go.mod. The
# cache key covers the pinned module graph and the Go version.
kube_tools() {
	local names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
	local key
	key=$(cat "$root/tools/pins/go.mod" "$root/tools/pins/go.sum" <(go version) | sha256sum | cut -c1-12)
	local dir="$cache/kube-$key"
	if ! have "$dir" "${names[@]}"; then
		log "building etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok (cold: about 15 minutes on 2 cores)"
		local tmp="$dir.tmp.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
		local vpkg=k8s.io/component-base/version
		(cd "$root/tools/pins" && go build -trimpath -o "$tmp/" -ldflags "-s -w \
			-X $vpkg.gitVersion=$KUBE_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor" \
			go.etcd.io/etcd/server/v3 \
			k8s.io/kubernetes/cmd/kube-apiserver \
			k8s.io/kubernetes/cmd/kube-controller-manager \
			k8s.io/kubernetes/cmd/kube-scheduler \
			k8s.io/kubernetes/cmd/kubectl \
			sigs.k8s.io/kwok/cmd/kwok)
		mv "$tmp/v3" "$tmp/etcd" 2>/dev/null || mv "$tmp/server" "$tmp/etcd"
		rm -rf "$dir"; mv "$tmp" "$dir"
	fi
	for name in "${names[@]}"; do link "$name" "$dir"; done
	# kwok's own stage definitions ship in its module; keep a copy beside the binary.
	local stages
	stages=$(cd "$root/tools/pins" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
	[ -d "$dir/kwok-stage" ] || cp -r "$stages" "$dir/kwok-stage"
	ln -sfn "$dir/kwok-stage" "$root/.tools/kwok-stage"
}

# go_install NAME MODULE/PKG VERSION [TAGS]: a single go install, cached by version
# and build tags.
go_install() {
	local name=$1 pkg=$2 version=$3 tags=${4:-}
	local dir="$cache/$name-$version${tags:+-$tags}-$(go env GOVERSION)"
	if ! have "$dir" "$name"; then
		log "building $name $version"
		local tmp="$dir.tmp.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		GOBIN="$tmp" GOFLAGS=-trimpath go install -tags "$tags" -ldflags "-s -w" "$pkg@$version"
		rm -rf "$dir"; mv "$tmp" "$dir"
	fi
	link "$name" "$dir"
}

# temporal_tools: the Temporal CLI (its dev server runs the local stack's Temporal)
# and temporal-server with temporal-sql-tool (TEMPORAL=cluster), from one module
# graph (tools/pins/temporal) in one go build, so the server's packages, which the
# CLI embeds, compile once. Static, as the bundled Temporal's image builds the CLI
# (tools/image), so that build finds every package compiled in Go's build cache
# and only links. The PostgreSQL schemas of the server module are copied beside
# the binaries (teststack applies them with temporal-sql-tool).
temporal_tools() {
	local pins="$root/tools/pins/temporal"
	grep -q "github.com/temporalio/cli $TEMPORAL_CLI_VERSION\$" "$pins/go.mod" &&
		grep -q "go.temporal.io/server $TEMPORAL_SERVER_VERSION\$" "$pins/go.mod" || {
		log "tools/pins/temporal/go.mod must require the CLI $TEMPORAL_CLI_VERSION and the server $TEMPORAL_SERVER_VERSION"
		return 1
	}
	local key
	key=$(cat "$pins/go.mod" "$pins/go.sum" <(go version) | sha256sum | cut -c1-12)
	local dir="$cache/temporal-$key"
	if ! have "$dir" temporal temporal-server temporal-sql-tool || [ ! -d "$dir/schema/postgresql/v12" ]; then
		log "building the Temporal CLI $TEMPORAL_CLI_VERSION, temporal-server and temporal-sql-tool $TEMPORAL_SERVER_VERSION (cold: about 5 minutes on 2 cores)"
		local tmp="$dir.tmp.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		(cd "$pins" && CGO_ENABLED=0 go build -trimpath -o "$tmp/" -ldflags "-s -w" \
			github.com/temporalio/cli/cmd/temporal \
			go.temporal.io/server/cmd/server \
			go.temporal.io/server/cmd/tools/sql)
		mv "$tmp/server" "$tmp/temporal-server"
		mv "$tmp/sql" "$tmp/temporal-sql-tool"
		mkdir -p "$tmp/schema"
		cp -r "$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION/schema/postgresql" "$tmp/schema/"
		chmod -R u+w "$tmp/schema" # the module cache is read-only
		rm -rf "$dir"; mv "$tmp" "$dir"
	fi
	for name in temporal temporal-server temporal-sql-tool; do link "$name" "$dir"; done
}

# postgres: Debian's PostgreSQL server binaries for the Temporal cluster. teststack
# runs its own cluster from them (initdb in the stack directory), never the
# system service the package sets up.
postgres() {
	local initdb
	initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$initdb" ]; then
		if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
			log "PostgreSQL is missing: install Debian's postgresql package (apt-get install postgresql)"
			return 1
		fi
		log "installing Debian's postgresql package"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
		initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)
	fi
	ln -sfn "$(dirname "$initdb")" "$root/.tools/postgres-bin"
}

# chromium: Debian's package, for the test that opens the Temporal Web UI. It is
# the one tool not built from source; apt caches it system-wide.
browser() {
	local path
	if ! path=$(type -P chromium); then
		if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
			log "chromium is missing: install Debian's chromium package (apt-get install chromium)"
			return 1
		fi
		log "installing Debian's chromium package"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
		path=$(type -P chromium)
	fi
	ln -sfn "$path" "$bin/chromium"
}

promtool() { go_install promtool github.com/prometheus/prometheus/cmd/promtool "$PROMTOOL_VERSION" remove_all_sd; }

want=${1:-all}
case "$want" in
kube) kube_tools ;;
temporal | temporal-server) temporal_tools ;;
controller-gen) go_install controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_GEN_VERSION" ;;
helm) go_install helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION" ;;
promtool) promtool ;;
helm-docs) go_install helm-docs github.com/norwoodj/helm-docs/cmd/helm-docs "$HELM_DOCS_VERSION" ;;
chromium) browser ;;
postgres) postgres ;;
all)
	# apt downloads while Go compiles; one apt at a time (dpkg holds a lock).
	{ browser && postgres; } > "$cache/apt-install.log" 2>&1 &
	apt_pid=$!
	kube_tools
	temporal_tools
	go_install controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_GEN_VERSION"
	go_install helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
	promtool
	go_install helm-docs github.com/norwoodj/helm-docs/cmd/helm-docs "$HELM_DOCS_VERSION"
	if ! wait "$apt_pid"; then cat "$cache/apt-install.log" >&2; exit 1; fi
	;;
*) echo "usage: $0 [all|kube|temporal|temporal-server|postgres|controller-gen|helm|promtool|helm-docs|chromium]" >&2; exit 2 ;;
esac
