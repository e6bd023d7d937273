// Package teststack starts the real parts that arcflow's integration tests, `make up`
// and `make demo` run on: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (a fake node whose pods become Running and Ready), and a
// Temporal dev server. Every process binds to 127.0.0.1 on free ports, keeps its
// state and logs under one directory, and is stopped by PID, also when a test fails.
//
// The binaries come from .tools/bin, which `make tools` fills (scripts/tools.sh).
package teststack
