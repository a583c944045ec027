package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// The host model: the CPU time a bio's submission takes.
//
// A process that submits as fast as its CPU lets it (fio at its iodepth,
// reaping and resubmitting) is paced by the submission path, whose cost
// depends on the scheduler: on the rig's loop device a 4 KiB read costs
// the submitting CPU 18.5 us from one Q to the next under BFQ with its
// debug messages on (recorded/a-bfq-w100-900) against 5.8 us under
// mq-deadline (recorded/b-mqdl-w100-900). A replay that carries the
// mq-deadline capture's gaps into BFQ submits three times too fast, and
// both fio jobs of those captures ran on one CPU (54,334 of a-bfq's 54,404
// Q events on CPU 1), so they shared that cost.
//
// Under Config.Submit the engine holds, for every closed-loop bio that is
// not Open, the CPU its Q was recorded on (Record.CPU) for Target from the
// bio's Q: the process's next bio, and any other process's on that CPU,
// arrives no earlier than that. The think time the workload carries is
// the application's: from each captured gap the source's cost is taken
// out (a gap Q_{k-1} -> Q_k keeps Q_k - Q_{k-1} - Source of it, and no
// gap or think time keeps more than that), and the replay adds Target
// after the previous Q. With Source == Target every captured gap of
// Source or more is kept as it was, and a shorter one is floored at
// Source; a validation replay (the recording scheduler's model) gets no
// host model at all (HostCosts.SubmitCost), so it is unchanged.
//
// The completion path costs CPU too, when the table has complete_ns: the
// CPU the capture shows a bio's C on (Record.DoneCPU) is held for
// CompleteTarget from the predicted C, after whatever it was doing
// (submissions on it wait), and a bio released by a completion (Dep 0 or
// more) runs CompleteTarget after it and thinks its captured think time
// less CompleteSource (Workload.CompleteGap: the mean gap between a
// completion bunch's Cs). In the captures above a bunch's Cs are 2.8 us
// apart under BFQ with its messages, 0.9 under mq-deadline, a sixth of
// the submission; on the rig's loop device of 2026-12-03 (hostcost.fio)
// 4.0 under BFQ, 3.7 under mq-deadline, 2.4 under none, almost the
// submission's 5.0, 4.4 and 3.3. DefaultHostCosts has no completion
// costs: on that device the 36 pairs of bench/whatif came out the same
// with and without them (bench/whatif/README.md).
//
// Not modelled: Q to D (the engine issues at the Q), the application's
// own CPU time (carried as think time, not as a CPU held), bios whose
// size changes the cost, the loop device's own worker (its copies run on
// the CPUs the submitters use), and the CPU of Open bios
// (writeback, at their captured times). A process stays on the CPUs the
// capture shows, bio by bio: the kernel's placement under another
// scheduler is not predicted.

// SubmitCost is what Config.Submit gives the engine. Invariants: Source
// and Target are 0 or more; Target 0 with Source 0 is no host model.
type SubmitCost struct {
	// Source: the CPU time, ns, one bio's submission took under the
	// recording scheduler (Workload.SubmitGap).
	Source trace.Time
	// Target: the CPU time, ns, one bio's submission takes under the
	// replayed scheduler.
	Target trace.Time
	// CompleteSource and CompleteTarget: the CPU time, ns, one request's
	// completion took under the recording scheduler
	// (Workload.CompleteGap) and takes under the replayed one; both 0
	// when the completion is not modelled.
	CompleteSource, CompleteTarget trace.Time
}

