package synth

import (
	"container/heap"
	"io"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// DeviceSpec is the fixed-latency device that times a synthetic capture:
// each request takes Latency plus its bytes at Bandwidth, and up to Depth
// requests are served at once (an NCQ device with Depth parallel slots);
// requests beyond Depth wait in FIFO order.
type DeviceSpec struct {
	Dev       trace.Dev     // device number put in every event (default 8,0)
	Latency   time.Duration // per request service time before transfer (default 100 µs)
	Bandwidth uint64        // transfer rate, bytes per second (0: transfer is free)
	Depth     int           // requests in service at once (default 32)
}

func (d DeviceSpec) withDefaults() DeviceSpec {
	if d.Dev == 0 {
		d.Dev = trace.MkDev(8, 0)
	}
	if d.Latency <= 0 && d.Bandwidth == 0 {
		d.Latency = 100 * time.Microsecond
	}
	if d.Depth < 1 {
		d.Depth = 32
	}
	return d
}

// service returns the service time of a request of n bytes, in ns.
func (d *DeviceSpec) service(n uint32) trace.Time {
	t := trace.Time(d.Latency)
	if d.Bandwidth > 0 {
		t += trace.Time(uint64(n) * 1e9 / d.Bandwidth)
	}
	if t < 1 {
		t = 1
	}
	return t
}

// Generate returns the synthetic capture of jobs run on dev: for every bio
// a Q, G, I and D event, and a C event when the device completes it, in
// nondecreasing time order (ties in the order the simulation produced
// them). Each job is a closed loop: it keeps IODepth I/Os in flight,
// submits the next one ThinkTime after a completion (no earlier than Rate
// allows) and stops at Runtime, IOs or Size. The stream is produced lazily
// and is the same for the same jobs, device and seed.
func Generate(jobs []Job, dev DeviceSpec, seed uint64) trace.EventReader {
	g := &generator{dev: dev.withDefaults()}
	for i, j := range jobs {
		st := NewStream(j, i, seed)
		js := &jobState{Stream: st, idx: i}
		g.jobs = append(g.jobs, js)
		g.push(trace.Time(st.j.Start), evStart, i, nil)
	}
	return g
}

type evKind uint8

const (
	evStart    evKind = iota // a job starts: submit IODepth I/Os
	evSubmit                 // a job submits one I/O
	evComplete               // the device completes a request
)

type ioReq struct {
	job  int
	bio  Bio
	done trace.Time
}

type simEvent struct {
	t    trace.Time
	seq  uint64
	kind evKind
	job  int
	rq   *ioReq
}

type evHeap []simEvent

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, k int) bool {
	if h[i].t != h[k].t {
		return h[i].t < h[k].t
	}
	return h[i].seq < h[k].seq
}
func (h evHeap) Swap(i, k int) { h[i], h[k] = h[k], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(simEvent)) }
func (h *evHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type jobState struct {
	*Stream
	idx      int
	inflight int
	bytes    uint64 // submitted
	stopped  bool
}

type generator struct {
	dev     DeviceSpec
	jobs    []*jobState
	events  evHeap
	seq     uint64
	evSeq   uint32
	out     []trace.Event
	pos     int
	busy    int      // requests in service
	waiting []*ioReq // FIFO of requests waiting for a slot
}

func (g *generator) push(t trace.Time, k evKind, job int, rq *ioReq) {
	g.seq++
	heap.Push(&g.events, simEvent{t: t, seq: g.seq, kind: k, job: job, rq: rq})
}

// ReadEvent returns the next event of the capture, or io.EOF.
func (g *generator) ReadEvent() (trace.Event, error) {
	for g.pos >= len(g.out) {
		g.out, g.pos = g.out[:0], 0
		if len(g.events) == 0 {
			return trace.Event{}, io.EOF
		}
		g.step()
	}
	e := g.out[g.pos]
	g.pos++
	return e, nil
}

// step processes the earliest simulation event.
func (g *generator) step() {
	e := heap.Pop(&g.events).(simEvent)
	now := e.t
	switch e.kind {
	case evStart:
		js := g.jobs[e.job]
		for i := 0; i < js.j.IODepth; i++ {
			g.submit(now, js)
		}
	case evSubmit:
		g.submit(now, g.jobs[e.job])
	case evComplete:
		rq := e.rq
		js := g.jobs[rq.job]
		g.emit(now, trace.ActionComplete, js, rq.bio, trace.CatComplete)
		g.busy--
		if len(g.waiting) > 0 {
			next := g.waiting[0]
			g.waiting = g.waiting[1:]
			g.issue(now, next)
		}
		js.inflight--
		g.scheduleNext(now, js)
	}
}

// scheduleNext arranges the job's next submission after a completion.
func (g *generator) scheduleNext(now trace.Time, js *jobState) {
	at := now + trace.Time(js.j.ThinkTime)
	if js.j.Rate > 0 {
		earliest := trace.Time(js.j.Start) + trace.Time(js.bytes*1e9/js.j.Rate)
		if earliest > at {
			at = earliest
		}
	}
	g.push(at, evSubmit, js.idx, nil)
}

// submit issues one bio of js at now, if the job has I/O left.
func (g *generator) submit(now trace.Time, js *jobState) {
	if js.stopped || !js.More() || (js.j.Runtime > 0 && now >= trace.Time(js.j.Start+js.j.Runtime)) {
		js.stopped = true
		return
	}
	if js.j.Rate > 0 {
		earliest := trace.Time(js.j.Start) + trace.Time(js.bytes*1e9/js.j.Rate)
		if earliest > now {
			g.push(earliest, evSubmit, js.idx, nil)
			return
		}
	}
	b := js.Next()
	js.bytes += uint64(b.Bytes)
	js.inflight++
	g.emit(now, trace.ActionQueue, js, b, trace.CatQueue)
	g.emit(now, trace.ActionGetRQ, js, b, trace.CatQueue)
	g.emit(now, trace.ActionInsert, js, b, trace.CatQueue)
	rq := &ioReq{job: js.idx, bio: b}
	if g.busy < g.dev.Depth {
		g.issue(now, rq)
	} else {
		g.waiting = append(g.waiting, rq)
	}
}

// issue starts rq on the device at now.
func (g *generator) issue(now trace.Time, rq *ioReq) {
	g.busy++
	g.emit(now, trace.ActionIssue, g.jobs[rq.job], rq.bio, trace.CatIssue)
	rq.done = now + g.dev.service(rq.bio.Bytes)
	g.push(rq.done, evComplete, rq.job, rq)
}

func (g *generator) emit(now trace.Time, a trace.Action, js *jobState, b Bio, family trace.Category) {
	g.evSeq++
	g.out = append(g.out, trace.Event{
		Time: now, Seq: g.evSeq, Dev: g.dev.Dev, Action: a, Cat: b.Cat | family,
		Sector: b.Sector, Bytes: b.Bytes, PID: js.j.PID,
		Cgroup: js.j.Cgroup, CgroupPath: js.j.CgroupPath, Comm: js.j.Comm,
	})
}
