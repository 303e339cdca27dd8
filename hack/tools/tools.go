//go:build tools

// Package tools records the commands this module builds, so that go mod tidy keeps them.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
