#!/usr/bin/env bash
# make image: arcflow's container image without a Docker engine (tools/cmd/arcflow-image).
# The CA bundle comes from Debian's ca-certificates package; install it when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=/etc/ssl/certs/ca-certificates.crt
if [[ ! -s $bundle ]]; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  echo "image: $bundle is missing; installing Debian's ca-certificates" >&2
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends ca-certificates
fi

exec go run ./tools/cmd/arcflow-image "$@"
