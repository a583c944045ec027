package replay

import (
	"fmt"

	"github.com/tracesched/tracesched/trace"
)

// Work says how much a process does in a replay.
type Work uint8

const (
	// WorkFixed: every process sends exactly the bios the capture shows,
	// once. The default: what a validation replay compares.
	WorkFixed Work = iota
	// WorkTimed: a process that did I/O from the capture's start until it
	// ended (a time-based fio job, a service; see timedProcess) goes on
	// once its captured bios are spent: it sends them again, in the same
	// order with the same sizes, sectors, think times and gaps, cycle
	// after cycle, until its next arrival would fall after the capture's
	// last completion (Workload.End). The capture cut such a process off
	// at the end of the run, not at the end of its work, so under another
	// scheduler it does as much as that scheduler lets it do in the same
	// time: a process the source scheduler starved (a queue-depth-1 reader
	// behind deep queues, the light cgroup under BFQ) is not held to the
	// few bios it managed, and the one it favoured does not run out early
	// and leave the device to the others (issue 10, item 4). Processes
	// that finished earlier, those with asynchronous writes (writeback,
	// paced by the flusher), and those with a cross-process edge from a
	// process that does not cycle send their captured bios once.
	// Processes linked by edges that all cycle (fio's fsyncs and jbd2's
	// commits) cycle together: a bio of cycle c released by another
	// process's bio waits for that bio's copy in the other's cycle c.
	// Only the first crossRepeat releases of a pair, which the capture
	// kept without an edge, keep their think times in every cycle.
	WorkTimed
)

func (w Work) String() string {
	if w == WorkTimed {
		return "timed"
	}
	return "fixed"
}

// ParseWork maps "fixed" or "timed" to a Work.
func ParseWork(s string) (Work, error) {
	switch s {
	case "fixed", "":
		return WorkFixed, nil
	case "timed":
		return WorkTimed, nil
	}
	return WorkFixed, fmt.Errorf("unknown work %q (valid: fixed, timed)", s)
}

// timedTail is the fraction of the capture's span, at its start and at
// its end, in which a process's first bio and its last completion must
// fall for it to count as running through the capture and cut off by its
// end (WorkTimed).
const timedTail = 20

// timedState is a process's cycling under WorkTimed.
type timedState struct {
	orig       cycBios    // its captured bios as the workload gave them (inferred fields set)
	delivered  int        // records delivered from the workload
	ineligible bool       // an asynchronous write or a cross-process edge: never cycles
	cycle      int        // cycles made after the captured one (the last one begun)
	next       int        // the bio of the cycle nextCycle makes next (0: a new cycle)
	depth      int64      // most bios it kept in flight in the capture
	period     trace.Time // captured Q of its last bio less that of its first, plus one gap
	stopped    bool       // its next arrival fell after Workload.End
}

// timedProcess reports whether, under WorkTimed, the process of ps cycles:
// at least two bios, its first within the first 1/timedTail of the
// capture's span (Start to End) and its last completion within the last
// 1/timedTail. A process that started late (a sync(1) after the job, a
// step of a sweep) or stopped early did a piece of work, not a time's
// worth.
func timedProcess(w *Workload, ps ProcessStats) bool {
	if !w.Start.Valid() || !w.End.Valid() || w.End <= w.Start || w.perPID[ps.PID] < 2 {
		return false
	}
	tail := (w.End - w.Start) / timedTail
	return ps.First.Valid() && ps.First <= w.Start+tail && ps.Last.Valid() && ps.Last >= w.End-tail
}

// keep copies r, just delivered, into p's captured cycle; a bio that makes
// the process ineligible (an asynchronous write after its first bio, a
// cross-process edge from a process that does not cycle) ends its
// cycling. timed is the engine's processes that cycle; keep marks in
// linked the processes whose bios release r's (their cycled bios are
// made through cycRecord). A partner found ineligible later (an
// asynchronous write after its edges) makes no cycle: the process then
// stops at its first edge of its next cycle, as under WorkFixed.
func (t *timedState) keep(r *Record, timed, linked map[uint32]bool) {
	t.delivered++
	if t.ineligible {
		return
	}
	a := r.releaser()
	if (r.Open && t.delivered > 1) || (a != nil && !timed[a.PID]) {
		t.orig, t.ineligible = cycBios{}, true
		return
	}
	if a != nil {
		linked[a.PID] = true
	}
	t.orig.add(r)
}

