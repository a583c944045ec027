package bfq

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// bfq_update_inject_limit (every kernel since 5.2, so every preset; the
// model's adaptive-inject-limit, off by default: features.go says why), by
// hand on a device that serves one request at a time. A sync queue W in a
// weight-300 group issues a 16 KiB read 2 ms after each completion (0.1 ms
// + 32 x 2.7 us = 0.186 ms of service) and has a long think time from its
// history (mean above slice_idle/2; idled on, W is busy at each arrival
// and bfq_update_io_thinktime takes no new sample), so BFQ idles on it (8
// ms; groups of different weights) and its inject limit is reset to 1. A
// sequential reader R in a weight-700 group keeps two 1.25 MiB reads
// queued (0.1 + 2560 x 2.7 us = 7.0 ms each): injected while W idles, and
// W's next request, arriving 2 ms later, waits for it. Until W has a
// baseline (last_serv_time_ns, sampled on a completion with nothing else
// in flight) nothing changes the limit; once it has, the first sampled
// request that waited behind an injected read took at least 1.5x it and
// the limit drops to 0 (decrease_time_jif set): bfq_choose_bfqq_for_injection
// returns nothing while tot_rq_in_driver >= 0, and no reset comes before
// bfq_add_request's, 1 s after the decrease. So from 0.1 s to 1.1 s R is
// injected once, the read that made the limit 0; at a limit fixed at 1
// (adaptive-inject-limit off) six times in each of W's slices.
//
// This is what fs-bfq-fsync-vs-seqread's kernel did: it injected the
// buffered reader (681) into the fsync writer's (661) idle slots 8 times
// from 1.791 s to 1.797 s, then, with nothing in flight from 1.798 s, the
// reader's next 1.25 MiB read queued since 1.794 s and budget left for 3
// more (30496 - 8 x 2560 sectors), dispatched nothing ("select_queue: no
// queue returned") until the reader's own slice at 2.363 s: the writer's
// 16 KiB write issued at 1.797 s behind the reader's read took 0.76 ms
// from insertion to completion (about 0.11 ms alone).
func TestInjectLimitAdapts(t *testing.T) {
	run := func(features map[string]bool) []trace.Time {
		h := newFakeHost(true, 32, 100*trace.Time(1000))
		h.perSect = 2700
		h.injectedAt = map[uint32][]trace.Time{}
		o := opts("6.18", map[string]string{"low_latency": "0"})
		o.Features = features
		o.Weights = map[uint64]int{661: 300, 681: 700}
		o.CgroupPaths = map[uint64]string{1: "/", 661: "/tsched-fw", 681: "/tsched-fr"}
		s := newSched(t, h, o)
		h.add(&proc{pid: 10, cgroup: 661, sector: 1 << 20, size: 16 << 10, think: 2 * ms, stop: 1 << 62})
		h.add(&proc{pid: 20, cgroup: 681, sector: 1 << 26, size: 1280 << 10, depth: 2, stop: 1 << 62})
		h.run(1)
		// W's queue has a long think time from the start, as the
		// capture's writer's had (short_ttime 0 in each of its expire
		// messages): every sample at the 2·slice_idle cap. Idled on, W
		// is busy at each arrival and takes no new sample
		// (bfq_update_io_thinktime), so it stays so.
		w := s.bicFor(10, 661).q[1]
		w.tt.samples, w.tt.total, w.tt.mean = 256, 256*uint64(2*s.sliceIdle), uint64(2*s.sliceIdle)
		w.shortTtime = false
		s.resetInjectLimit(w)
		h.run(2000 * ms)
		if w.shortTtime {
			t.Fatal("W's think time became short")
		}
		return h.injectedAt[20]
	}
	adaptive := run(map[string]bool{"adaptive-inject-limit": true})
	fixed := run(map[string]bool{"adaptive-inject-limit": false})
	// W's first slice (from 21 ms) ends before W has a baseline: its
	// requests all overlapped R's. From 100 ms W has one, and until the
	// first reset (1 s after the first decrease, at about 190 ms) the
	// adaptive limit lets one read in: the one whose delay makes it 0.
	in := func(ts []trace.Time) int {
		n := 0
		for _, x := range ts {
			if x >= 100*ms && x < 1100*ms {
				n++
			}
		}
		return n
	}
	a, f := in(adaptive), in(fixed)
	t.Logf("R injected into W's slices from 0.1 s to 1.1 s: %d times with the adaptive limit, %d at a fixed limit of 1 (in 2 s: %d, %d)",
		a, f, len(adaptive), len(fixed))
	if f < 24 {
		t.Fatalf("at a fixed limit of 1, R injected %d times from 0.1 s to 1.1 s; want it at each of W's idles, 6 a slice in 5 slices (this test needs the injection to happen)", f)
	}
	if a != 1 {
		t.Errorf("with the adaptive limit R was injected %d times from 0.1 s to 1.1 s, want 1: once W's request waited behind it the limit is 0 until the reset", a)
	}
}