// HostCosts is the per-scheduler submission cost table of a host, the
// JSON a --host file holds:
//
//	{"version": 1, "submit_ns": {"bfq": 7550, "bfq+messages": 10700,
//	 "mq-deadline": 5400, "none": 4400}, "measured": "how and where"}
//
// submit_ns is the p50 of one process's back-to-back Q-to-Q gaps (as
// Workload.SubmitGap measures them) under each scheduler, ns, on one host
// with one workload, so that their ratios say what each scheduler adds.
// Every value is positive. A key NAME+messages (MessagesSuffix) is the
// cost under NAME while blktrace records the scheduler's own debug
// messages (blk_add_trace_msg: about 16 a request under BFQ, each a
// formatted line into the trace's ring buffer): a capture that carries
// them was recorded at that cost, and SubmitCost takes it for the
// recording scheduler of such a capture. The replayed scheduler's cost
// is the plain key's: a what-if predicts the scheduler as it runs
// untraced, in production.
//
// complete_ns, optional, is the completion's cost the same way: the mean
// of the back-to-back C-to-C gaps on one CPU (as Workload.CompleteGap
// measures them). With it SubmitCost models the completion too, for the
// schedulers it names; bench/hostcost writes both.
type HostCosts struct {
	Version    int              `json:"version"`
	SubmitNS   map[string]int64 `json:"submit_ns"`
	CompleteNS map[string]int64 `json:"complete_ns,omitempty"`
	Measured   string           `json:"measured,omitempty"`
}

// DefaultHostCosts returns the table measured on the rig's loop device
// (bench/whatif/jobs/hostcost.fio: one 4 KiB random reader, libaio
// iodepth 32, direct I/O, recorded with ../shared/rig by
// bench/whatif/record.sh as wi-host-bfq-nomsg, wi-host-bfq (BFQ's
// messages on: bfq+messages), wi-host-mqdl and wi-host-none;
// Workload.SubmitGap of each).
func DefaultHostCosts() HostCosts {
	return HostCosts{Version: 1, SubmitNS: map[string]int64{
		"bfq":                  defaultSubmitBFQ,
		"bfq" + MessagesSuffix: defaultSubmitBFQMessages,
		"mq-deadline":          defaultSubmitMQDL,
		"none":                 defaultSubmitNone,
	}, Measured: defaultHostMeasured}
}

// LoadHostCosts reads a HostCosts document; name is used in errors.
func LoadHostCosts(r io.Reader, name string) (HostCosts, error) {
	var h HostCosts
	d := json.NewDecoder(r)
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return h, fmt.Errorf("%s: byte %d: %w", name, se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return h, fmt.Errorf("%s: byte %d: field %s: %w", name, te.Offset, te.Field, err)
		}
		return h, fmt.Errorf("%s: %w", name, err)
	}
	if h.Version != 1 {
		return h, fmt.Errorf("%s: version %d, want 1", name, h.Version)
	}
	if len(h.SubmitNS) == 0 {
		return h, fmt.Errorf("%s: submit_ns names no scheduler", name)
	}
	for _, k := range slices.Sorted(maps.Keys(h.SubmitNS)) {
		if v := h.SubmitNS[k]; v <= 0 || v > int64(trace.Time(1e9)) {
			return h, fmt.Errorf("%s: submit_ns[%q] = %d: want 1 ns to 1 s", name, k, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h.CompleteNS)) {
		if v := h.CompleteNS[k]; v <= 0 || v > int64(trace.Time(1e9)) {
			return h, fmt.Errorf("%s: complete_ns[%q] = %d: want 1 ns to 1 s", name, k, v)
		}
	}
	return h, nil
}

// ReadHostCosts reads the HostCosts document in the file path
// (LoadHostCosts, its errors naming path).
func ReadHostCosts(path string) (HostCosts, error) {
	f, err := os.Open(path)
	if err != nil {
		return HostCosts{}, err
	}
	defer f.Close()
	return LoadHostCosts(f, path)
}

