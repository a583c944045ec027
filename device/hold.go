package device

import (
	"time"

	"github.com/tracesched/tracesched/trace"
)

// holdTail is the quantile above which fitHold counts a request's
// residual among the slowest of its class.
const holdTail = 0.9

// holdGaps are the upper edges of the issue-gap ranges fitHold measures
// the persistence of slow residuals over, ns (each range starts at the
// edge before it, the first at 0).
var holdGaps = [...]time.Duration{10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond}

// minHoldPairs is the fewest requests in the slowest tail of a class that
// a gap range must have followed for fitHold to read it.
const minHoldPairs = 10

// minHoldShare is the least fraction of the requests following one in
// the slowest tail (within a gap range) that must be in it too for the
// draws to hold over that range: half, five times the 1 - holdTail
// independent draws give.
const minHoldShare = 0.5

// fitHold sets each class's Hold (OpTiming.Hold) from ss (issue order)
// with n's other parameters fitted:
//
//  1. A request's residual is its D2C less its class's wait for the bytes
//     ahead, over its mean times its load factor and sequential factor
//     (the multiplier the class's residual tables hold); its class's
//     slowest tail are those above the holdTail-quantile.
//  2. For each pair of consecutive requests of the class, the second
//     issued while the first was on the device, the gap between their
//     issues falls in one of the holdGaps ranges; a range where at
//     least minHoldPairs first requests were in the tail, and at least
//     minHoldShare of their followers were too, shows the draws holding.
//  3. Hold is the upper edge of the last range of the unbroken run of
//     such ranges from the first; 0 when the first is not one (the
//     draws are independent).
//
// Flushes are left out (flushLatency draws its own).
func fitHold(n *NonRotational, ss []sample) {
	for o := range numOps {
		t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
		if t == nil {
			continue
		}
		t.Hold = 0
		var at, done []trace.Time
		var rs []float64
		for _, s := range ss {
			if s.op != o || s.flush() {
				continue
			}
			m := t.mean(s.bytes) * n.sampleFactor(s) * t.seqScale(s.seq)
			if m <= 0 {
				continue
			}
			at = append(at, s.issue)
			done = append(done, s.done)
			rs = append(rs, max(s.d2c-t.wait(s.ahead), 0)/m)
		}
		if len(rs) < 2 {
			continue
		}
		sorted := append([]float64(nil), rs...)
		sortFloats(sorted)
		tail := quantileSorted(sorted, holdTail)
		var first, both [len(holdGaps)]int
		for i := 1; i < len(rs); i++ {
			if !(rs[i-1] > tail) || at[i] >= done[i-1] {
				continue
			}
			g := at[i] - at[i-1]
			for j, edge := range holdGaps {
				if g < trace.Time(edge) {
					first[j]++
					if rs[i] > tail {
						both[j]++
					}
					break
				}
			}
		}
		for j := range holdGaps {
			if first[j] < minHoldPairs || float64(both[j]) < minHoldShare*float64(first[j]) {
				break
			}
			t.Hold = holdGaps[j]
		}
	}
}
