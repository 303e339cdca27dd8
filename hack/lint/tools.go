//go:build tools

// Package tools records the commands this module builds, so that go mod tidy keeps them.
package tools

import (
	_ "honnef.co/go/tools/cmd/staticcheck"
)
