package replay

import (
	"container/heap"
	"fmt"
	"sort"

	"github.com/tracesched/tracesched/trace"
)

// Stalls says what a replay does with the host stalls the workload found
// in its capture (the stall rule on Workload).
type Stalls int

const (
	// StallsKeep replays every gap as recorded (the default; a
	// validation must: the stalls did happen).
	StallsKeep Stalls = iota
	// StallsDrop replaces each host stall by its process's typical
	// reaping delay: a what-if on a host without the recording one's
	// descheduling (another scheduler's run would not have met it at the
	// same bios).
	StallsDrop
)

// ParseStalls parses "keep" or "drop" ("" is keep).
func ParseStalls(s string) (Stalls, error) {
	switch s {
	case "keep", "":
		return StallsKeep, nil
	case "drop":
		return StallsDrop, nil
	}
	return StallsKeep, fmt.Errorf("unknown stalls %q (valid: keep, drop)", s)
}

func (s Stalls) String() string {
	if s == StallsDrop {
		return "drop"
	}
	return "keep"
}

// The stall rule's thresholds (see the rule on Workload).
const (
	// stallMin is the shortest reaping delay taken as a stall.
	stallMin = trace.Time(1_000_000)
	// stallRatio: a stall is also at least this many times its process's
	// typical (median) reaping delay.
	stallRatio = 20
	// stallTypMax: only a process whose typical reaping delay is at most
	// this (microseconds: a CPU-bound submitter such as fio at its depth)
	// has stalls told from its think time.
	stallTypMax = trace.Time(200_000)
	// stallSamples: the fewest reaping delays a process needs.
	stallSamples = 100
	// stallShare: a process whose candidate stalls exceed 1/stallShare of
	// its reaping delays stalls as its regime, not by accident: none is
	// dropped.
	stallShare = 10
	// stallPeriodMin: a period, in bios, is at least this many times the
	// process's depth (a process that was descheduled while its whole
	// depth completed resumes in batches of its depth, so host stalls
	// recur at multiples of it).
	stallPeriodMin = 1
	// stallPeriodTol: the slack, in bios, of a period.
	stallPeriodTol = 2
	// stallPeriodsTried: the most periods periodicStalls tries.
	stallPeriodsTried = 64
	// stallCandMax bounds the candidates the period search compares in
	// pairs (a process with more keeps them all).
	stallCandMax = 4096
)

// stallInput is what the stall rule reads of a bio.
type stallInput struct {
	pid, index  uint32
	queue, done trace.Time
	async       bool // an asynchronous write: not the process's own pacing
}

// stallSet is what the stall rule found in a workload: the host stalls
// (bio, replacement reaping delay), and the counts it reports.
type stallSet struct {
	host map[bioKey]trace.Time
	// hostTime is the captured reaping delay of the host stalls, summed;
	// periodic counts the stalls kept as the application's (periodic).
	hostTime trace.Time
	periodic int
}

// stallSample is one reaping delay of a process: its bio index was
// queued reap after the first of its completions that arrived after its
// previous Q, when pred of its bios were in flight at that Q.
type stallSample struct {
	index uint32
	reap  trace.Time
	idle  trace.Time // from the latest of those completions to the bio, when none was left in flight; 0 otherwise
	pred  int64
	atMax bool // pred is the process's depth: it was waiting for a completion
}

