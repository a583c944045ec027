package trace_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// BenchmarkRebuilderReal rebuilds the recorded 10 s BFQ capture (934,610
// events, 133,514 requests) from memory: the Rebuilder alone, as both
// sides of a replay run it.
func BenchmarkRebuilderReal(b *testing.B) {
	name := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	in, err := blktrace.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	var evs []trace.Event
	for {
		e, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, e)
	}
	in.Close()
	b.ReportAllocs()
	var reqs int
	for b.Loop() {
		rb := trace.NewRebuilder(func(*trace.Request) { reqs++ }, func(*trace.Bio) {})
		for i := range evs {
			rb.Add(&evs[i])
		}
		rb.Close()
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
