package cli

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package ends with none of its goroutines left running.
// glog, which Gatekeeper's libraries import, starts its flush daemon at init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"))
}
