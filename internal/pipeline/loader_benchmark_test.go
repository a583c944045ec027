package pipeline

import (
	"errors"
	"io"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/trace"
)

// The read path of a replay in its two halves, on the recorded 10 s BFQ
// capture (about 940,000 events, 133,514 requests). Compare them side by
// side, with -cpu 1:
//
//	go test -run '^$' -bench 'Decode|Loader' -cpu 1 ./internal/pipeline

// BenchmarkDecode: the capture's events decoded (blktrace: the per-CPU
// decoders, their merge and the pipeline), in batches as the command
// reads them.
func BenchmarkDecode(b *testing.B) {
	path := benchCapture(b)
	evs := make([]trace.Event, 64)
	n := 0
	for b.Loop() {
		in := openB(b, path)
		for {
			k, err := in.ReadEventsInto(evs)
			n += k
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		in.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLoader: the capture's events, decoded beforehand, fed to a
// Loader (the real side's Rebuilder and tables, and the workload's
// Collector), then Finish, with its allocations.
func BenchmarkLoader(b *testing.B) {
	evs, meta := fixture.Events(b, benchCapture(b))
	b.ReportAllocs()
	reqs := 0
	for b.Loop() {
		l := NewLoader()
		for i := range evs {
			l.Add(&evs[i])
		}
		c, err := l.Finish(meta)
		if err != nil {
			b.Fatal(err)
		}
		reqs += c.Real.NumRequests()
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "requests/s")
}
