package device_test

import (
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"

	"github.com/tracesched/tracesched/trace"
)

// readRequests rebuilds the requests of a capture (name as blktrace.Open
// takes it: a per-CPU set's basename).
func readRequests(tb testing.TB, name string) []trace.Request {
	tb.Helper()
	return fixture.Requests(tb, name)
}
