package cfq

import (
	"container/heap"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/synth"
	"github.com/tracesched/tracesched/trace"
)

// A small discrete-event host for the tests: closed-loop processes from
// synth job streams, a device with a fixed service time, NCQ slots and
// (rotational) a seek penalty, and the timers and queue runs of replay.Host.

type devModel struct {
	rotational bool
	depth      int           // requests the driver accepts at once
	channels   int           // requests served in parallel (1 for a disk head)
	base       time.Duration // per request
	seek       time.Duration // added when a request does not start where the last ended (rotational)
	bw         uint64        // bytes per second
}

type proc struct {
	st       *synth.Stream
	job      synth.Job
	inflight int
	stopped  bool
	exited   bool
	bytes    uint64
	ios      int
	maxLat   int64
	maxAt    int64 // completion time of the slowest request
	sumLat   int64
	first    int64 // first submission
	lastDone int64 // latest completion
	started  bool
}

// fioBW is what fio reports for the job: bytes over the job's own runtime
// (first submission to last completion), in MiB/s.
func (p *proc) fioBW() float64 {
	if p.lastDone <= p.first {
		return 0
	}
	return float64(p.bytes) / (1 << 20) / (float64(p.lastDone-p.first) / 1e9)
}

type hev struct {
	t    int64
	seq  uint64
	kind int // 0 submit, 1 complete, 2 timer
	p    *proc
	rq   *replay.Request
	id   int
}

type hheap []hev

func (h hheap) Len() int { return len(h) }
func (h hheap) Less(i, k int) bool {
	if h[i].t != h[k].t {
		return h[i].t < h[k].t
	}
	return h[i].seq < h[k].seq
}
func (h hheap) Swap(i, k int) { h[i], h[k] = h[k], h[i] }
func (h *hheap) Push(x any)   { *h = append(*h, x.(hev)) }
func (h *hheap) Pop() any {
	o := *h
	e := o[len(o)-1]
	*h = o[:len(o)-1]
	return e
}

type harness struct {
	now      int64
	end      int64
	ev       hheap
	seq      uint64
	s        *Scheduler
	dev      devModel
	kicked   bool
	inDriver int
	timers   map[int]uint64
	logs     []string
	keepLogs bool
	nLogs    int
	nextID   uint64
	procs    []*proc
	byRQ     map[*replay.Request]*proc
	chanFree []int64
	lastEnd  uint64
	// firstExit is when the first process finished; atFirstExit holds
	// every process's completed bytes then (the shared phase).
	firstExit   int64
	atFirstExit []uint64
}

func (h *harness) ArmTimer(id int, at trace.Time) {
	h.seq++
	h.timers[id] = h.seq
	heap.Push(&h.ev, hev{t: int64(at), seq: h.seq, kind: 2, id: id})
}
func (h *harness) CancelTimer(id int) { delete(h.timers, id) }
func (h *harness) Kick()              { h.kicked = true }
func (h *harness) Log(now trace.Time, pid uint32, cg uint64, text string) {
	h.nLogs++
	if h.keepLogs {
		h.logs = append(h.logs, text)
	}
}
func (h *harness) InDriver() int { return h.inDriver }
func (h *harness) Queue() replay.Queue {
	return replay.Queue{Rotational: h.dev.rotational, Depth: h.dev.depth, NrRequests: 128, MaxSectors: 2560}
}

func newHarness(dev devModel, jobs []synth.Job, seed uint64, o replay.Options, runFor time.Duration) (*harness, error) {
	h := &harness{dev: dev, timers: map[int]uint64{}, byRQ: map[*replay.Request]*proc{}, end: int64(runFor)}
	h.chanFree = make([]int64, max(dev.channels, 1))
	s, err := New(h, o)
	if err != nil {
		return nil, err
	}
	h.s = s
	for i, j := range jobs {
		st := synth.NewStream(j, i, seed)
		p := &proc{st: st, job: st.Job()}
		h.procs = append(h.procs, p)
		for k := 0; k < p.job.IODepth; k++ {
			h.push(int64(p.job.Start), 0, p, nil)
		}
	}
	return h, nil
}

