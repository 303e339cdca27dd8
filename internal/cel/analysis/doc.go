// Package analysis reads CEL expressions without running them. It finds
// which variables an expression uses, which fields of the object it may
// read, and what it reads of a policy's declared references. It parses
// with the apiserver's base environment and keeps no state: evaluation
// (internal/cel) and analysis share nothing but the syntax tree.
//
// Every answer errs on the safe side. An expression that does not parse
// uses every variable and may read every field, so that no caller drops
// what it could not read.
package analysis
