package leader

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package ends with none of its goroutines left running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
