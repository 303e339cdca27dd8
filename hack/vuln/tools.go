//go:build tools

// Package tools records the commands this module builds, so that go mod tidy keeps them.
package tools

import (
	_ "golang.org/x/vuln/cmd/govulncheck"
	_ "golang.org/x/vulndb/cmd/indexdb"
)