// SubmitCost returns the host model of a replay of w, recorded under
// recorded, through target: Source is the capture's own measure
// (w.SubmitGap), Target that scaled by the table's ratio target/recorded
// (the capture says how fast its host was, the table what each scheduler
// costs relative to the others). ok is false, with the reason, when the
// host model does not apply: the replay keeps the recording scheduler at
// the cost the capture paid (its gaps already carry that cost: a model of
// the same cost on both sides would only floor the gaps shorter than the
// median at it, and a validation replay is left as it was), the capture
// shows too few back-to-back gaps, or the table lacks a scheduler.
//
// messages says the capture carries the recording scheduler's own debug
// messages: Source was then paid under NAME+messages, and the ratio is
// taken from that key when the table has it (from NAME's when it has
// not). So a what-if that keeps the scheduler of such a capture (other
// weights or tunables) gets a host model too, from NAME+messages to NAME:
// it predicts the scheduler untraced, as a what-if across schedulers does
// (recorded/a-bfq-w100-900's fio jobs ran 35.8 k IOPS with BFQ's messages
// traced and 47.2 k without, recorded/baselines-untraced; slice_idle=0,
// e-bfq-w100-900-idle0, 36.8 k and 73.3 k).
func (h HostCosts) SubmitCost(w *Workload, recorded, target string, messages bool) (c SubmitCost, ok bool, why string) {
	if h.KeepsCost(recorded, target, messages) {
		return c, false, "the replay keeps the recording scheduler at the capture's cost"
	}
	recorded, target = strings.ToLower(recorded), strings.ToLower(target)
	if w.SubmitGap <= 0 {
		return c, false, fmt.Sprintf("the capture shows %d back-to-back Q-to-Q gaps (fewer than %d)", w.SubmitGaps, minSubmitGaps)
	}
	src, tgt := h.SubmitNS[h.SourceKey(recorded, messages)], h.SubmitNS[target]
	switch {
	case recorded == "":
		return c, false, "the recording scheduler is unknown"
	case src <= 0:
		return c, false, fmt.Sprintf("the host table has no cost for %s", recorded)
	case tgt <= 0:
		return c, false, fmt.Sprintf("the host table has no cost for %s", target)
	}
	c = SubmitCost{Source: w.SubmitGap, Target: scaleCost(w.SubmitGap, tgt, src)}
	csrc, ctgt := h.CompleteNS[sourceKey(h.CompleteNS, recorded, messages)], h.CompleteNS[target]
	if w.CompleteGap > 0 && csrc > 0 && ctgt > 0 {
		c.CompleteSource, c.CompleteTarget = w.CompleteGap, scaleCost(w.CompleteGap, ctgt, csrc)
	}
	return c, true, ""
}

// KeepsCost reports whether a replay through target of a capture recorded
// under recorded (with that scheduler's messages traced when messages)
// pays the capture's own submission cost: the same scheduler, at the
// table's cost for how the capture was recorded (a capture with BFQ's
// messages replayed through BFQ does not: bfq+messages against bfq).
func (h HostCosts) KeepsCost(recorded, target string, messages bool) bool {
	recorded, target = strings.ToLower(recorded), strings.ToLower(target)
	return recorded == target && (recorded == "" || h.SubmitNS[h.SourceKey(recorded, messages)] == h.SubmitNS[target])
}

// scaleCost returns v*num/den, rounded, ns.
func scaleCost(v trace.Time, num, den int64) trace.Time {
	return trace.Time(float64(v)*float64(num)/float64(den) + 0.5)
}

// SourceKey returns the key of the table whose cost a capture recorded
// under recorded paid: recorded+MessagesSuffix when the capture carries
// the scheduler's messages and the table has that key, else recorded.
func (h HostCosts) SourceKey(recorded string, messages bool) string {
	return sourceKey(h.SubmitNS, recorded, messages)
}

// sourceKey is SourceKey in the table m (submit_ns or complete_ns).
func sourceKey(m map[string]int64, recorded string, messages bool) string {
	recorded = strings.ToLower(recorded)
	if k := recorded + MessagesSuffix; messages && recorded != "" && m[k] > 0 {
		return k
	}
	return recorded
}

