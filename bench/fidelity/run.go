package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/pipeline"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/scheduler/cfq"
	"github.com/tracesched/tracesched/scheduler/mqdeadline"
	"github.com/tracesched/tracesched/scheduler/none"
	"github.com/tracesched/tracesched/trace"
)

// loaded is a capture read once and shared by its replays.
type loaded struct {
	real    *diff.Side
	w       *replay.Workload
	dm      *device.Model
	fit     *device.Fit
	paths   map[uint64]string
	diag    blktrace.Diagnostics
	realMiB float64 // total MiB/s: bytes of completed requests over the active span
	realInf float64 // mean requests on the device (sum of D2C over the span)
	ownPred *diff.Side
}

// load reads a capture, rebuilds its workload and calibrates a device
// model from it, as `tracesched replay` does without --device (but never
// from the cache of fitted models: the figures are of a fresh fit).
func load(c *capture, seed uint64) (*loaded, error) {
	src, err := blktrace.Open(c.Base)
	if err != nil {
		return nil, err
	}
	// One read: the real side and the workload (internal/pipeline).
	capt, err := pipeline.Read(src, src.Meta, nil)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("%s: %w", c.Base, err)
	}
	diag := src.Diagnostics()
	src.Close()
	real, meta, w := capt.Real, capt.Meta, capt.Workload
	paths := c.Man.paths()
	maps.Copy(paths, meta.Cgroups)

	cal, err := pipeline.Calibrate(capt.DeviceRequests(), device.CalibrateOptions{Seed: seed, NotRotational: !c.Man.rotational()}, nil)
	if err != nil {
		return nil, fmt.Errorf("calibrating a device model from %s: %w", c.Base, err)
	}
	dm, fit := cal.Model, cal.Fit
	l := &loaded{real: real, w: w, dm: dm, fit: fit, paths: paths, diag: diag}
	l.realMiB, l.realInf = throughput(real)
	return l, nil
}

// throughput returns a side's bytes of completed requests per second of
// its active span (MiB/s) and the mean number of requests on the device
// over that span (Little's law: the sum of D2C over the span).
func throughput(s *diff.Side) (mibps, inflight float64) {
	span := s.Seconds()
	if span <= 0 {
		return 0, 0
	}
	var bytes, busy float64
	for i := range s.NumRequests() {
		rv := s.RequestAt(i)
		r := &rv
		if !r.Complete.Valid() {
			continue
		}
		bytes += float64(r.Bytes)
		if r.Issue.Valid() && r.Complete >= r.Issue {
			busy += float64(r.Complete - r.Issue)
		}
	}
	return bytes / (1 << 20) / span, busy / 1e9 / span
}

// flushes counts a side's requests that carry REQ_PREFLUSH (the empty
// flushes of fsync and the flush machinery included) and those that carry
// REQ_FUA.
func flushes(s *diff.Side) (flush, fua int) {
	for i := range s.NumRequests() {
		c := s.RequestAt(i).Cat
		if c&trace.CatFlush != 0 {
			flush++
		}
		if c&trace.CatFUA != 0 {
			fua++
		}
	}
	return flush, fua
}

// cgFig is one cgroup's bandwidth on both sides.
type cgFig struct {
	ID                   uint64
	Path                 string
	Weight               int
	RealMiB, PredMiB     float64
	RealShare, PredShare float64
	ShareErrPP           float64 // percentage points
	BwErr                float64 // fraction
}

// procFig is one process's bandwidth on both sides (bytes of its completed
// bios over its first Q to last C).
type procFig struct {
	PID              uint32
	Comm             string
	Cgroup           uint64
	Bios             int // bios in the capture
	RealMiB, PredMiB float64
	Err              float64 // fraction; 0 when the real side moved nothing
}