// cycBio is what nextCycle makes a later cycle's bio from: the fields of
// a captured Record it copies or reads, a little over half a Record's
// size (timed processes keep one for each of their captured bios).
type cycBio struct {
	PID, CPU, DoneCPU, Index, Bytes uint32
	Cat                             trace.Category
	Segments                        uint16
	Plugged, PlugEnd                bool
	Cgroup, Sector                  uint64
	Comm                            string
	Queue, Think, wake              trace.Time
	Dep, DepCount                   int64
	after                           *Record
	afterDelay                      trace.Time
}

// cycChunk is the number of cycBios in each chunk of a cycBios.
const cycChunk = 4096

// cycBios is a process's captured bios (cycBio) in fixed-size chunks:
// appending never copies what is held, and the memory grows with the
// bios, not by doubling (a timed process of 1 M bios: 120 MB where a
// slice of Records grew to 216 MB and copied about as much again).
type cycBios struct {
	chunks [][]cycBio // every chunk but the last is full
	n      int
}

func (b *cycBios) len() int { return b.n }

// at returns bio i, 0 <= i < len().
func (b *cycBios) at(i int) *cycBio { return &b.chunks[i/cycChunk][i%cycChunk] }

// add appends a copy of r's fields.
func (b *cycBios) add(r *Record) {
	k := len(b.chunks) - 1
	if k < 0 || len(b.chunks[k]) == cycChunk {
		b.chunks = append(b.chunks, make([]cycBio, 0, min(cycChunk, max(64, 2*b.n))))
		k++
	} else if c := b.chunks[k]; len(c) == cap(c) {
		// The first chunk grows by doubling up to cycChunk, so a short
		// process does not hold a whole chunk.
		b.chunks[k] = append(make([]cycBio, 0, min(cycChunk, 2*cap(c))), c...)
	}
	b.chunks[k] = append(b.chunks[k], cycBio{
		PID: r.PID, CPU: r.CPU, DoneCPU: r.DoneCPU, Index: r.Index, Bytes: r.Bytes,
		Cat: r.Cat, Segments: r.Segments, Plugged: r.Plugged, PlugEnd: r.PlugEnd,
		Cgroup: r.Cgroup, Sector: r.Sector, Comm: r.Comm,
		Queue: r.Queue, Think: r.Think, wake: r.wake, Dep: r.Dep, DepCount: r.DepCount,
		after: r.releaser(), afterDelay: r.releaseDelay(),
	})
	b.n++
}

// cycKey names a bio of a later cycle: its process and Index (the
// captured bio's Index plus the cycle times the process's captured bios).
type cycKey struct {
	pid   uint32
	index uint32
}

// cycRecord returns the record of a later cycle's bio k, made empty
// (predDone NoTime) when its process has not made that cycle yet: a bio
// released by another process's bio of its cycle (a cross-process edge,
// step 6 of the rule on Workload) waits on it, and nextCycle fills it in.
func (e *Engine) cycRecord(k cycKey) *Record {
	if r, ok := e.cyc[k]; ok {
		return r
	}
	if e.cyc == nil {
		e.cyc = map[cycKey]*Record{}
	}
	r := &Record{PID: k.pid, Index: k.index, predQueue: trace.NoTime, predDone: trace.NoTime}
	e.cyc[k] = r
	return r
}

