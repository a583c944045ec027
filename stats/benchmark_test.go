package stats

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// synthetic returns a stream of n requests' events: Q G I D C with a
// queue depth of 32, every fourth bio back-merged into the previous one.
func synthetic(n int) []trace.Event {
	ev := make([]trace.Event, 0, n*5)
	t := trace.Time(0)
	dev := trace.MkDev(8, 0)
	type inflight struct {
		sec   uint64
		bytes uint32
	}
	var q []inflight
	for i := 0; i < n; i++ {
		sec := uint64(i) * 1024
		t += 1000
		ev = append(ev,
			trace.Event{Time: t, Action: trace.ActionQueue, Dev: dev, Sector: sec, Bytes: 4096, PID: uint32(100 + i%8), Cat: trace.CatRead | trace.CatQueue},
			trace.Event{Time: t + 10, Action: trace.ActionGetRQ, Dev: dev, Sector: sec, Bytes: 4096, PID: uint32(100 + i%8), Cat: trace.CatRead | trace.CatQueue})
		bytes := uint32(4096)
		if i%4 == 0 {
			ev = append(ev,
				trace.Event{Time: t + 20, Action: trace.ActionQueue, Dev: dev, Sector: sec + 8, Bytes: 4096, PID: uint32(100 + i%8), Cat: trace.CatRead | trace.CatQueue},
				trace.Event{Time: t + 30, Action: trace.ActionBackMerge, Dev: dev, Sector: sec + 8, Bytes: 4096, PID: uint32(100 + i%8), Cat: trace.CatRead | trace.CatQueue})
			bytes = 8192
		}
		ev = append(ev,
			trace.Event{Time: t + 40, Action: trace.ActionInsert, Dev: dev, Sector: sec, Bytes: bytes, Cat: trace.CatRead | trace.CatQueue | trace.CatFS},
			trace.Event{Time: t + 50, Action: trace.ActionIssue, Dev: dev, Sector: sec, Bytes: bytes, Cat: trace.CatRead | trace.CatIssue | trace.CatFS})
		q = append(q, inflight{sec, bytes})
		if len(q) == 32 {
			ev = append(ev, trace.Event{Time: t + 60, Action: trace.ActionComplete, Dev: dev, Sector: q[0].sec, Bytes: q[0].bytes, Cat: trace.CatRead | trace.CatComplete | trace.CatFS})
			q = q[1:]
		}
	}
	return ev
}

func BenchmarkSummarizer(b *testing.B) {
	ev := synthetic(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := NewSummarizer(SummaryOptions{})
		for i := range ev {
			s.Add(&ev[i])
		}
		_ = s.Result()
	}
	b.ReportMetric(float64(len(ev))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
