package cfq

import (
	"fmt"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/synth"
)

var ssd = devModel{rotational: false, depth: 32, channels: 4, base: 200 * time.Microsecond, bw: 1 << 30}
var hdd = devModel{rotational: true, depth: 32, channels: 1, base: 100 * time.Microsecond, seek: 6 * time.Millisecond, bw: 120 << 20}

// Seed 001 (Ritesh Harjani, "cfq: Give a chance for arming slice idle
// timer in case of group_idle", LKML 2017-08-09): cgroups cg1 (weight
// 1000) and cg2 (weight 100), one fio job each writing 1 GiB in 32 KiB
// sync writes, on a non-rotational device with one hardware queue of depth
// >= CFQ_HW_QUEUE_MIN. What the published numbers say about the setup:
//
//   - fio reports each job's bytes over the job's OWN runtime. Before the
//     patch the two jobs ran 24.9 s and 25.3 s (41.1 and 40.5 MiB/s);
//     after it file1 finished its 1 GiB in 19.2 s and file2 in 31.4 s. So
//     file2 ran ALONE for the last 12.2 s, and "53.3 vs 32.6 MiB/s" is the
//     ratio of runtimes, 31.4/19.2 = 1.64, not the share the weights give
//     while both run. For two jobs of equal size the fio ratio is
//     2K/(K+1) for an in-contention share K:1, so it can never exceed 2
//     whatever the weights: 1.64 means K = 4.5, K = 10 (the IOPS-mode
//     charge ratio, vfraction 3723:372) would show as 1.82.
//   - Device: before the patch the groups alternate request by request, so
//     two psync writers keep two requests on the device and it never idles:
//     2610 IOPS of 32 KiB in total (1315 + 1295) is its service rate with
//     queueing, 383 µs a request served one at a time (a UFS-like flash
//     device that does not overlap these writes). After the patch only one
//     group has I/O on the device at a time (queue depth 1): file1's 1706
//     IOPS over its 19.2 s, with cg2 getting some slices, gives a queue
//     depth 1 cycle (service + fio's submit path) of 414-480 µs, i.e. a
//     think time of 30-100 µs between a completion and the next pwrite.
//   - The writer is sync, one I/O at a time (psync), and its writes are
//     sync requests (O_DIRECT, REQ_SYNC|REQ_IDLE, or O_SYNC writeback,
//     REQ_SYNC): only sync writes go to the writer's own cfq queue in its
//     own group; buffered writeback would land in the root group (cgroup
//     v1) and the weights could not act at all.
//   - Never more than 2 requests in the driver: hw_tag stays -1 (undecided,
//     truthy), so with slice_idle=0 (nonrot default) CFQ is in IOPS mode:
//     the charge is the requests dispatched in the slice, over vfraction.
//     cfq_group_slice: 300 ms * 3723/4096 = 272 ms for cg1, 27 ms for cg2;
//     queue slices 100 ms and 27 ms (low_latency, floor 2*slice_idle = 0).
//   - Patch text: "set_slice=10" is a jiffies-era log line (the ns kernels
//     print ns): the 100 ms slice of cg1 at HZ=100, so the test kernel was a
//     pre-4.8 Qualcomm (Android) kernel, with slice_idle set to 0 and a
//     nonzero group_idle by its init scripts (HZ/125 = 0 at HZ=100).
//
// The model reproduces the measurement itself (fixed 1 GiB jobs, fio-style
// per-job bandwidth): 4.13 gives 40.8 vs 40.8 MiB/s (25.1 s each), 4.19
// gives 59.3 vs 32.6 MiB/s (17.3 s, 31.4 s): file2 and the total match,
// the ratio is 1.82 against the published 1.64. The remaining gap is the in-contention
// share: the 4.19 code keeps both groups on the service tree (wait_busy on
// the last jiffy of each slice, then expiry with a queued request), so the
// IOPS charge holds the share at 10:1, while the published runtimes imply
// 4.5:1 if the device ran as fast shared as alone, or 10:1 if the shared
// phase ran 22 % slower (think time 30 µs: alone 2417 IOPS, shared 1878).
// The capture is not public, so the two cannot be told apart; no root-group
// I/O (journal) is modelled, none being reported.
func seed001(t *testing.T, kernel string, set map[string]string, think time.Duration) seed001Result {
	const size = 1 << 30
	jobs := []synth.Job{
		{Name: "file1", PID: 685, Cgroup: 1, RW: synth.Write, BS: 32 << 10, Sync: true, Direct: true, ThinkTime: think, Size: size},
		{Name: "file2", PID: 686, Cgroup: 2, RW: synth.Write, BS: 32 << 10, Sync: true, Direct: true, ThinkTime: think, Size: size, Offset: 2 << 30},
	}
	o := replay.Options{Kernel: kernel, Set: set, Weights: map[uint64]int{1: 1000, 2: 100},
		CgroupPaths: map[uint64]string{1: "/cg1", 2: "/cg2"}}
	h, err := newHarness(seed001Dev, jobs, 1, o, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	h.run()
	r := seed001Result{bw1: h.procs[0].fioBW(), bw2: h.procs[1].fioBW(), hwTag: h.s.HWTag()}
	r.ratio = r.bw1 / r.bw2
	r.run1 = time.Duration(h.procs[0].lastDone - h.procs[0].first)
	r.run2 = time.Duration(h.procs[1].lastDone - h.procs[1].first)
	if h.atFirstExit != nil && h.atFirstExit[1] > 0 {
		r.shared = float64(h.atFirstExit[0]) / float64(h.atFirstExit[1])
	}
	return r
}

// seed001Dev serves one request at a time, 383 µs per 32 KiB write (2610
// IOPS: the pre-patch aggregate), and accepts 32 (NCQ tags).
var seed001Dev = devModel{rotational: false, depth: 32, channels: 1, base: 383 * time.Microsecond}

type seed001Result struct {
	bw1, bw2   float64 // fio per-job MiB/s
	ratio      float64 // bw1/bw2, what the patch reports
	shared     float64 // bytes ratio while both jobs ran
	run1, run2 time.Duration
	hwTag      int
}

func (r seed001Result) String() string {
	return fmt.Sprintf("%.1f vs %.1f MiB/s (runtimes %.2fs, %.2fs), fio ratio %.2f, shared-phase ratio %.2f, hw_tag %d",
		r.bw1, r.bw2, r.run1.Seconds(), r.run2.Seconds(), r.ratio, r.shared, r.hwTag)
}

func TestSeed001GroupIdle(t *testing.T) {
	// 96 µs: file2's published 32.6 MiB/s over 31.4 s (2 GiB of total
	// work at queue depth one) fixes the depth-one cycle at 479 µs.
	const think = 96 * time.Microsecond
	r413 := seed001(t, "4.13", nil, think)
	r419 := seed001(t, "4.19", nil, think)
	t.Logf("4.13: %v (published 41.1 vs 40.5, 24.9 s and 25.3 s)", r413)
	t.Logf("4.19: %v (published 53.3 vs 32.6, 19.2 s and 31.4 s, ratio 1.64)", r419)
	if r413.ratio < 0.95 || r413.ratio > 1.05 {
		t.Errorf("4.13 ratio %.2f, want 0.95..1.05 (weights ignored)", r413.ratio)
	}
	if r413.bw1+r413.bw2 < 75 || r413.bw1+r413.bw2 > 90 {
		t.Errorf("4.13 aggregate %.1f MiB/s, want the published 81.6 within 10%%", r413.bw1+r413.bw2)
	}
	// fio's ratio of equal-size jobs is at most 2; the published 1.64 and
	// the model's IOPS-mode 10:1 share (1.82) are both well inside.
	if r419.ratio < 1.5 || r419.ratio > 2 {
		t.Errorf("4.19 fio ratio %.2f, want 1.5..2 (published 1.64)", r419.ratio)
	}
	if r419.shared < 8 || r419.shared > 12 {
		t.Errorf("4.19 shared-phase ratio %.2f, want about 10 (IOPS charge over vfraction 3723:372)", r419.shared)
	}
	// group_idle=0 restores the old behaviour on 4.19, as the patch says.
	r0 := seed001(t, "4.19", map[string]string{"group_idle": "0"}, think)
	t.Logf("4.19 group_idle=0: %v", r0)
	if r0.ratio < 0.95 || r0.ratio > 1.05 {
		t.Errorf("4.19 with group_idle=0: ratio %.2f, want about 1", r0.ratio)
	}
	// The feature switch alone reproduces 4.13 on a 4.19 preset.
	o := replay.Options{Features: map[string]bool{FeatureGroupIdleArm: false}}
	if _, err := New(&harness{dev: seed001Dev}, o); err != nil {
		t.Fatal(err)
	}
}

// TestBlkioTwoReaders is the blkio-controller.txt HOWTO: two sequential
// readers in cgroups of weight 1000 and 500 get disk time 2:1.
func TestBlkioTwoReaders(t *testing.T) {
	jobs := []synth.Job{
		{PID: 101, Cgroup: 1, RW: synth.Read, BS: 128 << 10, Sync: true, Size: 4 << 30, ThinkTime: 20 * time.Microsecond},
		{PID: 102, Cgroup: 2, RW: synth.Read, BS: 128 << 10, Sync: true, Size: 4 << 30, Offset: 100 << 30, ThinkTime: 20 * time.Microsecond},
	}
	o := replay.Options{Weights: map[uint64]int{1: 1000, 2: 500}, CgroupPaths: map[uint64]string{1: "/test1", 2: "/test2"}}
	h, err := newHarness(hdd, jobs, 1, o, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h.run()
	t1, t2 := h.s.GroupStats(1).Time, h.s.GroupStats(2).Time
	ratio := float64(t1) / float64(t2)
	b := h.bytesBy()
	t.Logf("blkio.time %v vs %v: ratio %.3f; bytes ratio %.3f", t1, t2, ratio, float64(b[1])/float64(b[2]))
	if ratio < 1.8 || ratio > 2.2 {
		t.Errorf("disk time ratio %.3f, want 2 within 10%%", ratio)
	}
}

// TestHierarchyExample is Documentation/block/cfq-iosched.txt's example:
// root(leaf 125) with A(500, leaf 750) and B(250); A with AA(500), AB(1000).
func TestHierarchyExample(t *testing.T) {
	paths := map[uint64]string{1: "/A", 2: "/B", 3: "/A/AA", 4: "/A/AB"}
	o := replay.Options{Weights: map[uint64]int{1: 500, 2: 250, 3: 500, 4: 1000}, CgroupPaths: paths,
		Set: map[string]string{"blkio.leaf_weight:/": "125", "blkio.leaf_weight:/A": "750"}}
	var jobs []synth.Job
	for i, cg := range []uint64{0, 1, 2, 3, 4} {
		jobs = append(jobs, synth.Job{PID: uint32(200 + i), Cgroup: cg, RW: synth.Read, BS: 128 << 10, Sync: true,
			Size: 8 << 30, Offset: uint64(i) * (50 << 30), ThinkTime: 20 * time.Microsecond})
	}
	h, err := newHarness(hdd, jobs, 1, o, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h.run()
	want := map[uint64]float64{0: 100 * 125 / 875.0, 1: 100 * 500 / 875.0 * 750 / 2250, 3: 100 * 500 / 875.0 * 500 / 2250,
		4: 100 * 500 / 875.0 * 1000 / 2250, 2: 100 * 250 / 875.0}
	var total time.Duration
	for cg := range want {
		total += h.s.GroupStats(cg).Time
	}
	for _, cg := range []uint64{0, 1, 2, 3, 4} {
		got := 100 * float64(h.s.GroupStats(cg).Time) / float64(total)
		t.Logf("group %-6s share %.1f%% (doc %.1f%%)", map[uint64]string{0: "root", 1: "A", 2: "B", 3: "A/AA", 4: "A/AB"}[cg], got, want[cg])
		if got < want[cg]-3 || got > want[cg]+3 {
			t.Errorf("cgroup %d: share %.1f%%, want %.1f%% within 3 points", cg, got, want[cg])
		}
	}
}

type llResult struct {
	maxLat time.Duration
	maxAt  time.Duration
	mbps   float64
}

func lowLatencyRun(t *testing.T, n int, pattern synth.Pattern, bs uint32, depth int, ll string) llResult {
	var jobs []synth.Job
	for i := 0; i < n; i++ {
		jobs = append(jobs, synth.Job{PID: uint32(300 + i), RW: pattern, BS: bs, IODepth: depth, Sync: depth == 1,
			Size: 2 << 30, Offset: uint64(i) * (20 << 30), ThinkTime: 20 * time.Microsecond})
	}
	run := 12 * time.Second
	h, err := newHarness(hdd, jobs, 3, replay.Options{Set: map[string]string{"low_latency": ll}}, run)
	if err != nil {
		t.Fatal(err)
	}
	h.run()
	var r llResult
	var bytes uint64
	for _, p := range h.procs {
		if time.Duration(p.maxLat) > r.maxLat {
			r.maxLat, r.maxAt = time.Duration(p.maxLat), time.Duration(p.maxAt)
		}
		bytes += p.bytes
	}
	r.mbps = float64(bytes) / run.Seconds() / 1e6
	return r
}

// TestLowLatency compares low_latency off and on for 32 readers, the
// tests of Corrado Zoccolo's "[RFC] cfq: adapt slice to number of
// processes doing I/O" (LKML 2009-09-03, the origin of low_latency slice
// scaling; merged as 5db5d64277bf "cfq-iosched: adapt slice to number of
// processes doing I/O"). Published setup: "on a rotational disk", two
// separate tests, 32 concurrent processes each (his earlier deadline
// patches used tiotest with 32 threads, one file each, which fits):
//
//   - 32 sequential readers: 28093 -> 24393 KB/s (-13 %), max latency
//     3.781 s -> 1.115 s (3.4x). Reproduced in kind: the model gives a
//     4-5x cut of the maximum latency (each reader waits a round of 32
//     slices: 100 ms slices off, the 16 ms floor 2*slice_idle on) for a
//     20-25 % throughput cost. The cost is larger than published because
//     the harness disk pays a full 6 ms seek at every queue switch, while
//     tiotest's adjacent files and the drive's segmented read cache made a
//     switch cheaper (a -13 % cost at a 16 ms slice means about 2.5 ms per
//     switch).
//   - 32 random readers: 466 -> 477 KB/s, max latency 7.667 s -> 1.728 s.
//     NOT reproducible with the 4.19 rules, and the model must not fake
//     it: the RFC was measured on a 2.6.31 CFQ, where a seeky queue lost
//     its idle window only when hw_tag was set ("cfqd->hw_tag &&
//     CIC_SEEKY(cic)"), so on that (non-NCQ) disk every random reader
//     still got a full slice with a short 2 ms idle, and a round of 32
//     readers took seconds. Since 2.6.33 (Zoccolo's own workload-tree
//     rework) a seeky, non-deep sync queue has no idle window
//     (cfq_update_idle_window) and goes to the SYNC_NOIDLE tree, where the
//     32 queues are served one request each, round robin, in one shared
//     workload slice; low_latency only shortens the first, still-idling
//     slice of each new queue. The model's random-reader max latency
//     (about 1.2 s -> 0.8 s, psync) comes from that start-up phase only.
func TestLowLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	seqOff := lowLatencyRun(t, 32, synth.Read, 64<<10, 1, "0")
	seqOn := lowLatencyRun(t, 32, synth.Read, 64<<10, 1, "1")
	rndOff := lowLatencyRun(t, 32, synth.RandRead, 4<<10, 4, "0")
	rndOn := lowLatencyRun(t, 32, synth.RandRead, 4<<10, 4, "1")
	rnd1Off := lowLatencyRun(t, 32, synth.RandRead, 4<<10, 1, "0")
	rnd1On := lowLatencyRun(t, 32, synth.RandRead, 4<<10, 1, "1")
	t.Logf("32 seq readers:          off max %v %.1f MB/s; on max %v %.1f MB/s", seqOff.maxLat, seqOff.mbps, seqOn.maxLat, seqOn.mbps)
	t.Logf("32 rand readers qd4:     off max %v (at %v) %.2f MB/s; on max %v (at %v) %.2f MB/s", rndOff.maxLat, rndOff.maxAt, rndOff.mbps, rndOn.maxLat, rndOn.maxAt, rndOn.mbps)
	t.Logf("32 rand readers psync:   off max %v %.2f MB/s; on max %v %.2f MB/s", rnd1Off.maxLat, rnd1Off.mbps, rnd1On.maxLat, rnd1On.mbps)
	// See above: the RFC's 4.4x cut for random readers is a 2.6.31
	// behaviour; in 4.19 only the start-up slices shrink.
	if float64(rnd1On.maxLat)*1.3 > float64(rnd1Off.maxLat) {
		t.Errorf("random readers: low_latency cut max latency only from %v to %v", rnd1Off.maxLat, rnd1On.maxLat)
	}
	if seqOn.maxLat*3 > seqOff.maxLat {
		t.Errorf("sequential readers: low_latency cut max latency only from %v to %v", seqOff.maxLat, seqOn.maxLat)
	}
	if seqOn.mbps < 0.7*seqOff.mbps || seqOn.mbps > 0.95*seqOff.mbps {
		t.Errorf("sequential throughput went from %.1f to %.1f MB/s, want a modest cost (5..30 %%)", seqOff.mbps, seqOn.mbps)
	}
}
