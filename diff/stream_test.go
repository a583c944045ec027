package diff

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAddBusyMatchesSort: busy intervals merged one at a time, in any
// order, give the sets busySets builds by sorting them by start (the
// bridge joins gaps up to and including it).
func TestAddBusyMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const bridge = 100
	// Gaps of exactly the bridge join, one more does not; in and out of order.
	touching := []interval{{0, 10}, {110, 120}, {221, 230}, {330, 331}}
	for trial := range 202 {
		n := 1 + rng.IntN(60)
		ivs := make([]interval, n)
		at := int64(0)
		for i := range ivs {
			at += rng.Int64N(150)
			ivs[i] = interval{at, at + rng.Int64N(300)}
		}
		if trial >= 200 {
			ivs = slices.Clone(touching)
		}
		if trial%2 == 1 { // out of order, as completions come
			rng.Shuffle(len(ivs), func(i, j int) { ivs[i], ivs[j] = ivs[j], ivs[i] })
		}
		var k streamKey
		for _, v := range ivs {
			k.addBusy(v.from, v.to, bridge)
		}
		var got []interval
		for _, v := range k.busy {
			got = append(got, interval{v.from, v.to - bridge})
		}
		// busySets' merge.
		sorted := slices.Clone(ivs)
		slices.SortStableFunc(sorted, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
		var want []interval
		cur := sorted[0]
		for _, v := range sorted[1:] {
			if v.from <= cur.to+bridge {
				cur.to = max(cur.to, v.to)
				continue
			}
			want = append(want, cur)
			cur = v
		}
		want = append(want, cur)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v\nmerged one at a time %v\nsorted %v", trial, ivs, got, want)
		}
	}
}
