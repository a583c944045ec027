package diff_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
)

// liveHeap returns the bytes of live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func loadCapture(b *testing.B, path string) *diff.Side {
	in, err := blktrace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	s, err := diff.Load(in, in.Meta())
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDiffMemory loads the recorded 10 s BFQ capture (133,514
// requests; skipped without ../shared) as both sides of a diff, compares
// them, and reports the memory the diff holds per request of one side:
// table-B/req, the two sides' bio and request tables (Side.BytesHeld);
// live-B/req, the live heap after the comparison (both sides, what Compare
// derived from each, and the Result) less the heap before loading. The
// target is the diff of a 100 M-event capture within 8 GiB: well under
// 400 B of peak RSS per request, so well under 200 B live.
//
//	go test -run '^$' -bench DiffMemory -benchtime 1x ./diff
func BenchmarkDiffMemory(b *testing.B) {
	path := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	var table, live float64
	for b.Loop() {
		before := liveHeap()
		real, pred := loadCapture(b, path), loadCapture(b, path)
		res := diff.Compare(real, pred, diff.Options{})
		n := float64(real.NumRequests())
		live = float64(liveHeap()-before) / n
		table = float64(real.BytesHeld()+pred.BytesHeld()) / n
		if res.Identity.Matched != real.NumBios() || n < 100_000 {
			b.Fatalf("matched %d of %d bios, %v requests", res.Identity.Matched, real.NumBios(), n)
		}
		runtime.KeepAlive(res)
	}
	b.ReportMetric(table, "table-B/req")
	b.ReportMetric(live, "live-B/req")
}
