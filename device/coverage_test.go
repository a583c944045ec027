package device

import (
	"cmp"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// sweepCoverage is CoverageOf's definition run literally: one sweep over
// every issue and completion in time order (a completion before an issue
// at the same time, ties by request), counting the requests on the device.
func sweepCoverage(reqs []trace.Request) *Coverage {
	type ev struct {
		t    trace.Time
		done bool
		i    int
	}
	var evs []ev
	for i := range reqs {
		r := &reqs[i]
		if r.Flags&trace.FlagMergedAway != 0 || !r.Issue.Valid() || !r.Complete.Valid() || r.Complete < r.Issue {
			continue
		}
		evs = append(evs, ev{r.Issue, false, i}, ev{r.Complete, true, i})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if a.done != b.done {
			if a.done {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.i, b.i)
	})
	c := &Coverage{Depths: make([]int, depthBuckets)}
	var ops [numOps]OpCoverage
	k := 0
	// The sustained load: k integrated over each window of SustainedWindow
	// from the first issue, one window at a time.
	area := map[int64]int64{}
	const w = int64(SustainedWindow)
	for i, e := range evs {
		if i > 0 {
			t0 := int64(evs[0].t)
			for from := int64(evs[i-1].t); from < int64(e.t); {
				win := (from - t0) / w
				end := min(int64(e.t), t0+(win+1)*w)
				area[win] += int64(max(k, 0)) * (end - from)
				from = end
			}
		}
		if e.done {
			k--
			continue
		}
		k++
		r := &reqs[e.i]
		c.Requests++
		c.Depths[min(InflightBucket(k), depthBuckets-1)]++
		c.MaxDepth = max(c.MaxDepth, k)
		o := OpOf(r.Cat, r.Bytes)
		oc := &ops[o]
		if oc.Requests == 0 || r.Bytes < oc.MinBytes {
			oc.MinBytes = r.Bytes
		}
		oc.MaxBytes = max(oc.MaxBytes, r.Bytes)
		oc.Requests++
	}
	for o := range numOps {
		if ops[o].Requests > 0 {
			ops[o].Op = Op(o).String()
			c.Ops = append(c.Ops, ops[o])
		}
	}
	if len(evs) > 0 {
		c.Sustained = make([]int, SustainedBins)
		for _, a := range area {
			if a > 0 {
				c.Sustained[sustainedBin(float64(a)/float64(w))]++
			}
		}
	}
	return c
}

// TestCoverageDepthsByHand: three requests, times in us. A issues at 0
// and completes at 10; B issues at 10 (A's completion at 10 counts first:
// k=1) and completes at 30; C issues at 20 (B on the device: k=2) and
// completes at 25. A merged-away request and one never completed are not
// counted.
func TestCoverageDepthsByHand(t *testing.T) {
	us := func(v int64) trace.Time { return trace.Time(v * 1000) }
	reqs := []trace.Request{
		{Issue: us(0), Complete: us(10), Cat: trace.CatRead, Bytes: 4096},
		{Issue: us(10), Complete: us(30), Cat: trace.CatWrite, Bytes: 8192},
		{Issue: us(20), Complete: us(25), Cat: trace.CatRead, Bytes: 512},
		{Issue: us(5), Complete: us(50), Cat: trace.CatRead, Bytes: 4096, Flags: trace.FlagMergedAway},
		{Issue: us(5), Complete: trace.NoTime, Cat: trace.CatRead, Bytes: 4096},
	}
	c := CoverageOf(reqs)
	if c.Requests != 3 || c.MaxDepth != 2 || c.Depths[0] != 2 || c.Depths[1] != 1 {
		t.Errorf("requests %d, max depth %d, depths %v: want 3, 2, [2 1 ...]", c.Requests, c.MaxDepth, c.Depths)
	}
	want := []OpCoverage{{Op: "read", Requests: 2, MinBytes: 512, MaxBytes: 4096}, {Op: "write", Requests: 1, MinBytes: 8192, MaxBytes: 8192}}
	if !reflect.DeepEqual(c.Ops, want) {
		t.Errorf("ops %+v, want %+v", c.Ops, want)
	}
}

// TestCoverageMatchesSweep: CoverageOf (issues and completions sorted
// apart) gives what the literal sweep gives, on random requests with many
// ties of times, in and out of issue order.
func TestCoverageMatchesSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(300)
		reqs := make([]trace.Request, n)
		// Times in ns, or in ms so that the requests span many windows
		// of the sustained load.
		unit := trace.Time(1)
		if round%3 == 1 {
			unit = trace.Time(time.Millisecond)
		}
		for i := range reqs {
			iss := trace.Time(rng.IntN(50))
			reqs[i] = trace.Request{Issue: iss * unit, Complete: (iss + trace.Time(rng.IntN(20)) - 2) * unit, Bytes: uint32(1+rng.IntN(64)) * 512, Cat: trace.CatRead}
			if rng.IntN(3) == 0 {
				reqs[i].Cat = trace.CatWrite
			}
			if rng.IntN(10) == 0 {
				reqs[i].Complete = trace.NoTime
			}
		}
		if round%2 == 0 {
			slices.SortFunc(reqs, func(a, b trace.Request) int { return cmp.Compare(a.Issue, b.Issue) })
		}
		got, want := CoverageOf(reqs), sweepCoverage(reqs)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: got %+v, want %+v", round, got, want)
		}
	}
}

