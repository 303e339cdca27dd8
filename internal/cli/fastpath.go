package cli

import (
	"fmt"

	"github.com/spf13/pflag"
)

// fastPathFlag is --cel-fast-path, which serve, check, review, audit and
// test share: false makes every CEL program decide on its tracked
// (reference) path (engine.Options.NoCELFastPath), with the same
// decisions, slower. The flag's value is its negation, stored in off.
type fastPathFlag struct{ off *bool }

func (f fastPathFlag) String() string {
	if f.off != nil && *f.off {
		return "false"
	}
	return "true"
}

func (f fastPathFlag) Set(s string) error {
	switch s {
	case "true":
		*f.off = false
	case "false":
		*f.off = true
	default:
		return fmt.Errorf("want true or false, got %q", s)
	}
	return nil
}

func (fastPathFlag) Type() string { return "bool" }

// IsBoolFlag lets --cel-fast-path stand alone for true.
func (fastPathFlag) IsBoolFlag() bool { return true }

func addFastPathFlag(fs *pflag.FlagSet, off *bool) {
	fs.Var(fastPathFlag{off}, "cel-fast-path", "decide CEL policies with the fast path where it proves the reference's decision; false: the tracked (reference) evaluation only, the same decisions, slower")
	fs.Lookup("cel-fast-path").NoOptDefVal = "true"
}
