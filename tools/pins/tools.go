//go:build tools

// Package tools records the commands built by scripts/tools.sh so that go mod tidy
// keeps their modules.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
