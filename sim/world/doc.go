// Package world runs arcflow in a simulated world: the local stack (etcd,
// kube-apiserver, kwok, Temporal dev server), `arcflow worker` and `arcflow webhook`
// as processes, the fake GitHub, simulated runners and a webhook sender. The demo,
// the benchmarks, the chaos run and the full-stack tests all stand on it.
package world
