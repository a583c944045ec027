package bfq

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Seed 000 (two cgroups 100:900, one 4 KiB random reader each, iodepth
// 64) with the weight-900 reader stalling: after every 640 submissions it
// waits for its I/O and sleeps 12.5 ms (fio's thinktime; in
// wi-seed000-mqdl, recorded at a load average of 23.5, fio stalled up to
// 13 ms, and the closed-loop replay keeps those stalls). By hand from
// block/bfq-iosched.c (6.18), low_latency=0:
//
//   - bfq_arm_slice_timer: cg2's queue is in service and plugs with nothing
//     in flight; two groups with pending requests make the scenario
//     asymmetric, so the timer is the full slice_idle, 8 ms < 12.5 ms:
//     each stall ends in a TOO_IDLE expiration and bfq_del_bfqq_busy.
//   - bfq_update_io_thinktime samples only a queue neither busy nor with
//     requests dispatched: the creation sample (last_end_request = now + 1,
//     so the u64 difference clamps to 2·slice_idle = 16 ms), then one
//     12.5 ms sample at the end of each stall. ttime_samples 32, 60, 84:
//     the third (end of stall 2) is valid (> 80) with mean ≈ 13 ms >
//     slice_idle/2, so bfq_update_has_short_ttime clears has_short_ttime.
//   - bfq_add_request -> bfq_check_waker: each stall's first request finds
//     its process with one request allocated, the last completion cg1's
//     (in service since the expiration) less than 4 ms before: tentative
//     waker at the end of stall 2, detections 2 and 3 at the ends of
//     stalls 3 and 4, so "set waker" at the end of stall 4 (all within
//     128·slice_idle).
//   - bfq_select_queue: from then on, while cg2 is in service with nothing
//     queued and requests in flight or the timer armed, it serves the
//     waker's next request (no inject limit applies to it), and
//     bfq_remove_request resets the waker's budget each time it empties.
//     On a device that serves 64 + 64 requests concurrently cg1 runs at
//     full rate all the time while cg2 runs 640 requests in 10 ms every
//     22.5 ms: cg1's share of the service is about 22.5/32.5 = 0.69.
//
// With low_latency=1 both queues are weight-raised (interactive, coeff
// 30) and bfq_arm_slice_timer raises the timer to 20 ms: a 12.5 ms stall
// never expires cg2, which stays busy, so no think time is sampled after
// creation, has_short_ttime stays set and no waker is detected while the
// raising lasts (max_service_from_wr, 120000 sectors: 15000 of cg2's
// requests, more than the 200 ms run gives it).
//
// The real kernel (6.18) did this on the rig: this job at 100:900 with
// low_latency=0 (wi-seed000-stall-bfq-10-90-ll0) gave cg1 71.9 MiB/s and
// cg2 75.8 ("set waker" for cg2's queue 137 ms in); without the stall, at
// a load average of 3.9 (wi-seed000-bfq-10-90-ll0-2), cg1 0.133 of the
// bytes.
func TestStallingReaderGetsWaker(t *testing.T) {
	const (
		cg1, cg2   = 621, 641
		pid1, pid2 = 100, 200
		stall      = 12500 * trace.Time(1000)
	)
	run := func(lowLatency string, end trace.Time) (*fakeHost, *proc, trace.Time, [2]uint64) {
		h := newFakeHost(true, 128, ms)
		h.parallel = true
		h.keepLogs = true
		newSched(t, h, replay.Options{Weights: map[uint64]int{cg1: 100, cg2: 900},
			CgroupPaths: map[uint64]string{1: "/", cg1: "/tsched-cg1", cg2: "/tsched-cg2"},
			Set:         map[string]string{"low_latency": lowLatency}})
		h.add(&proc{pid: pid1, cgroup: cg1, base: 0, region: 1 << 21, depth: 64, stop: 1 << 62})
		p2 := &proc{pid: pid2, cgroup: cg2, base: 1 << 22, region: 1 << 21, depth: 64, stop: 1 << 62,
			stallEvery: 640, stall: stall}
		h.add(p2)
		waker := fmt.Sprintf("bfq%dS set waker bfq%dS", pid2, pid1)
		var at trace.Time
		var before map[uint64]uint64
		for t := ms; t <= end; t += ms {
			h.run(t)
			if at == 0 {
				if l, ok := h.first(waker); ok {
					at = l.t
					before = map[uint64]uint64{cg1: h.served[cg1], cg2: h.served[cg2]}
				}
			}
		}
		var after [2]uint64
		if at != 0 {
			after = [2]uint64{h.served[cg1] - before[cg1], h.served[cg2] - before[cg2]}
		}
		return h, p2, at, after
	}

	h, p2, at, after := run("0", 400*ms)
	if len(p2.stallEnds) < 6 {
		t.Fatalf("cg2 stalled %d times in 400 ms, want at least 6", len(p2.stallEnds))
	}
	tent, ok := h.first(fmt.Sprintf("bfq%dS set tentative waker bfq%dS", pid2, pid1))
	if !ok || tent.t != p2.stallEnds[1] {
		t.Errorf("low_latency=0: tentative waker at %v (found %v), want at the end of cg2's second stall, %v", tent.t, ok, p2.stallEnds[1])
	}
	if at != p2.stallEnds[3] {
		t.Fatalf("low_latency=0: cg2 got cg1 as its waker at %v, want at the end of its fourth stall, %v (stalls ended %v)", at, p2.stallEnds[3], p2.stallEnds[:4])
	}
	share := float64(after[0]) / float64(after[0]+after[1])
	t.Logf("low_latency=0: waker at %v; after it cg1 served %d sectors, cg2 %d: cg1 share %.3f", at, after[0], after[1], share)
	if share < 0.6 || share > 0.78 {
		t.Errorf("low_latency=0: cg1's share after the waker %.3f, want about 0.69 (22.5/32.5)", share)
	}

	h1, p21, at1, _ := run("1", 200*ms)
	if len(p21.stallEnds) < 3 {
		t.Fatalf("low_latency=1: cg2 stalled %d times in 200 ms, want at least 3", len(p21.stallEnds))
	}
	if at1 != 0 || h1.count("set tentative waker") != 0 {
		t.Errorf("low_latency=1: waker at %v, %d tentative wakers; want none while cg2 is weight-raised", at1, h1.count("set tentative waker"))
	}
	for _, l := range h1.logs {
		if strings.HasPrefix(l.text, fmt.Sprintf("bfq%dS expire (0,", pid2)) {
			t.Errorf("low_latency=1: cg2 expired TOO_IDLE at %v; the 20 ms timer of a raised queue outlasts a 12.5 ms stall", l.t)
			break
		}
	}
}
