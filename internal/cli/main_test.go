package cli

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package ends with none of its goroutines left running,
// but glog's flush daemon, which glog's init starts (glog comes with
// Gatekeeper's constraint framework, which tollgate test runs gator
// Suites with).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"))
}