// cfqFig is what CFQ itself did in a what-if replay, from its messages and
// its groups' blkio statistics.
type cfqFig struct {
	Slices        int     // set_active: queues put in service
	TimedOut      int     // "slice expired t=1": slices that ran out of time
	MeanSliceMs   float64 // mean set_slice=, ms
	IdleArms      int     // arm_idle
	GroupIdleArms int     // arm_idle ... group_idle: 1
	IdleFired     int     // idle timer fired
	Preempts      int     // preempt
	QueueMerges   int     // merging with queue
	IOPSMode      int     // sl_used lines charged by requests (iops=1)
	SlUsed        int     // sl_used lines
	GroupTime     map[uint64]time.Duration
	HWTag         int
	SliceIdle     time.Duration

	// Per cgroup, over the whole replay: slices put in service and the
	// slice time used (sl_used).
	GroupSlices map[uint64]int
	GroupUsed   map[uint64]time.Duration

	// The contention window: while every cgroup with bytes was active
	// (latest first Q to earliest last C), on each side. Empty with fewer
	// than two cgroups.
	WinPred, WinReal       float64            // seconds
	WinTimeShare           map[uint64]float64 // CFQ's sl_used in the window
	WinSlices              map[uint64]int     // set_active in the window
	WinUsed                map[uint64]float64 // sl_used in the window, ms
	WinPredBytes           map[uint64]float64 // share of the bytes completed in the window, CFQ
	WinRealBytes           map[uint64]float64 // the same in the capture
	WinOwnBytes            map[uint64]float64 // the same, the capture's own model
	WinPredMiB, WinRealMiB map[uint64]float64 // MiB/s in the window
}

// figures are the headline figures of one replay of a capture.
type figures struct {
	Spec          spec
	Flags         string // `tracesched replay` flags giving the same replay
	Requests      int
	PredRequests  int
	RealSpan      float64
	PredSpan      float64
	Tau           float64
	MeanDisp      float64
	Divergences   int
	Cgroups       []cgFig
	Procs         []procFig
	BackR, BackP  int
	FrontR        int
	FrontP        int
	QMergeR       int
	QMergeP       int
	QMerges       []qmerge // the queue merges of both sides, paired (pairMerges)
	RealMessages  bool     // the capture has scheduler messages (else its queue merges are unknown)
	ThinkAgree    float64
	ThinkCompared int
	FlushR        int     // requests with REQ_PREFLUSH (empty flushes included), capture
	FlushP        int     // the same, prediction
	FUAR, FUAP    int     // requests with REQ_FUA, capture and prediction
	D2C, Q2C      float64 // demerit, fraction of the real mean
	RealMiB       float64
	PredMiB       float64
	RealInflight  float64
	PredInflight  float64
	CaptureDepth  int // most requests in flight in the capture
	MaxInDriver   int // most on the device in the replay
	Wall          time.Duration
	CFQ           *cfqFig
}