// Traced returns a copy of h whose cost for sched is its
// sched+MessagesSuffix cost: a table that predicts sched as it runs with
// its messages traced (to compare with real runs recorded so), and false
// when h has no such cost (the copy is then h's).
func (h HostCosts) Traced(sched string) (HostCosts, bool) {
	t := h
	t.SubmitNS, t.CompleteNS = maps.Clone(h.SubmitNS), maps.Clone(h.CompleteNS)
	v := h.SubmitNS[sched+MessagesSuffix]
	if v <= 0 {
		return t, false
	}
	t.SubmitNS[sched] = v
	if v := h.CompleteNS[sched+MessagesSuffix]; v > 0 {
		t.CompleteNS[sched] = v
	}
	return t, true
}

// minSubmitGaps is the fewest back-to-back gaps from which
// Workload.SubmitGap is taken.
const minSubmitGaps = 100

// gapHist counts gaps in gapBin bins up to gapBins*gapBin (the last bin
// holds every longer gap), so the median is exact to a bin whatever the
// capture's size.
type gapHist struct {
	bins []uint32
	n    int
}

const (
	gapBin  = trace.Time(100)
	gapBins = 10_000 // 1 ms
)

func (h *gapHist) add(g trace.Time) {
	if g < 0 {
		return
	}
	if h.bins == nil {
		h.bins = make([]uint32, gapBins)
	}
	h.bins[min(int(g/gapBin), gapBins-1)]++
	h.n++
}

// median returns the lower median's bin centre, 0 under minSubmitGaps.
func (h *gapHist) median() trace.Time {
	if h.n < minSubmitGaps {
		return 0
	}
	want, seen := uint64(h.n+1)/2, uint64(0)
	for i, c := range h.bins {
		seen += uint64(c)
		if seen >= want {
			return trace.Time(i)*gapBin + gapBin/2
		}
	}
	return gapBins * gapBin
}

// completeBackToBack is the longest gap, ns, between two Cs on one CPU
// (no Q of the device between them) that Workload.CompleteGap takes as
// the CPU's work on the second: a completion bunch's Cs come 1-4 us
// apart, and a longer gap is the device spreading its completions (with
// 50 us the median of the third VM's wi-host-none rises from 1.47 to
// 2.17 us, above its mq-deadline's 1.09).
const completeBackToBack = trace.Time(20_000)

// gapMean sums gaps for their mean.
type gapMean struct {
	sum trace.Time
	n   int
}

func (m *gapMean) add(g trace.Time) { m.sum += g; m.n++ }

// mean returns the mean gap, rounded to the ns; 0 under minSubmitGaps.
func (m *gapMean) mean() trace.Time {
	if m.n < minSubmitGaps {
		return 0
	}
	return (m.sum + trace.Time(m.n/2)) / trace.Time(m.n)
}

// maxGapCPU bounds the CPUs whose C-to-C gaps Workload.CompleteGap
// counts (collectDev.cpuLast is indexed by CPU).
const maxGapCPU = 4096

// cpuEvent is a CPU's latest Q or C on a device (collectDev.cpuLast).
type cpuEvent struct {
	t    trace.Time
	c    bool // a C; else a Q
	seen bool // t and c hold an event
}

// cpuSample counts e, a Q or a C, toward the device's back-to-back C-to-C
// gaps (Workload.CompleteGap): a C whose CPU's previous Q or C on the
// device was a C within completeBackToBack.
func (s *collectDev) cpuSample(e *trace.Event) {
	if e.CPU >= maxGapCPU {
		return
	}
	if int(e.CPU) >= len(s.cpuLast) {
		s.cpuLast = append(s.cpuLast, make([]cpuEvent, int(e.CPU)+1-len(s.cpuLast))...)
	}
	l := &s.cpuLast[e.CPU]
	isC := e.Action == trace.ActionComplete
	if isC && l.seen && l.c && e.Time >= l.t && e.Time-l.t <= completeBackToBack {
		s.cgaps.add(e.Time - l.t)
	}
	*l = cpuEvent{t: e.Time, c: isC, seen: true}
}

