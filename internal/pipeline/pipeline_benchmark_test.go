package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/none"
	"github.com/tracesched/tracesched/trace"
)

// The recorded 10 s BFQ capture (133,514 requests); the benchmarks skip
// without ../shared. Compare the pairs side by side, with -cpu 1:
//
//	go test -run '^$' -bench . -cpu 1 ./internal/pipeline
func benchCapture(b *testing.B) string {
	return filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
}

func openB(b *testing.B, path string) *blktrace.Input {
	in, err := blktrace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// runWorkload replays a workload's bios through none on a fixed device,
// as a replay would, on device model m; it returns the requests replayed.
func runWorkload(b *testing.B, w *replay.Workload, m *device.Model) int {
	res, err := replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return none.New(h, replay.Options{}) },
		Device:       m.NewDevice(1), Queue: replay.Queue{Rotational: true},
	}, func(*trace.Event) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	return res.Requests
}

func model(b *testing.B, path string) *device.Model {
	c := readCapture(b, path)
	cal, err := Calibrate(c.DeviceRequests(), device.CalibrateOptions{Seed: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cal.Model
}

// BenchmarkReadOnceAndReplay: the pipeline's one read (real side and
// workload) and the replay of the workload.
func BenchmarkReadOnceAndReplay(b *testing.B) {
	path := benchCapture(b)
	m := model(b, path)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		c := readCapture(b, path)
		n += runWorkload(b, c.Workload, m)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkReadThriceAndReplay: what replay did before the pipeline: the
// real side read, a scan for the workload, and a second stream of the
// capture at replay.
func BenchmarkReadThriceAndReplay(b *testing.B) {
	path := benchCapture(b)
	m := model(b, path)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		in := openB(b, path)
		if _, err := diff.Load(in, trace.Meta{}); err != nil {
			b.Fatal(err)
		}
		in.Close()
		w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(path) })
		if err != nil {
			b.Fatal(err)
		}
		n += runWorkload(b, w, m)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkCalibrate: a fit of the capture's requests, and the same fit
// found in the cache (its key included).
func BenchmarkCalibrate(b *testing.B) {
	c := readCapture(b, benchCapture(b))
	reqs := c.DeviceRequests()
	opts := device.CalibrateOptions{Seed: 1}
	b.Run("fit", func(b *testing.B) {
		for b.Loop() {
			if _, err := Calibrate(reqs, opts, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	})
	b.Run("cached", func(b *testing.B) {
		cache := &Cache{Dir: b.TempDir(), Program: "bench"}
		if _, err := Calibrate(reqs, opts, cache); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cal, err := Calibrate(reqs, opts, cache)
			if err != nil || !cal.Cached {
				b.Fatalf("not from the cache: %v", err)
			}
		}
		b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	})
}