// sliceIdle reads slice_idle(_us) as `tracesched replay` does, for the
// run replays a loaded capture through s and diffs the prediction.
func run(l *loaded, s spec, seed uint64) (*figures, error) {
	so := replay.Options{Set: s.Set, Weights: s.Weights, CgroupPaths: l.paths, Kernel: s.Kernel, HZ: 250, Features: s.Features}
	if s.Model == "bfq" {
		so.Warm = bfq.WarmFrom(l.real.MessageSeq())
	}
	var cfqSched *cfq.Scheduler
	newSched := func(h replay.Host) (replay.Scheduler, error) {
		switch s.Model {
		case "none":
			return none.New(h, so)
		case "mq-deadline":
			return mqdeadline.New(h, so)
		case "bfq":
			return bfq.New(h, so)
		case "cfq":
			cs, err := cfq.New(h, so)
			if err != nil {
				return nil, err
			}
			cfqSched = cs
			return cs, nil
		}
		return nil, fmt.Errorf("unknown model %q", s.Model)
	}
	cfg := replay.Config{
		NewScheduler: newSched,
		Device:       l.dm.NewDevice(seed),
		Queue:        s.Queue,
		Mode:         replay.Closed,
	}
	if s.Timed {
		cfg.Work = replay.WorkTimed
	}
	if s.Recorded != "" {
		h := replay.DefaultHostCosts()
		if s.Traced {
			h, _ = h.Traced(s.Model)
		}
		if c, ok, _ := h.SubmitCost(l.w, s.Recorded, s.Model, l.real.Messages.Len() > 0); ok {
			cfg.Submit = &c
		}
	}
	pmeta := trace.Meta{Source: "replay", Kernel: s.Kernel, Devices: []trace.Dev{l.w.Dev}, Cgroups: l.paths,
		Extra: map[string]string{"scheduler": s.Model, "mode": replay.Closed.String()}}
	for _, k := range slices.Sorted(maps.Keys(s.Set)) {
		pmeta.Extra["set."+k] = s.Set[k]
	}
	pred := diff.NewSide(pmeta)
	start := time.Now()
	res, err := replay.Run(l.w, cfg, func(e *trace.Event) error { pred.Add(e); return nil })
	if err != nil {
		return nil, fmt.Errorf("replaying through %s: %w", s.Model, err)
	}
	pred.Finish()
	wall := time.Since(start)

	idle, idleOff := diff.ThinkOptions(s.Set)
	d := diff.Compare(l.real, pred, diff.Options{Weights: s.Labels, SliceIdle: idle, IdleOff: idleOff})
	f := &figures{
		Spec: s, Requests: d.Requests, PredRequests: d.PredictedRequests,
		RealSpan: d.WallSeconds, PredSpan: d.SimulatedSeconds,
		Tau: d.DispatchOrder.KendallTau, MeanDisp: d.DispatchOrder.MeanDisplacement, Divergences: d.DispatchOrder.Divergences,
		BackR: d.Merges.RealBack, BackP: d.Merges.PredBack, FrontR: d.Merges.RealFront, FrontP: d.Merges.PredFront,
		QMergeR: d.Merges.RealQueueMerges, QMergeP: d.Merges.PredQueueMerges,
		ThinkAgree: d.ThinkTime.Agreement, ThinkCompared: d.ThinkTime.Compared,
		D2C: d.Latency.D2CDemerit, Q2C: d.Latency.Q2CDemerit,
		RealMiB: l.realMiB, RealInflight: l.realInf,
		CaptureDepth: l.w.Depth, MaxInDriver: res.MaxInDriver, Wall: wall,
	}
	f.PredMiB, f.PredInflight = throughput(pred)
	f.QMerges = pairMerges(l.real, pred, d.Merges.RealList, d.Merges.PredList)
	f.RealMessages = l.real.Messages.Len() > 0
	f.FlushR, f.FUAR = flushes(l.real)
	f.FlushP, f.FUAP = flushes(pred)
	f.Flags = s.flags()
	if s.Rotational != (l.w.Dev.Major() != 259) {
		f.Flags += fmt.Sprintf(" --set rotational=%d", b2i(s.Rotational))
	}
	for _, c := range d.Cgroups {
		f.Cgroups = append(f.Cgroups, cgFig{
			ID: c.ID, Path: c.Path, Weight: c.Weight, RealMiB: c.RealMiBps, PredMiB: c.PredMiBps,
			RealShare: c.RealShare, PredShare: c.PredShare, ShareErrPP: 100 * c.ShareError, BwErr: c.BandwidthError,
		})
	}
	predProcs := map[uint32]replay.ProcessStats{}
	for _, p := range res.Processes {
		predProcs[p.PID] = p
	}
	// A process whose bios the capture left unfinished is measured as the
	// diff measures it, over the bios both sides completed
	// (diff.Process.*Span); every other as the workload and the replay count it.
	spans := map[uint32]diff.Process{}
	for _, p := range d.Processes {
		spans[p.PID] = p
	}
	unfinished := unfinishedPIDs(l.real)
	for _, p := range l.w.Processes {
		pf := procFig{PID: p.PID, Comm: p.Comm, Cgroup: p.Cgroup, Bios: p.Bios, RealMiB: p.MiBps()}
		if q, ok := predProcs[p.PID]; ok {
			pf.PredMiB = q.MiBps()
		}
		if sp, ok := spans[p.PID]; ok && unfinished[p.PID] {
			pf.RealMiB, pf.PredMiB = sp.RealMiBpsSpan, sp.PredMiBpsSpan
		}
		if pf.RealMiB > 0 {
			pf.Err = pf.PredMiB/pf.RealMiB - 1
		}
		f.Procs = append(f.Procs, pf)
	}
	sort.Slice(f.Procs, func(i, j int) bool { return f.Procs[i].PID < f.Procs[j].PID })
	if cfqSched != nil {
		f.CFQ = cfqFigures(cfqSched, pred, f.Cgroups)
		contention(f.CFQ, l.real, pred, f.Cgroups)
	}
	if s.Model != "cfq" {
		l.ownPred = pred // for the CFQ what-if's comparison, when there is one
	}
	return f, nil
}

