package trace_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// BenchmarkRebuilderReal rebuilds the recorded 10 s BFQ capture (934,610
// events, 133,514 requests) from memory: the Rebuilder alone, as both
// sides of a replay run it.
func BenchmarkRebuilderReal(b *testing.B) {
	name := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	evs, _ := fixture.Events(b, name)
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
