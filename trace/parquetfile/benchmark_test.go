package parquetfile

import (
	"io"
	"os"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
)

// BenchmarkWriteCapture writes the events of the blktrace capture named by
// $TRACESCHED_BENCH_CAPTURE (a path without the .blktrace.N suffix), and
// the requests rebuilt from them, as Parquet files; it skips when the
// variable is unset. Metrics are per CPU-second as well as per wall-clock
// second, to set beside trace/arrowfile's BenchmarkEncodeCapture.
func BenchmarkWriteCapture(b *testing.B) {
	path := os.Getenv("TRACESCHED_BENCH_CAPTURE")
	if path == "" {
		b.Skip("TRACESCHED_BENCH_CAPTURE not set")
	}
	evs, rqs, meta := fixture.Capture(b, path)
	b.Run("events", func(b *testing.B) {
		fixture.BenchWrite(b, evs, "events", func(w io.Writer) (*EventWriter, error) { return NewEventWriter(w, meta) })
	})
	b.Run("requests", func(b *testing.B) {
		fixture.BenchWrite(b, rqs, "requests", func(w io.Writer) (*RequestWriter, error) { return NewRequestWriter(w, meta) })
	})
}
