package bfq

import (
	"fmt"
	"sort"
	"strings"
)

// Feature is one historical behaviour of BFQ that a kernel version has or
// lacks, switchable with --feature NAME=on|off.
type Feature struct {
	Name        string
	Description string
	Kernels     []string // the --kernel presets that have it
}

// Kernels lists the --kernel presets, oldest first. DefaultKernel is used
// when Options.Kernel is empty.
var kernelPresets = []string{"5.10", "5.11", "5.12", "5.13", "6.1", "6.2", "6.18"}

// DefaultKernel is the preset used when Options.Kernel is empty.
const DefaultKernel = "6.18"

// featureSpec ties a feature to the first kernel that has it (since) or the
// last one that has it (until).
type featureSpec struct {
	Feature
	since, until string
	// offByDefault: every preset's kernel has it, but the model leaves it
	// off unless --feature NAME=on asks (the description says why).
	offByDefault bool
}

func kernelIndex(v string) int {
	for i, k := range kernelPresets {
		if k == v {
			return i
		}
	}
	return -1
}

func featureSpecs() []featureSpec {
	return []featureSpec{
		{Feature: Feature{Name: "legacy-group-count", Description: "groups with pending requests counted the ≤ 6.1 way: root never counted, every ancestor of a busy queue counted on activation, uncounted lazily, and the asymmetric test is count > 0, so any non-root cgroup forces idling (bfq_asymmetric_scenario before Yu Kuai's 6.2 series)"}, until: "6.1"},
		{Feature: Feature{Name: "ttime-every-arrival", Description: "think time sampled on every arrival, also while the queue has I/O queued or in flight (bfq_update_io_thinktime before Jan Kara's 5.12 fix)"}, until: "5.11"},
		{Feature: Feature{Name: "stale-in-serv-last-pos", Description: "in_serv_last_pos not reset when a new queue is set in service, so a just-scheduled queue looks close to the previous one's position: false cooperator merges (__bfq_set_in_service_queue before 5.12)"}, until: "5.11"},
		{Feature: Feature{Name: "ttime-full-slice-threshold", Description: "a queue has a long think time when its mean exceeds slice_idle (5.12 halved the threshold to slice_idle/2)"}, until: "5.11"},
		{Feature: Feature{Name: "io-bound-by-count", Description: "IO_bound set after 120 requests arriving within the idle window and cleared on TOO_IDLE expiry with service <= 2/10 budget (before bfq_update_io_intensity, 5.12)"}, until: "5.11"},
		{Feature: Feature{Name: "wr-any-weight", Description: "weight raising also for queues with a non-default weight (5.12 restricted it to new_weight == 40)"}, until: "5.11"},
		{Feature: Feature{Name: "adaptive-inject-limit", Description: "the inject limit adapts to the total service time of the in-service queue's first requests (bfq_update_inject_limit: +1 while under 1.5x the baseline sampled with nothing in flight, -1 above it; every kernel since 5.2). Off by default: on, what was within target falls out (bench/fidelity -seeds 2,3: fs-bfq-fsync-vs-seqread's D2C demerit 23.8 % for 10.5 %, fs-bfq-pgbench's flushes 2171 for the real 2172, fs-mqdl-writeback through BFQ 4.5 share points off for 1.1), though fs-bfq-pgbench's queue merges then come at the kernel's times; fs-bfq-fsync-vs-seqread's buffered reader (/tsched-fr) at seeds 1/2/3 is +74.7/+372/+9.9 % on (share +12.9/+35.2/+1.7 points), +74.3/+32.7/+30.3 % off (+13.2/+5.9/+6.1). The capture's kernel injected that reader 23 times in 2.5 s (5 into jbd2's slices, 18 into the fsync writer's, then none from 1.797 s to its own slice at 2.363 s, with a read queued and budget left: the limit had dropped to 0), the model off injects it whenever nothing is in flight while the writer is idled on and the reader's budget covers the read: 2 a slice while the reader is weight-raised (budget 7624 sectors), up to 11 after (30496; TestInjectLimitAdapts). Off, the limit stays at its reset value (0 for a short think time, 1 for a long one)"}, offByDefault: true},
		{Feature: Feature{Name: "entity-request-limit", Description: "bfqq_request_over_limit in bfq_limit_depth (5.18, Jan Kara): a queue, or a group above it, that already has its weight's share of the tags allocated (DIV_ROUND_CLOSEST(limit*weight, wsum) at each level) allocates with shallow depth 1: on 6.18 one tag, bit 0 of the scheduler tag bitmap's first word (replay's tag map; one bit a word with shallow-depth-per-word), kept while it sleeps for it. Off by default: on, fs-bfq-2bufread-idle2ms's reader 23228 is over its limit at 373 allocations in 0.02-0.60 s (limit DIV_ROUND_CLOSEST(256*40, 120040) = 0: the model raises the other reader soft real-time, weight 120000, and not this one: not a BFQ deviation but start-up timing: the model's device serves the two readers' first 64 KiB reads in 3.5 ms, the capture's in 0.6 and 1.5 ms, so the model's 23228 is preempted while idling with nothing in flight at 3.6 and 8.3 ms and bfq_bfqq_expire computes soft_rt_next_start = last_idle_bklogged + HZ*service_from_backlogged/bfq_wr_max_softrt_rate: 0 + 250*128/7000 = 4 jiffies at 3.6 ms, 0 + 250*2560/7000 = 91 at 8.3 ms (750 from 86 ms on), where the kernel's expired with 1 and 5 requests in flight, and bfq_completed_request does not recompute it while wr_coeff == bfq_wr_coeff (interactive), so it stayed at its initial jiffies and 23228 went soft real-time at its next idle-to-busy arrival, 13.7 ms) where the kernel, which raised both readers soft real-time (coeff 3000), logged 5 'too many requests': bandwidth -5.7 % -> -15.9 %; fs-bfq-wbpressure's reader cgroup -9.7 % -> -14.8 %. On, fs-bfq-writeback's root cgroup is at 2.0 MiB/s for the real 2.0 (off 6.0), share +0.0 points (off +4.8)"}, since: "6.1", offByDefault: true},
		{Feature: Feature{Name: "shallow-depth-per-word", Description: "bfq_limit_depth's depths per sbitmap word (word_depths from 1<<shift, the limit (nr_requests*depth)>>shift): an entity over its request limit may allocate one bit in every word, 4 tags of 256; Linux 6.17 made the shallow depth one of the whole bitmap (async_depths from nr_requests; over the limit, 1 tag: bit 0 of the first word; lib/sbitmap.c __map_depth_with_shallow, 42e6c6ce03fd)"}, until: "6.2"},
		{Feature: Feature{Name: "waker", Description: "waker and woken queues: a long-think-time sync queue whose process has one request allocated, released three times within 4 ms of another queue's completion (within 128·slice_idle), gets that queue as its waker, whose I/O bfq_select_queue injects first while plugging, then its woken queue's (bfq_check_waker as of 5.17-6.x; older kernels detected wakers otherwise and are modelled without)"}, since: "6.1"},
		{Feature: Feature{Name: "warm-queues", Description: "not a kernel change: a validation starts the sync queues of processes that were active before the trace as the capture's first messages show them (bfq.WarmFrom: max_budget from recalc_budg, short_ttime from expire; jbd2 in fs-bfq-fsync-vs-seqread 8874 sectors and short_ttime 0 for bfq_init_bfqq's 81322 and 1). Off by default: on, what was within target falls out (bench/fidelity -seeds 2,3: fs-bfq-6proc-3cg at seed 1 requests 5335 -> 5334 of 5335, worst share +1.4 -> -8.2 points; fs-bfq-fsync1r100-vs-seqread fails share at one seed more), though fs-bfq-fsync1-vs-seqread's reader comes to -14.7 % for -18.7 % (share -4.0 points for -5.6) and fs-bfq-6proc-3cg's cgroups to -28..-57 % for -42..-71 %"}, offByDefault: true},
		{Feature: Feature{Name: "stable-merge", Description: "stable merge of sync queues created within bfq_burst_interval (180 ms) in the same group: immediate on queueing SSDs, after 600 ms otherwise (bfq_do_or_sched_stable_merge, 5.13)"}, since: "5.13"},
	}
}

