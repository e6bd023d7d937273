#!/usr/bin/env bash
# make demo: runs arcflow end to end on local defaults.
set -euo pipefail
cat <<'MSG'
make demo: not yet.

The demo needs the runner, pool and autoscaler workflows and the simulated GitHub,
which are not built yet (see the open issues). What runs today:

  make up     start etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
              kwok and a Temporal dev server with its Web UI
  make test   the tests on that stack
  make down   stop it
MSG
