// Package e2e holds full-stack tests: real etcd, kube-apiserver, kwok and a Temporal
// dev server.
package e2e