// nextCycle appends the next bios of p's cycles to its queue when its
// captured ones (and those of earlier cycles) have all been delivered, and
// reports whether it did. It appends at most recBlock of them at a time,
// in order, the next ones when the queue has run empty: the queue then
// holds a block of a cycle, not a whole one (a million records a cycle for
// a capture of an hour), and the replay is the same as with the whole
// cycle queued, since only the queue's head is ever read and the capture's
// records have all been delivered by then.
func (e *Engine) nextCycle(p *proc) bool {
	t := p.timed
	if t == nil || t.stopped || t.ineligible || t.orig.len() < 2 || t.delivered != e.w.perPID[p.pid] {
		return false
	}
	n := t.orig.len()
	last := t.orig.at(n - 1)
	if t.cycle == 0 {
		// The depth the process reached: the largest i+1-DepCount (step 2
		// of the closed-loop rule), the whole stream when it never waited.
		for i := range n {
			if o := t.orig.at(i); o.DepCount > 0 {
				t.depth = max(t.depth, int64(i)+1-o.DepCount)
			}
		}
		if t.depth == 0 {
			t.depth = int64(n)
		}
		t.period = last.Queue - t.orig.at(0).Queue + last.Think
	}
	if t.next == 0 {
		t.cycle++
	}
	base := int64(t.cycle) * int64(n)
	from, to := t.next, min(t.next+recBlock, n)
	linked := e.linked[p.pid]
	var block []Record
	if !linked {
		block = make([]Record, to-from)
	}
	for i := from; i < to; i++ {
		o := t.orig.at(i)
		var c *Record
		if linked {
			// Another process's bios of this cycle may wait on it, made
			// before or after this one; those of two cycles back are
			// behind them both.
			c = e.cycRecord(cycKey{p.pid, o.Index + uint32(base)})
			if t.cycle >= 2 {
				delete(e.cyc, cycKey{p.pid, o.Index + uint32(base) - 2*uint32(n)})
			}
		} else {
			c = &block[i-from]
		}
		*c = Record{
			PID: o.PID, CPU: o.CPU, DoneCPU: o.DoneCPU, Index: o.Index + uint32(base), Cgroup: o.Cgroup, Comm: o.Comm,
			Sector: o.Sector, Bytes: o.Bytes, Cat: o.Cat, Segments: o.Segments,
			Queue: o.Queue + trace.Time(t.cycle)*t.period, Issue: trace.NoTime, Done: trace.NoTime,
			Plugged: o.Plugged, PlugEnd: o.PlugEnd,
			Dep: -1, Think: o.Think, wake: o.wake,
			predQueue: trace.NoTime, predDone: trace.NoTime, proc: p,
		}
		if a := o.after; a != nil {
			// A cross-process edge: released by the other process's
			// bio of the same cycle (both cycle, keep).
			m := uint32(e.w.perPID[a.PID])
			c.setAfter(e.cycRecord(cycKey{a.PID, a.Index + uint32(t.cycle)*m}), o.afterDelay)
		}
		if o.Dep >= 0 {
			c.Dep = o.Dep + base
		}
		if i == 0 {
			// The first bio of a process has no think time of its own: it
			// follows the last one of the previous cycle as the last one
			// followed its predecessor.
			c.Think = last.Think
			if last.Dep >= 0 {
				c.Dep = base - 1
			}
		}
		if need := base + int64(i) + 1 - t.depth; need > 0 {
			c.DepCount = need
		}
		p.queue.push(c)
	}
	p.total += to - from
	t.next = to % n
	return true
}

// stopTimed ends p's cycling when its next arrival, at, would fall after
// the capture's end: the bios of the cycle not yet arrived are dropped.
// It reports whether it did.
func (e *Engine) stopTimed(p *proc, r *Record, at trace.Time) bool {
	t := p.timed
	if t == nil || t.cycle == 0 || int(r.Index) < t.orig.len() || at <= e.w.End {
		return false
	}
	t.stopped = true
	p.total -= p.queue.clear()
	if len(p.plug) > 0 {
		e.flushPlug(p, true)
	}
	if !p.exited && p.completed == p.total {
		p.exited = true
		if e.exit != nil {
			e.exit.ProcessExited(e.now, p.pid)
		}
	}
	return true
}
