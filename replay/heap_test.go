package replay

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestEventQueueOrder pushes and pops events at random, with many equal
// times, and checks that they come out by (time, insertion order): what
// sorting every event pushed so far would give.
func TestEventQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var q eventQueue
	var pending []simEvent // what q holds, in no order
	seq := uint64(0)
	now := trace.Time(0)
	for step := 0; step < 200_000; step++ {
		if len(pending) == 0 || rng.IntN(3) > 0 {
			seq++
			ev := simEvent{at: now + trace.Time(rng.IntN(50)), seq: seq, arg: seq}
			q.push(ev)
			pending = append(pending, ev)
			continue
		}
		got := q.pop()
		i := 0
		for j := range pending {
			if before(&pending[j], &pending[i]) {
				i = j
			}
		}
		if want := pending[i]; got.seq != want.seq || got.at != want.at {
			t.Fatalf("step %d: popped (%d, %d), want (%d, %d)", step, got.at, got.seq, want.at, want.seq)
		}
		pending = slices.Delete(pending, i, i+1)
		now = got.at
		if len(q) != len(pending) {
			t.Fatalf("step %d: %d queued, want %d", step, len(q), len(pending))
		}
	}
}
