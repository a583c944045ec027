package device

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestSaturatedBelow: once the slow average of the requests on the device
// is below SaturatedBelow, the latency scales with them (k, or their fast
// average when larger: the throughput at SaturatedBelow is held); at and
// above it the fitted line applies. By hand: base 3.85 ms, no line
// (parallelism 45, slope 0), SaturatedBelow 43: 3.85 ms * max(k, avg)/43
// while k, avg and the slow average are below 43, else 3.85 ms.
func TestSaturatedBelow(t *testing.T) {
	m := &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
		Parallelism: 45, SaturatedBelow: 43, SaturationWindow: time.Millisecond,
		Read: &OpTiming{Base: 3850 * time.Microsecond, N: 100},
	}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	n := m.NonRotational
	for _, c := range []struct {
		k         int
		avg, slow float64
		want      float64
	}{{5, 5, 5, 3850e3 * 5 / 43}, {5, 20, 30, 3850e3 * 20 / 43}, {30, 5, 10, 3850e3 * 30 / 43}, {43, 5, 5, 3850e3},
		{10, 43, 5, 3850e3}, {10, 10, 43, 3850e3}, {50, 50, 50, 3850e3}} {
		if got := n.latencyAvg(c.k, c.avg, c.slow, trace.CatRead, 4096, 0, false, 0.5); math.Abs(got-c.want) > 1 {
			t.Errorf("k %d, averages %.0f and %.0f: latency %.0f ns, want %.0f", c.k, c.avg, c.slow, got, c.want)
		}
	}
	// A device kept at 5 requests for 200 windows (each completion
	// answered by an issue) forgets the capture's 43: the slow average is
	// 5 within 38*exp(-20), so the latency is 5/43 of 3.85 ms.
	dev := m.NewDevice(1)
	var on []*replay.Request
	id := uint64(0)
	issue := func(now trace.Time) trace.Time {
		id++
		r := &replay.Request{ID: id, Sector: id * 1000, Bytes: 4096, Cat: trace.CatRead}
		on = append(on, r)
		return dev.Issue(now, r) - now
	}
	for range 5 {
		issue(0)
	}
	var last trace.Time
	for i := 1; i <= 2000; i++ {
		now := trace.Time(i) * 100_000 // 100 us apart: 200 ms, 200 windows
		dev.Done(now, on[0])
		on = on[1:]
		last = issue(now)
	}
	if want := 3850e3 * 5 / 43; math.Abs(float64(last)-want) > 0.001*want {
		t.Errorf("after 200 windows at 5 on the device: latency %d ns, want %.0f", last, want)
	}
	m.NonRotational.SaturatedBelow = -1
	if err := m.Validate(); err == nil {
		t.Error("Validate accepted saturated_below -1")
	}
	m.NonRotational.SaturatedBelow, m.NonRotational.SaturationWindow = 43, 0
	if err := m.Validate(); err == nil {
		t.Error("Validate accepted saturated_below without a window")
	}
}

// TestLowDepth: the time measure. Twenty requests issued together, done
// after 1 ms, then one alone for 9 ms (a burst, then a nearly idle
// device): most issues saw many on the device, but it spent 9 of its 10
// busy ms at depth 1, more than a tenth: 1. Nine requests at once for 9 ms
// and one alone for 1 ms: a tenth at depth 1 is not more than a tenth,
// and depth 9 holds the rest: 9.
func TestLowDepth(t *testing.T) {
	ms := trace.Time(time.Millisecond)
	var ss []sample
	for k := 1; k <= 20; k++ {
		ss = append(ss, sample{issue: 0, done: ms, k: k})
	}
	ss = append(ss, sample{issue: ms, done: 10 * ms, k: 1})
	if got := lowDepth(ss); got != 1 {
		t.Errorf("lowDepth = %d, want 1", got)
	}
	ss = ss[:0]
	for k := 1; k <= 9; k++ {
		ss = append(ss, sample{issue: 0, done: 9 * ms, k: k})
	}
	ss = append(ss, sample{issue: 9 * ms, done: 10 * ms, k: 1})
	if got := lowDepth(ss); got != 9 {
		t.Errorf("lowDepth = %d, want 9", got)
	}
}

// lowDepthSort is lowDepth's definition run literally: every issue and
// completion sorted together by time, a completion first at equal times.
func lowDepthSort(ss []sample) int {
	type ev struct {
		t trace.Time
		d int
	}
	var evs []ev
	for _, s := range ss {
		if s.done >= s.issue {
			evs = append(evs, ev{s.issue, 1}, ev{s.done, -1})
		}
	}
	if len(evs) == 0 {
		return 0
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return cmp.Compare(a.t, b.t)
		}
		return cmp.Compare(a.d, b.d)
	})
	var at []trace.Time
	k := 0
	for i, e := range evs {
		if i > 0 && k > 0 {
			for len(at) <= k {
				at = append(at, 0)
			}
			at[k] += e.t - evs[i-1].t
		}
		k += e.d
	}
	var busy, below trace.Time
	for _, t := range at {
		busy += t
	}
	for k := 1; k < len(at); k++ {
		if below+at[k] > busy/10 {
			return k
		}
		below += at[k]
	}
	return max(len(at)-1, 0)
}

// TestLowDepthMatchesSort: lowDepth (issues and completions sorted apart
// and merged) gives what the literal sort gives, on random samples with
// many equal times, some completing at their issue and some before it
// (left out).
func TestLowDepthMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		ss := make([]sample, 1+rng.IntN(200))
		at := trace.Time(0)
		for i := range ss {
			at += trace.Time(rng.IntN(3))
			ss[i] = sample{issue: at, done: at + trace.Time(rng.IntN(30)) - 1}
		}
		if got, want := lowDepth(ss), lowDepthSort(ss); got != want {
			t.Fatalf("round %d: lowDepth %d, the literal sort %d", round, got, want)
		}
	}
}
