package replay

import (
	"math/rand/v2"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// BenchmarkEventQueue pushes and pops 1 M events through a queue holding
// about 64 (an engine's pending arrivals, completions and timers), as the
// engine does: ns/op is per push and pop.
func BenchmarkEventQueue(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	delays := make([]trace.Time, 1<<16)
	for i := range delays {
		delays[i] = trace.Time(rng.IntN(100_000))
	}
	var q eventQueue
	seq := uint64(0)
	for range 64 {
		seq++
		q.push(simEvent{at: delays[seq%uint64(len(delays))], seq: seq})
	}
	b.ResetTimer()
	for b.Loop() {
		ev := q.pop()
		seq++
		q.push(simEvent{at: ev.at + delays[seq%uint64(len(delays))], seq: seq})
	}
}
