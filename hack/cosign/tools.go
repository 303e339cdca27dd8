//go:build tools

// Package tools records the command this module builds, so that go mod tidy keeps it.
package tools

import (
	_ "github.com/sigstore/cosign/v2/cmd/cosign"
)