// unfinishedPIDs returns the processes with a bio queued and never
// completed on side s.
func unfinishedPIDs(s *diff.Side) map[uint32]bool {
	out := map[uint32]bool{}
	for i := range s.NumBios() {
		if b := s.BioAt(i); b.Queue.Valid() && !b.Done.Valid() {
			out[b.PID] = true
		}
	}
	return out
}

// window returns the contention window of the cgroups on a side: from the
// latest first Q to the earliest last C among them (ok false when empty).
func window(s *diff.Side, ids []uint64) (lo, hi trace.Time, ok bool) {
	first := map[uint64]trace.Time{}
	last := map[uint64]trace.Time{}
	for i := range s.NumRequests() {
		rv := s.RequestAt(i)
		r := &rv
		if !r.Queue.Valid() || !r.Complete.Valid() {
			continue
		}
		if f, seen := first[r.Cgroup]; !seen || r.Queue < f {
			first[r.Cgroup] = r.Queue
		}
		if l, seen := last[r.Cgroup]; !seen || r.Complete > l {
			last[r.Cgroup] = r.Complete
		}
	}
	for i, id := range ids {
		f, ok1 := first[id]
		l, ok2 := last[id]
		if !ok1 || !ok2 {
			return 0, 0, false
		}
		if i == 0 || f > lo {
			lo = f
		}
		if i == 0 || l < hi {
			hi = l
		}
	}
	return lo, hi, hi > lo
}

