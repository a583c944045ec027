package pipeline

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/tracesched/tracesched/device"
)

// heapPeak samples the heap's live and not yet collected objects every
// 100 us until stop is called, which returns the most seen, bytes.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkCalibrateMemory calibrates the recorded 10 s BFQ capture
// (133,514 requests) with windows of 2^12 and 2^13 samples, as small
// against it as the default ones against a 100 M-event capture (6 % and
// 3.7 %), so that the fit takes the bounded path that capture takes, from the real side's table one request at a time (seq) and
// from the side's requests copied into a slice (slice), and reports per
// request the bytes allocated (alloc-B/req) and the heap's peak above what
// it held before (peak-B/req: objects live or not yet collected, sampled
// every 100 us). Run side by side:
//
//	go test -run '^$' -bench CalibrateMemory -benchtime 3x -cpu 1 ./internal/pipeline
func BenchmarkCalibrateMemory(b *testing.B) {
	c := readCapture(b, benchCapture(b))
	opts := device.CalibrateOptions{Seed: 1, CVSamples: 1 << 12, FitSamples: 1 << 13}
	n := float64(c.Real.NumRequests())
	for _, tc := range []struct {
		name string
		run  func() (*Calibration, error)
	}{
		{"seq", func() (*Calibration, error) { return CalibrateSeq(c.DeviceRequestSeq(), opts, nil) }},
		{"slice", func() (*Calibration, error) { return Calibrate(c.DeviceRequests(), opts, nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before, base := ms.TotalAlloc, ms.HeapAlloc
			var peak uint64
			for b.Loop() {
				stop := heapPeak()
				cal, err := tc.run()
				peak = max(peak, stop())
				if err != nil {
					b.Fatal(err)
				}
				if cal.Fit.Fitted == 0 {
					b.Fatal("not fitted on a window")
				}
			}
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-before)/float64(b.N)/n, "alloc-B/req")
			b.ReportMetric(float64(peak-min(peak, base))/n, "peak-B/req")
		})
	}
}
