package device_test

import (
	"errors"
	"io"
	"testing"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// readRequests rebuilds the requests of a capture (name as blktrace.Open
// takes it: a per-CPU set's basename).
func readRequests(tb testing.TB, name string) []trace.Request {
	tb.Helper()
	in, err := blktrace.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	var reqs []trace.Request
	rb := trace.NewRebuilder(func(r *trace.Request) { reqs = append(reqs, *r) }, nil)
	for {
		e, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("reading %s: %v", name, err)
		}
		rb.Add(&e)
	}
	rb.Close()
	return reqs
}