// windowBytes returns each cgroup's share of the bytes completed in
// [lo, hi] and its MiB/s there.
func windowBytes(s *diff.Side, ids []uint64, lo, hi trace.Time) (share, mib map[uint64]float64) {
	share, mib = map[uint64]float64{}, map[uint64]float64{}
	want := map[uint64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var sum float64
	for i := range s.NumRequests() {
		rv := s.RequestAt(i)
		r := &rv
		if want[r.Cgroup] && r.Complete.Valid() && r.Complete >= lo && r.Complete <= hi {
			share[r.Cgroup] += float64(r.Bytes)
			sum += float64(r.Bytes)
		}
	}
	secs := float64(hi-lo) / 1e9
	for _, id := range ids {
		mib[id] = share[id] / (1 << 20) / secs
		if sum > 0 {
			share[id] /= sum
		}
	}
	return share, mib
}

// contention fills the CFQ figures' contention window: what CFQ and the
// capture gave each cgroup while all of them had I/O.
func contention(cf *cfqFig, real, pred *diff.Side, cgs []cgFig) {
	var ids []uint64
	for _, c := range cgs {
		if c.RealMiB > 0 {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) < 2 {
		return
	}
	plo, phi, ok1 := window(pred, ids)
	rlo, rhi, ok2 := window(real, ids)
	if !ok1 || !ok2 {
		return
	}
	cf.WinPred, cf.WinReal = float64(phi-plo)/1e9, float64(rhi-rlo)/1e9
	cf.WinPredBytes, cf.WinPredMiB = windowBytes(pred, ids, plo, phi)
	cf.WinRealBytes, cf.WinRealMiB = windowBytes(real, ids, rlo, rhi)
	cf.WinTimeShare, cf.WinSlices, cf.WinUsed = map[uint64]float64{}, map[uint64]int{}, map[uint64]float64{}
	var sum float64
	for i := range pred.Messages.Len() {
		m := pred.Messages.At(i)
		if m.Time < plo || m.Time > phi {
			continue
		}
		if strings.Contains(m.Text, "set_active") {
			cf.WinSlices[m.Cgroup]++
		}
		if !strings.Contains(m.Text, "sl_used=") {
			continue
		}
		if n, ok := numberAfter(m.Text, "sl_used="); ok {
			cf.WinTimeShare[m.Cgroup] += n
			cf.WinUsed[m.Cgroup] += n / 1e6
			sum += n
		}
	}
	if sum > 0 {
		for id := range cf.WinTimeShare {
			cf.WinTimeShare[id] /= sum
		}
	}
}

// ownWindow fills WinOwnBytes from the own model's prediction.
func ownWindow(cf *cfqFig, own *diff.Side, cgs []cgFig) {
	if own == nil || cf.WinPredBytes == nil {
		return
	}
	var ids []uint64
	for _, c := range cgs {
		if c.RealMiB > 0 {
			ids = append(ids, c.ID)
		}
	}
	if lo, hi, ok := window(own, ids); ok {
		cf.WinOwnBytes, _ = windowBytes(own, ids, lo, hi)
	}
}

// cfqFigures counts CFQ's decisions in its messages and reads its groups'
// charged time.
func cfqFigures(s *cfq.Scheduler, pred *diff.Side, cgs []cgFig) *cfqFig {
	cf := &cfqFig{GroupTime: map[uint64]time.Duration{}, HWTag: s.HWTag(), SliceIdle: s.SliceIdle(),
		GroupSlices: map[uint64]int{}, GroupUsed: map[uint64]time.Duration{}}
	var sliceSum float64
	var slices int
	for i := range pred.Messages.Len() {
		m := pred.Messages.At(i)
		t := m.Text
		switch {
		case strings.Contains(t, "set_active"):
			cf.Slices++
			cf.GroupSlices[m.Cgroup]++
		case strings.Contains(t, "slice expired t=1"):
			cf.TimedOut++
		case strings.Contains(t, "set_slice="):
			if n, ok := numberAfter(t, "set_slice="); ok {
				sliceSum += n
				slices++
			}
		case strings.Contains(t, "arm_idle:"):
			cf.IdleArms++
			if strings.Contains(t, "group_idle: 1") {
				cf.GroupIdleArms++
			}
		case strings.Contains(t, "idle timer fired"):
			cf.IdleFired++
		case strings.HasSuffix(t, "preempt"):
			cf.Preempts++
		case strings.Contains(t, "merging with queue"):
			cf.QueueMerges++
		case strings.Contains(t, "sl_used="):
			cf.SlUsed++
			if n, ok := numberAfter(t, "sl_used="); ok {
				cf.GroupUsed[m.Cgroup] += time.Duration(n)
			}
			if strings.Contains(t, "iops=1") {
				cf.IOPSMode++
			}
		}
	}
	if slices > 0 {
		cf.MeanSliceMs = sliceSum / float64(slices) / 1e6
	}
	for _, c := range cgs {
		cf.GroupTime[c.ID] = s.GroupStats(c.ID).Time
	}
	return cf
}

// numberAfter parses the integer right after key in t.
func numberAfter(t, key string) (float64, bool) {
	i := strings.Index(t, key)
	if i < 0 {
		return 0, false
	}
	rest := t[i+len(key):]
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || j == 0 && rest[j] == '-') {
		j++
	}
	n, err := strconv.ParseFloat(rest[:j], 64)
	return n, err == nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// result is everything measured on one capture.
type result struct {
	C        *capture
	Fit      *device.Fit
	Diag     blktrace.Diagnostics
	Own      *figures
	CFQ      *figures // nil unless a recorded capture and the what-if runs
	CFQNotes []string
	Err      error // the capture failed; the rest is nil
}

// measure loads one capture and replays it through its own model and,
// when withCFQ, through CFQ.
func measure(c *capture, seed uint64, withCFQ bool, log io.Writer) *result {
	r := &result{C: c}
	t0 := time.Now()
	fmt.Fprintf(log, "fidelity: %s: loading and calibrating...\n", c.Name)
	l, err := load(c, seed)
	if err != nil {
		r.Err = err
		return r
	}
	r.Fit, r.Diag = l.fit, l.diag
	fmt.Fprintf(log, "fidelity: %s: %d requests; device %s (D2C demerit %.1f%%, cross-validated %.1f%%) in %.1f s\n",
		c.Name, l.real.NumRequests(), l.fit.Kind, 100*l.fit.DemeritFraction, 100*l.fit.CV.DemeritFraction, time.Since(t0).Seconds())
	own, err := ownSpec(c)
	if err != nil {
		r.Err = err
		return r
	}
	if r.Own, err = run(l, own, seed); err != nil {
		r.Err = err
		return r
	}
	fmt.Fprintf(log, "fidelity: %s: %s replayed in %.1f s: tau %.4f, D2C demerit %.1f%%\n",
		c.Name, own.Model, r.Own.Wall.Seconds(), r.Own.Tau, 100*r.Own.D2C)
	if withCFQ && c.Group == "recorded" {
		cs, notes := cfqSpec(c)
		r.CFQNotes = notes
		if r.CFQ, err = run(l, cs, seed); err != nil {
			r.Err = fmt.Errorf("CFQ what-if: %w", err)
			return r
		}
		ownWindow(r.CFQ.CFQ, l.ownPred, r.CFQ.Cgroups)
		fmt.Fprintf(log, "fidelity: %s: cfq what-if replayed in %.1f s: %.1f MiB/s (capture %.1f)\n",
			c.Name, r.CFQ.Wall.Seconds(), r.CFQ.PredMiB, r.CFQ.RealMiB)
	}
	return r
}

// crossResult is issue 11's cross-scheduler check of one pair: the
// mq-deadline capture replayed through BFQ (Pred), against the BFQ
// capture's own figures (whose real side is what BFQ did).
type crossResult struct {
	P    crossPair
	Pred *figures // the mq-deadline capture through the BFQ model
	Real *figures // the BFQ capture's own replay (its Real* fields)
	Err  error
}

// measureCross runs the cross-scheduler replay of a pair; bfqOwn is the BFQ
// capture's result from measure.
func measureCross(p crossPair, bfqOwn *result, seed uint64, log io.Writer) *crossResult {
	cr := &crossResult{P: p}
	if bfqOwn == nil || bfqOwn.Own == nil {
		cr.Err = fmt.Errorf("%s failed", p.BFQ.Name)
		return cr
	}
	cr.Real = bfqOwn.Own
	s, err := crossSpec(p)
	if err != nil {
		cr.Err = err
		return cr
	}
	l, err := load(p.MQ, seed)
	if err != nil {
		cr.Err = err
		return cr
	}
	if cr.Pred, err = run(l, s, seed); err != nil {
		cr.Err = err
		return cr
	}
	fmt.Fprintf(log, "fidelity: %s through bfq (weights of %s): %.1f MiB/s (BFQ capture %.1f)\n", p.MQ.Name, p.BFQ.Name, cr.Pred.PredMiB, cr.Real.RealMiB)
	return cr
}