// TestCoverageMatchesSweepReal: the same on a recorded capture's requests.
func TestCoverageMatchesSweepReal(t *testing.T) {
	reqs := coverageCapture(t)
	got, want := CoverageOf(reqs), sweepCoverage(reqs)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// closedLoop returns the requests of a device held at depth requests in
// flight by a closed loop for cycles cycles: every cycle of svc the
// depth requests issued at its start, us apart, all complete together at
// its end (a bunch, as a loop device delivers them), and the loop issues
// the next ones.
func closedLoop(depth, cycles int, svc, us trace.Time) []trace.Request {
	var reqs []trace.Request
	for c := range cycles {
		start := trace.Time(c) * svc
		for i := range depth {
			reqs = append(reqs, trace.Request{ID: uint64(len(reqs) + 1), Issue: start + trace.Time(i)*us, Complete: start + svc, Cat: trace.CatRead, Bytes: 4096})
		}
	}
	return reqs
}

// TestCoverageSustainedByHand: a device held at 16 requests whose
// completions come in one bunch per 1 ms cycle, refilled 1 us apart:
// its issues see every count from 1 to 16, but each 10 ms window holds
// 16 less the refill's 120 us (15.9: the entry of 16). Another held at 4
// issues at counts 1 to 4, which the first one saw often: the issue
// counts do not tell them apart, the sustained load does.
func TestCoverageSustainedByHand(t *testing.T) {
	ms, us := trace.Time(time.Millisecond), trace.Time(time.Microsecond)
	cal := CoverageOf(closedLoop(16, 1000, ms, us))
	if got := cal.Sustained[sustainedBin(16)]; got != 100 {
		t.Errorf("sustained %v: want the 100 windows at 16 (entry %d)", cal.Sustained, sustainedBin(16))
	}
	for b := range 5 { // k = 1, 2, 3-4, 5-8, 9-16: 1000 issues at each count
		if cal.Depths[b] < minCovered {
			t.Fatalf("depths %v: want every bucket up to 9-16 seen", cal.Depths)
		}
	}
	four := CoverageOf(closedLoop(4, 1000, ms, us))
	if got := four.Sustained[sustainedBin(4)]; got != 100 {
		t.Errorf("sustained at 4: %v, want the 100 windows at entry %d", four.Sustained, sustainedBin(4))
	}
	out := cal.Outside(four)
	if len(out) != 1 || !strings.Contains(out[0], "the median predicted 10ms window held about 4 requests") ||
		!strings.Contains(out[0], "held 16 to 16") || !strings.Contains(out[0], "100% of the predicted windows") {
		t.Errorf("Outside: %q, want the one sentence on the sustained load (4 against 16, every window)", out)
	}
	if got, want := cal.SustainedSummary(), "load held over 10ms windows: about 16 requests on the device (median), 16 to 16 (10th to 90th percentile)"; got != want {
		t.Errorf("SustainedSummary: %q, want %q", got, want)
	}
	if out := cal.Outside(cal); len(out) != 0 {
		t.Errorf("Outside at the calibration's own load: %q, want none", out)
	}
	// A model saved before version 9 has no sustained load: not checked.
	old := *cal
	old.Sustained = nil
	if out := old.Outside(four); len(out) != 0 {
		t.Errorf("Outside without the sustained load: %q, want none", out)
	}
	if s := old.SustainedSummary(); s != "" {
		t.Errorf("SustainedSummary without the sustained load: %q", s)
	}
}

// TestCoverageSustainedLongSpan: a request on the device for 2^62 ns (a
// capture whose times were corrupted) fills its windows in one step, not
// one at a time, and the pooled coverage of a measured and an unmeasured
// one is unmeasured.
func TestCoverageSustainedLongSpan(t *testing.T) {
	done := make(chan *Coverage, 1)
	go func() {
		done <- CoverageOf([]trace.Request{{Issue: 0, Complete: 1 << 62, Cat: trace.CatRead, Bytes: 4096}})
	}()
	var c *Coverage
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("CoverageOf of a request on the device for 2^62 ns did not return in 10 s")
	}
	if c.Sustained[0] != math.MaxInt32 && c.Sustained[0] < 1<<30 {
		t.Errorf("sustained %v: want its windows (about 4.6e11, capped) at entry 0", c.Sustained[:2])
	}
	pool := &Coverage{}
	pool.Merge(CoverageOf(closedLoop(4, 10, trace.Time(time.Millisecond), 1000)))
	if len(pool.Sustained) == 0 {
		t.Fatal("a pool of one measured coverage has no sustained load")
	}
	pool.Merge(&Coverage{Requests: 5, Depths: make([]int, depthBuckets)})
	if pool.Sustained != nil {
		t.Errorf("pooled with an unmeasured coverage: sustained %v, want nil", pool.Sustained)
	}
}