// inferStalls applies the stall rule to n bios given in nondecreasing
// queue order, each process's in index order.
func inferStalls(n int, at func(i int) stallInput) stallSet {
	type procState struct {
		pending timeHeap
		n       int64 // bios submitted
		passed  int64 // completions at or before the latest Q
		depth   int64
		samples []stallSample
	}
	procs := map[uint32]*procState{}
	var order []uint32
	for i := 0; i < n; i++ {
		b := at(i)
		if b.async {
			continue
		}
		p := procs[b.pid]
		if p == nil {
			p = &procState{}
			procs[b.pid] = p
			order = append(order, b.pid)
		}
		inflightPrev := p.n - p.passed
		first, last, count := trace.NoTime, trace.NoTime, int64(0)
		for len(p.pending) > 0 && p.pending[0] <= b.queue {
			last = heap.Pop(&p.pending).(trace.Time)
			if count == 0 {
				first = last
			}
			count++
		}
		if p.n > 0 && inflightPrev > 0 && count > 0 {
			s := stallSample{index: b.index, reap: b.queue - first, pred: inflightPrev}
			if count == inflightPrev {
				s.idle = b.queue - last
			}
			p.samples = append(p.samples, s)
		}
		p.passed += count
		p.n++
		if d := p.n - p.passed; d > p.depth {
			p.depth = d
		}
		if b.done.Valid() {
			heap.Push(&p.pending, b.done)
		}
	}
	out := stallSet{host: map[bioKey]trace.Time{}}
	for _, pid := range order {
		p := procs[pid]
		for i := range p.samples {
			p.samples[i].atMax = p.samples[i].pred >= p.depth
		}
		host, periodic := processStalls(p.samples, p.depth, p.n)
		out.periodic += periodic
		for _, h := range host {
			out.host[bioKey{pid, h.index}] = h.typical
			out.hostTime += h.reap
		}
	}
	return out
}

type hostStall struct {
	index         uint32
	reap, typical trace.Time
}

// processStalls returns a process's host stalls and how many periodic
// stalls it kept, from its reaping delays, its depth and its bios.
func processStalls(samples []stallSample, depth, bios int64) ([]hostStall, int) {
	if len(samples) < stallSamples || depth < 2 {
		return nil, 0
	}
	reaps := make([]trace.Time, len(samples))
	for i, s := range samples {
		reaps[i] = s.reap
	}
	sort.Slice(reaps, func(i, j int) bool { return reaps[i] < reaps[j] })
	typical := reaps[len(reaps)/2]
	if typical > stallTypMax {
		return nil, 0
	}
	limit := max(stallMin, stallRatio*typical)
	var cands []stallSample
	for _, s := range samples {
		if s.reap >= limit {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 || len(cands) > stallCandMax || stallShare*len(cands) > len(samples) {
		return nil, 0
	}
	onLattice := periodicStalls(cands, depth, bios)
	var host []hostStall
	for i, c := range cands {
		if !onLattice[i] && c.atMax {
			host = append(host, hostStall{c.index, c.reap, typical})
		}
	}
	kept := 0
	for _, on := range onLattice {
		if on {
			kept++
		}
	}
	return host, kept
}

// periodicStalls marks the candidates that recur at a fixed number of
// bios (fio's thinktime_blocks: a drain and a sleep of a fixed length
// every N bios): a period P, at least stallPeriodMin times the depth (a
// drain every N bios keeps the depth at N at most), and a phase (a
// candidate's index) that at least 3 candidates, and half the bios/P the
// process's bios would hold, share modulo P within stallPeriodTol bios,
// of which at least 3, and half, were idle (nothing of the process in
// flight, from its latest completion to the bio) within a tenth of their
// median: the sleep's fixed length. Host stalls of a process that drained
// its whole depth resume in batches of it and recur at multiples of it,
// but neither cover a period nor last alike. The periods tried are the
// distances between candidates, the ones the most pairs are apart within
// stallPeriodTol first (at most stallPeriodsTried of them).
func periodicStalls(cands []stallSample, depth, bios int64) []bool {
	on := make([]bool, len(cands))
	if len(cands) < 3 {
		return on
	}
	minP := stallPeriodMin * depth
	count := map[int64]int{}
	for i := range cands {
		for j := i + 1; j < len(cands); j++ {
			if d := int64(cands[j].index) - int64(cands[i].index); d >= minP {
				count[d]++
			}
		}
	}
	type period struct {
		d int64
		n int
	}
	var ps []period
	for d := range count {
		n := 0
		for e := d - stallPeriodTol; e <= d+stallPeriodTol; e++ {
			n += count[e]
		}
		if n >= 2 {
			ps = append(ps, period{d, n})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].n != ps[j].n {
			return ps[i].n > ps[j].n
		}
		return ps[i].d < ps[j].d
	})
	for _, p := range ps[:min(len(ps), stallPeriodsTried)] {
		if lattice(cands, p.d, bios, on) {
			return on
		}
	}
	return make([]bool, len(cands))
}

// lattice tries period p on cands (periodicStalls), marking on.
func lattice(cands []stallSample, p, bios int64, on []bool) bool {
	// The phase: the candidate whose index, modulo p, the most others
	// share within stallPeriodTol.
	hits, phase := 0, int64(0)
	for i := range cands {
		n := 0
		for j := range cands {
			if onPhase(int64(cands[j].index), int64(cands[i].index), p) {
				n++
			}
		}
		if n > hits {
			hits, phase = n, int64(cands[i].index)
		}
	}
	if hits < 3 || 2*int64(hits) < bios/p {
		return false
	}
	var idle []trace.Time
	for i := range cands {
		on[i] = onPhase(int64(cands[i].index), phase, p)
		if on[i] {
			idle = append(idle, cands[i].idle)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i] < idle[j] })
	med := idle[len(idle)/2]
	alike := 0
	for _, t := range idle {
		if t >= med-med/10 && t <= med+med/10 {
			alike++
		}
	}
	return med > 0 && alike >= 3 && 2*alike >= len(idle)
}

