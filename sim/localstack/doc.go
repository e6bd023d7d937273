// Package localstack starts the real parts that arcflow's integration tests, `make up`
// and `make demo` run on: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (a fake node whose pods become Running and Ready), and
// Temporal: the CLI's dev server, or a cluster shaped like a production one
// (temporal-server with its four services and several history shards, on a private
// PostgreSQL for persistence and visibility). Every process binds to 127.0.0.1 on
// free ports, keeps its state and logs under one directory, and is stopped by PID,
// also when a test fails.
//
// The binaries come from .tools/bin, which `make tools` fills (scripts/tools.sh).
package localstack