// Features returns the switchable behaviours with the presets that have them.
func Features() []Feature {
	specs := featureSpecs()
	out := make([]Feature, len(specs))
	for i, fs := range specs {
		f := fs.Feature
		for _, k := range kernelPresets {
			if fs.has(k) {
				f.Kernels = append(f.Kernels, k)
			}
		}
		out[i] = f
	}
	return out
}

// Kernels returns the accepted --kernel values, oldest first.
func Kernels() []string { return append([]string(nil), kernelPresets...) }

func (fs featureSpec) has(kernel string) bool {
	i := kernelIndex(kernel)
	if fs.since != "" && i < kernelIndex(fs.since) {
		return false
	}
	if fs.until != "" && i > kernelIndex(fs.until) {
		return false
	}
	return true
}

// features is the resolved feature set of one Scheduler.
type features struct {
	legacyGroupCount   bool
	ttimeEveryArrival  bool
	staleInServLastPos bool
	ttimeFullSlice     bool
	ioBoundByCount     bool
	wrAnyWeight        bool
	stableMerge        bool
	waker              bool
	adaptiveInject     bool
	entityLimit        bool
	shallowPerWord     bool
	warmQueues         bool
}

func resolveFeatures(kernel string, over map[string]bool) (features, error) {
	if kernel == "" {
		kernel = DefaultKernel
	}
	if kernelIndex(kernel) < 0 {
		return features{}, fmt.Errorf("bfq: unknown kernel %q (valid: %s)", kernel, strings.Join(kernelPresets, ", "))
	}
	set := map[string]bool{}
	for _, fs := range featureSpecs() {
		set[fs.Name] = fs.has(kernel) && !fs.offByDefault
	}
	names := make([]string, 0, len(over))
	for n := range over {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := set[n]; !ok {
			valid := make([]string, 0, len(set))
			for _, fs := range featureSpecs() {
				valid = append(valid, fs.Name)
			}
			return features{}, fmt.Errorf("bfq: unknown feature %q (valid: %s)", n, strings.Join(valid, ", "))
		}
		set[n] = over[n]
	}
	return features{
		legacyGroupCount:   set["legacy-group-count"],
		ttimeEveryArrival:  set["ttime-every-arrival"],
		staleInServLastPos: set["stale-in-serv-last-pos"],
		ttimeFullSlice:     set["ttime-full-slice-threshold"],
		ioBoundByCount:     set["io-bound-by-count"],
		wrAnyWeight:        set["wr-any-weight"],
		stableMerge:        set["stable-merge"],
		waker:              set["waker"],
		adaptiveInject:     set["adaptive-inject-limit"],
		entityLimit:        set["entity-request-limit"],
		shallowPerWord:     set["shallow-depth-per-word"],
		warmQueues:         set["warm-queues"],
	}, nil
}
