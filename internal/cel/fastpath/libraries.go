package fastpath

import (
	"fmt"
	"slices"

	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/library"
)

// A CEL library may add program options to an environment. An untracked
// program must plan what they change in evaluation, and only that. This
// table says, for every library the apiserver's environments and
// tollgate's have, what its program options do. It was read from cel-go
// v0.30.0 (which adds cost trackers only, to ext.encoders, ext.lists and
// ext.math) and k8s.io/apiserver v0.37.2; TestLibrariesReadAt fails on
// another version, to be read again. A library not in it leaves an
// expression unplanned: it stays on the tracked path.
var libraries = map[string]libraryOptions{
	// decorateOptionalOr: or and orValue short-circuit (optional.go).
	"cel.lib.optional": {optionalOr: true},
	// cel.OptimizeRegex: find and findAll precompile a constant pattern.
	"kubernetes.regex": {regexes: []*interpreter.RegexOptimization{library.FindRegexOptimization, library.FindAllRegexOptimization}},
	// Cost trackers only, or no program options.
	"cel.lib.std":               {},
	"cel.lib.ext.strings":       {},
	"cel.lib.ext.sets":          {},
	"cel.lib.ext.lists":         {},
	"cel.lib.ext.comprev2":      {},
	"kubernetes.authz":          {},
	"kubernetes.authzSelectors": {},
	"kubernetes.format":         {},
	"kubernetes.lists":          {},
	"kubernetes.net.cidr":       {},
	"kubernetes.net.ip":         {},
	"kubernetes.quantity":       {},
	"kubernetes.Semver":         {},
	"kubernetes.urls":           {},
	"kubernetes.jsonpatch":      {},
	// Kyverno's environment adds these (package kyverno). The bindings'
	// decorator plans cel.@block, which only cel-go's optimizer writes: a
	// parsed expression cannot name it. The others add cost trackers
	// only, or no program options.
	"cel.lib.ext.cel.bindings": {},
	"cel.lib.ext.encoders":     {},
	"cel.lib.ext.math":         {},
	"cel.lib.ext.protos":       {},
	"cel.lib.ext.regex":        {},
}

// libraryOptions is what one library's program options change.
type libraryOptions struct {
	optionalOr bool
	regexes    []*interpreter.RegexOptimization
}

// planner is the planner options of an environment's libraries.
type planner struct {
	decorators []interpreter.PlannerOption
	regexes    []*interpreter.RegexOptimization
}

// plannerOptions is what the libraries of an environment add to its
// programs' planning, or an error naming a library the table lacks.
func plannerOptions(names []string) (planner, error) {
	var p planner
	names = slices.Sorted(slices.Values(names)) // Libraries() is a map's keys
	for _, name := range names {
		lib, ok := libraries[name]
		if !ok {
			return planner{}, fmt.Errorf("CEL library %s: its program options are not known to the fast path", name)
		}
		if lib.optionalOr {
			p.decorators = append(p.decorators, interpreter.CustomDecoratorV2(decorateOptionalOr))
		}
		p.regexes = append(p.regexes, lib.regexes...)
	}
	return p, nil
}
