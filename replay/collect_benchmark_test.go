package replay

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
)

// BenchmarkCollectorMemory feeds the recorded 10 s BFQ capture (133,514
// bios; skipped without ../shared) to a Collector and reports the bytes
// its store of the replayed device's bios holds per bio (store-B/bio; a
// storedRecord is 88 B) and the CPU time per pass beside the wall time.
//
//	go test -run '^$' -bench CollectorMemory -benchtime 3x ./replay
func BenchmarkCollectorMemory(b *testing.B) {
	path := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	var perBio float64
	for b.Loop() {
		c := NewCollector()
		fixture.Each(b, path, c.Add)
		w, err := c.Workload()
		if err != nil {
			b.Fatal(err)
		}
		s := c.devs[w.Dev]
		if s.recs.n != w.Bios || w.Bios < 100_000 {
			b.Fatalf("%d records of %d bios", s.recs.n, w.Bios)
		}
		perBio = float64(s.recs.bytesHeld()) / float64(s.recs.n)
	}
	b.ReportMetric(perBio, "store-B/bio")
}

// BenchmarkCollector feeds the recorded 10 s BFQ capture (934,610
// events, decoded beforehand; skipped without ../shared) to a Collector
// with its own Rebuilder, then builds the Workload: the workload's half
// of reading a capture, allocations included.
//
//	go test -run '^$' -bench 'Collector$' -benchmem ./replay
func BenchmarkCollector(b *testing.B) {
	path := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	evs, _ := fixture.Events(b, path)
	b.ReportAllocs()
	for b.Loop() {
		c := NewCollector()
		for i := range evs {
			c.Add(&evs[i])
		}
		if _, err := c.Workload(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkWorkloadStream streams the records of the recorded 10 s BFQ
// capture's workload (133,514; skipped without ../shared) as a replay
// reads them, inference included, and reports the bytes allocated per
// record (B/record: the Record itself, which the engine may hold for
// most of a capture at once, and the inference's share).
//
//	go test -run '^$' -bench WorkloadStream ./replay
func BenchmarkWorkloadStream(b *testing.B) {
	path := filepath.Join(shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"), "g-bfq-large-nomsg")
	c := NewCollector()
	fixture.Each(b, path, c.Add)
	w, err := c.Workload()
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	records := 0
	for b.Loop() {
		src, err := w.open()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := src.next(); err != nil {
				break
			}
			n++
		}
		src.close()
		if n != w.Bios {
			b.Fatalf("%d records of %d bios", n, w.Bios)
		}
		records += n
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(records), "B/record")
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