func (h *harness) push(t int64, kind int, p *proc, rq *replay.Request) {
	h.seq++
	heap.Push(&h.ev, hev{t: t, seq: h.seq, kind: kind, p: p, rq: rq})
}

func (h *harness) run() {
	for len(h.ev) > 0 {
		e := heap.Pop(&h.ev).(hev)
		if e.t > h.end {
			break
		}
		h.now = e.t
		switch e.kind {
		case 0:
			h.submit(e.p)
		case 1:
			h.complete(e.rq)
		case 2:
			if h.timers[e.id] != e.seq {
				continue
			}
			delete(h.timers, e.id)
			h.s.Timer(trace.Time(h.now), e.id)
		}
		h.runQueue()
	}
}

func (h *harness) submit(p *proc) {
	j := &p.job
	if p.stopped || !p.st.More() || (j.Runtime > 0 && h.now >= int64(j.Start+j.Runtime)) {
		p.stopped = true
		h.maybeExit(p)
		return
	}
	b := p.st.Next()
	if !p.started {
		p.started, p.first = true, h.now
	}
	h.nextID++
	rq := &replay.Request{ID: h.nextID, PID: j.PID, Cgroup: j.Cgroup, Sector: b.Sector, Bytes: b.Bytes,
		Cat: b.Cat, Bios: 1, Queued: trace.Time(h.now), Inserted: trace.Time(h.now), Issued: trace.NoTime}
	h.byRQ[rq] = p
	p.inflight++
	h.s.Insert(trace.Time(h.now), rq)
}

func (h *harness) maybeExit(p *proc) {
	if p.stopped && p.inflight == 0 && !p.exited {
		p.exited = true
		if h.atFirstExit == nil {
			h.firstExit = h.now
			for _, x := range h.procs {
				h.atFirstExit = append(h.atFirstExit, x.bytes)
			}
		}
		h.s.ProcessExited(trace.Time(h.now), p.job.PID)
	}
}

func (h *harness) complete(rq *replay.Request) {
	h.inDriver--
	p := h.byRQ[rq]
	delete(h.byRQ, rq)
	h.s.Completed(trace.Time(h.now), rq)
	lat := h.now - int64(rq.Queued)
	if lat > p.maxLat {
		p.maxLat, p.maxAt = lat, h.now
	}
	p.sumLat += lat
	p.lastDone = h.now
	p.ios++
	p.bytes += uint64(rq.Bytes)
	p.inflight--
	if !p.stopped {
		h.push(h.now+int64(p.job.ThinkTime), 0, p, nil)
	} else {
		h.maybeExit(p)
	}
}

func (h *harness) runQueue() {
	for n := 0; h.kicked && n < 1000; n++ {
		h.kicked = false
		for h.inDriver < h.dev.depth {
			rq := h.s.Dispatch(trace.Time(h.now))
			if rq == nil {
				break
			}
			rq.Issued = trace.Time(h.now)
			h.inDriver++
			h.push(h.issue(rq), 1, nil, rq)
		}
	}
}

// issue returns the completion time of rq on the device.
func (h *harness) issue(rq *replay.Request) int64 {
	best := 0
	for i, f := range h.chanFree {
		if f < h.chanFree[best] {
			best = i
		}
	}
	start := max(h.now, h.chanFree[best])
	svc := int64(h.dev.base)
	if h.dev.bw > 0 {
		svc += int64(uint64(rq.Bytes) * 1e9 / h.dev.bw)
	}
	if h.dev.rotational && rq.Sector != h.lastEnd {
		svc += int64(h.dev.seek)
	}
	h.lastEnd = rq.End()
	h.chanFree[best] = start + svc
	return start + svc
}

// bytesBy sums completed bytes per cgroup.
func (h *harness) bytesBy() map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, p := range h.procs {
		m[p.job.Cgroup] += p.bytes
	}
	return m
}
