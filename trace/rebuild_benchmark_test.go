package trace

import "testing"

// rbSynthetic returns a stream of n requests' events: Q G I D C with a
// queue depth of 32, every fourth bio back-merged into the previous one.
func rbSynthetic(n int) []Event {
	ev := make([]Event, 0, n*5)
	t := Time(0)
	dev := MkDev(8, 0)
	type inflight struct {
		sec   uint64
		bytes uint32
	}
	var q []inflight
	for i := 0; i < n; i++ {
		sec := uint64(i) * 1024
		t += 1000
		ev = append(ev,
			Event{Time: t, Action: ActionQueue, Dev: dev, Sector: sec, Bytes: 4096, PID: uint32(100 + i%8), Cat: CatRead | CatQueue},
			Event{Time: t + 10, Action: ActionGetRQ, Dev: dev, Sector: sec, Bytes: 4096, PID: uint32(100 + i%8), Cat: CatRead | CatQueue})
		bytes := uint32(4096)
		if i%4 == 0 {
			ev = append(ev,
				Event{Time: t + 20, Action: ActionQueue, Dev: dev, Sector: sec + 8, Bytes: 4096, PID: uint32(100 + i%8), Cat: CatRead | CatQueue},
				Event{Time: t + 30, Action: ActionBackMerge, Dev: dev, Sector: sec + 8, Bytes: 4096, PID: uint32(100 + i%8), Cat: CatRead | CatQueue})
			bytes = 8192
		}
		ev = append(ev,
			Event{Time: t + 40, Action: ActionInsert, Dev: dev, Sector: sec, Bytes: bytes, Cat: CatRead | CatQueue | CatFS},
			Event{Time: t + 50, Action: ActionIssue, Dev: dev, Sector: sec, Bytes: bytes, Cat: CatRead | CatIssue | CatFS})
		q = append(q, inflight{sec, bytes})
		if len(q) == 32 {
			ev = append(ev, Event{Time: t + 60, Action: ActionComplete, Dev: dev, Sector: q[0].sec, Bytes: q[0].bytes, Cat: CatRead | CatComplete | CatFS})
			q = q[1:]
		}
	}
	return ev
}

func BenchmarkRebuilder(b *testing.B) {
	ev := rbSynthetic(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	var reqs int
	for b.Loop() {
		rb := NewRebuilder(func(*Request) { reqs++ }, func(*Bio) {})
		for i := range ev {
			rb.Add(&ev[i])
		}
		rb.Close()
	}
	b.ReportMetric(float64(len(ev))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