// gapSample counts e, a Q, toward the device's back-to-back gaps: its
// process's previous Q on the device, when nothing of the process
// completed since and that bio's submission did not sleep, and e is not
// an asynchronous write.
func (s *collectDev) gapSample(e *trace.Event, sp *collectPID) {
	prev := sp.lastQ
	if prev == nil || !prev.rec.queue.Valid() || e.Time < prev.rec.queue {
		return
	}
	if e.Cat.IsWrite() && e.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) == 0 {
		return
	}
	if sp.hasDone && sp.doneAt >= prev.rec.queue {
		return
	}
	if g := prev.rec.got; g.Valid() && g-prev.rec.queue >= minTagSleep {
		return
	}
	s.gaps.add(e.Time - prev.rec.queue)
}

// MessagesSuffix marks a HostCosts key as the cost under the scheduler
// it follows while its debug messages are traced ("bfq+messages").
const MessagesSuffix = "+messages"

// The defaults of DefaultHostCosts, ns: the mean of two runs each of
// bench/whatif/jobs/hostcost.fio (bench/whatif/record.sh) on the rig's
// loop device over a file in /dev/shm, 2026-12-02 00:14-00:17 UTC at load
// average 1.8-2.3 and, without BFQ's messages, 02:43 at 0.9;
// Workload.SubmitGap: wi-host-bfq-nomsg(-2), recorded with -M (no BFQ
// messages), 7.3 and 7.8 us; wi-host-bfq(-2), with them,
// 11.2 and 10.2 us; wi-host-mqdl(-2) 5.5 and 5.3 us; wi-host-none(-2) 4.5
// and 4.3 us.
//
// The ratio carries over to other workloads of that device: from
// wi-seed000-mqdl's 6.2 us (two 4 KiB random readers at iodepth 64, an
// mq-deadline capture) the table predicts 8.6 us under BFQ; the same job
// recorded under BFQ without its messages showed 8.6 and 9.3 us
// (wi-seed000-bfq-10-90-nomsg, -nomsg-2). From wi-mix4-mqdl's 8.1 us it
// predicts 11.3 us; wi-mix4-bfq-a-nomsg showed 10.2. With the messages
// traced the cost grows with the messages a request logs: 16.0 predicted
// for wi-mix4-bfq-a, 15.9 measured, but 12.2 for wi-seed000-bfq-10-90,
// 17.6 measured (its two cgroups' queues preempt each other, each
// preemption logging an expiration and a new selection).
const (
	defaultSubmitBFQ         = 7550
	defaultSubmitBFQMessages = 10700
	defaultSubmitMQDL        = 5400
	defaultSubmitNone        = 4400
)

const defaultHostMeasured = "bench/whatif/jobs/hostcost.fio (one 4 KiB random reader, libaio iodepth 32) on the rig's loop device over /dev/shm, 2026-12-02, two runs per scheduler (bfq with and without its messages traced): Workload.SubmitGap means"

// appWake returns the wake-up delay of step 4 (Record.wake, captured
// from a completion to the Q) under the completion model: the replayed
// completion's cost, then the captured delay less the source's; the
// captured delay itself when the completion is not modelled.
func (c *SubmitCost) appWake(wake trace.Time) trace.Time {
	if c.CompleteSource == 0 && c.CompleteTarget == 0 {
		return wake
	}
	return c.CompleteTarget + max(wake-c.CompleteSource, 0)
}

// appThink returns the part of r's think time (or gap) that is the
// application's: no more than its captured gap from its process's
// previous Q (prevQ, NoTime for none) less Source, and, for a bio that
// waited for a completion (Dep 0 or more), its think time from that
// completion less CompleteSource; not below 0.
func (c *SubmitCost) appThink(r *Record, prevQ trace.Time) trace.Time {
	t := r.Think
	if r.Dep >= 0 {
		t -= c.CompleteSource
	}
	if prevQ.Valid() && r.Queue >= prevQ {
		t = min(t, r.Queue-prevQ-c.Source)
	} else {
		t -= c.Source
	}
	return max(t, 0)
}