// stallSource applies StallsDrop to a workload's records: a host stall's
// Think becomes its process's typical reaping delay, and so does the
// wake-up delay (Record.wake) its later bios take from it while it is
// their process's latest dependent bio.
type stallSource struct {
	recordSource
	host map[bioKey]trace.Time
	wake map[uint32]trace.Time // replaced wake-up delay, by process
}

func (s *stallSource) next() (*Record, error) {
	r, err := s.recordSource.next()
	if err != nil || r.Open {
		return r, err
	}
	typ, stall := s.host[bioKey{r.PID, r.Index}]
	if stall {
		r.Think = typ
	}
	if r.Dep >= 0 {
		if stall {
			s.wake[r.PID] = typ
		} else {
			delete(s.wake, r.PID)
		}
	}
	if w, ok := s.wake[r.PID]; ok {
		r.wake = w
	}
	return r, nil
}

// openRun opens the workload's records for a run under cfg's Stalls.
func (w *Workload) openRun(st Stalls) (recordSource, error) {
	if st != StallsDrop || w.Stalls().Host == 0 {
		return w.open()
	}
	src, err := w.open()
	if err != nil {
		return src, err
	}
	return &stallSource{recordSource: src, host: w.stalls.host, wake: map[uint32]trace.Time{}}, nil
}

// StallCounts is what the stall rule found in a workload.
type StallCounts struct {
	Host     int        // host stalls (replaced under StallsDrop)
	HostTime trace.Time // their captured reaping delays, summed
	Periodic int        // stalls kept as the application's (periodic)
}

// Stalls applies the stall rule (on Workload) to w's records, once, and
// returns what it found.
func (w *Workload) Stalls() StallCounts {
	w.stallsOnce.Do(func() {
		if w.stallsFn != nil {
			w.stalls = w.stallsFn()
		}
	})
	return StallCounts{Host: len(w.stalls.host), HostTime: w.stalls.hostTime, Periodic: w.stalls.periodic}
}

// asyncWrite reports whether cat is an asynchronous write (step 1 of the
// closed-loop rule: writeback, which no process waits for).
func asyncWrite(cat trace.Category) bool {
	return cat.IsWrite() && cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) == 0
}

// onPhase reports whether bio index x lies within stallPeriodTol of
// phase plus a multiple of period.
func onPhase(x, phase, period int64) bool {
	d := (x - phase) % period
	if d < 0 {
		d += period
	}
	return d <= stallPeriodTol || period-d <= stallPeriodTol
}
