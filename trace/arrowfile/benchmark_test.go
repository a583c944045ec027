package arrowfile

import (
	"bytes"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// arrowCPUTime returns the process's user and system CPU time. The
// benchmarks report rates per CPU-second besides wall-clock ones, as the
// machines they run on are often shared.
func arrowCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// arrowCountWriter counts bytes and discards them.
type arrowCountWriter struct{ n int64 }

func (w *arrowCountWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkEncodeEvents encodes generated blktrace-like events (see
// arrowGenEvents), sweeping rows per batch and compression goroutines.
// Metrics: events/s and bytes/event of the output.
func BenchmarkEncodeEvents(b *testing.B) {
	evs := arrowGenEvents(1<<18, 7)
	for _, rows := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10} {
		for _, conc := range []int{1, 2} {
			b.Run(fmt.Sprintf("rows=%d/conc=%d", rows, conc), func(b *testing.B) {
				b.ReportAllocs()
				var out arrowCountWriter
				n := 0
				cpu0 := arrowCPUTime()
				for b.Loop() {
					out.n = 0
					w, _ := NewEventWriter(&out, trace.Meta{}, WithBatchRows(rows), WithCompressConcurrency(conc))
					for i := range evs {
						if err := w.Write(&evs[i]); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
					n += len(evs)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(n)/(arrowCPUTime()-cpu0).Seconds(), "events/cpu-s")
				b.ReportMetric(float64(out.n)/float64(len(evs)), "B/event")
			})
		}
	}
}

// BenchmarkEncodeRequests encodes generated requests (arrowGenRequests).
func BenchmarkEncodeRequests(b *testing.B) {
	rqs := arrowGenRequests(1<<17, 7)
	for _, rows := range []int{4 << 10, 64 << 10} {
		for _, conc := range []int{1, 2} {
			b.Run(fmt.Sprintf("rows=%d/conc=%d", rows, conc), func(b *testing.B) {
				b.ReportAllocs()
				var out arrowCountWriter
				n := 0
				cpu0 := arrowCPUTime()
				for b.Loop() {
					out.n = 0
					w, _ := NewRequestWriter(&out, trace.Meta{}, WithBatchRows(rows), WithCompressConcurrency(conc))
					for i := range rqs {
						if err := w.Write(&rqs[i]); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
					n += len(rqs)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
				b.ReportMetric(float64(n)/(arrowCPUTime()-cpu0).Seconds(), "requests/cpu-s")
				b.ReportMetric(float64(out.n)/float64(len(rqs)), "B/request")
			})
		}
	}
}

// BenchmarkDecodeEvents reads back an events file of generated events.
func BenchmarkDecodeEvents(b *testing.B) {
	evs := arrowGenEvents(1<<18, 7)
	data := encodeEventsForTest(b, evs, trace.Meta{})
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	n := 0
	cpu0 := arrowCPUTime()
	for b.Loop() {
		r, err := OpenEvents(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.ReadEvent(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			n++
		}
		r.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)/(arrowCPUTime()-cpu0).Seconds(), "events/cpu-s")
}
