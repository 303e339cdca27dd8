// Package policy owns tollgate's policy files: their types (types.go), how they
// are read and verified (load.go, verify.go), the embedded defaults
// (defaults.go), which requests a policy concerns (match.go) and how policies
// are grouped into webhook entries (group.go).
package policy
