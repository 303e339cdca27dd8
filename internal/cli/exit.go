package cli

import (
	"errors"
	"fmt"
)

// Exit codes of the offline commands.
const (
	exitDenied = 1 // something was denied, a test failed, a policy has problems
	exitUsage  = 2 // bad flags, unreadable input, policies that do not load
)

// exitError ends a command with a given code. A nil err means the command
// already said everything it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// exitCode is what Main returns for err, and whether err should be printed.
func exitCode(err error) (int, bool) {
	var e *exitError
	if errors.As(err, &e) {
		return e.code, e.err != nil
	}
	return 1, true
}
