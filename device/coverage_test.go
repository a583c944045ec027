package device

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

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
	for _, e := range evs {
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
		for i := range reqs {
			iss := trace.Time(rng.IntN(50))
			reqs[i] = trace.Request{Issue: iss, Complete: iss + trace.Time(rng.IntN(20)) - 2, Bytes: uint32(1+rng.IntN(64)) * 512, Cat: trace.CatRead}
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
