package bfq

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// logLine is one message the model logged.
type logLine struct {
	t      trace.Time
	pid    uint32
	cgroup uint64
	text   string
}

// fakeHost is a tiny replay engine: closed-loop processes, a device that
// serves one request at a time with a fixed service time (plus a per-sector
// cost) and holds up to depth requests, timers and kicks.
type fakeHost struct {
	now      trace.Time
	timerAt  map[int]trace.Time
	kicked   bool
	q        replay.Queue
	logs     []logLine
	keepLogs bool

	s      *Scheduler
	procs  []*proc
	nextID uint64

	inflight []inflight // in completion order
	busyTill trace.Time
	svc      trace.Time // per request
	perSect  trace.Time // per sector
	parallel bool       // requests in the device are served concurrently (NCQ/SSD-like)

	served     map[uint64]uint64 // sectors completed by cgroup
	servedPID  map[uint32]uint64
	dispatches int
	idleGaps   trace.Time // device idle while requests were queued in the scheduler

	// injectedAt: when each request of a process was dispatched while
	// another process's queue was in service (injected), by PID; nil: not
	// recorded.
	injectedAt map[uint32][]trace.Time

	recycle bool              // reuse completed requests (benchmarks: keep the host's allocations out)
	free    []*replay.Request // completed requests, when recycle
}

type inflight struct {
	at trace.Time
	rq *replay.Request
	p  *proc
}

// proc is a closed-loop process: up to depth requests outstanding, each
// next request think after the previous completion.
type proc struct {
	pid     uint32
	cgroup  uint64
	sector  uint64 // next sector
	region  uint64 // random: region size in sectors (0: sequential)
	base    uint64
	size    uint32 // bytes
	depth   int
	think   trace.Time
	start   trace.Time
	stop    trace.Time
	write   bool // async buffered write
	out     int
	pending []trace.Time // arrival times of requests not yet inserted
	rng     uint64
	exited  bool

	// stallEvery > 0: after each stallEvery-th submission the process
	// stops submitting, waits for all its requests to complete and sleeps
	// stall before refilling its depth (fio's thinktime with an async
	// engine: io_u_quiesce, then the think time). stallEnds lists when
	// each sleep ended.
	stallEvery int
	stall      trace.Time
	issued     int
	quiescing  bool
	stallEnds  []trace.Time
}

func (p *proc) nextSector() uint64 {
	if p.region == 0 {
		s := p.sector
		p.sector += uint64(p.size >> 9)
		return s
	}
	p.rng = p.rng*6364136223846793005 + 1442695040888963407
	blk := (p.rng >> 33) % (p.region / uint64(p.size>>9))
	return p.base + blk*uint64(p.size>>9)
}

func newFakeHost(rot bool, depth int, svc trace.Time) *fakeHost {
	return &fakeHost{timerAt: map[int]trace.Time{}, q: replay.Queue{Rotational: rot, Depth: depth, NrRequests: 256, MaxSectors: 2560},
		svc: svc, served: map[uint64]uint64{}, servedPID: map[uint32]uint64{}}
}

func (h *fakeHost) ArmTimer(id int, at trace.Time) { h.timerAt[id] = at }
func (h *fakeHost) CancelTimer(id int)             { delete(h.timerAt, id) }
func (h *fakeHost) Kick()                          { h.kicked = true }
func (h *fakeHost) Log(now trace.Time, pid uint32, cg uint64, text string) {
	if h.keepLogs {
		h.logs = append(h.logs, logLine{now, pid, cg, text})
	}
}
func (h *fakeHost) InDriver() int       { return len(h.inflight) }
func (h *fakeHost) Queue() replay.Queue { return h.q }

func (h *fakeHost) add(p *proc) {
	if p.depth == 0 {
		p.depth = 1
	}
	if p.size == 0 {
		p.size = 4096
	}
	p.rng = uint64(p.pid)*2654435761 + 1
	for i := 0; i < p.depth; i++ {
		p.pending = append(p.pending, p.start)
	}
	h.procs = append(h.procs, p)
}

// run simulates until end.
func (h *fakeHost) run(end trace.Time) {
	const never = trace.Time(1 << 62)
	for {
		// next event
		next, kind, idx := never, 0, 0
		if len(h.inflight) > 0 && h.inflight[0].at < next {
			next, kind = h.inflight[0].at, 1
		}
		if at, ok := h.timerAt[idleTimerID]; ok && at < next {
			next, kind = at, 2
		}
		for i, p := range h.procs {
			if len(p.pending) > 0 && p.pending[0] < next {
				next, kind, idx = p.pending[0], 3, i
			}
		}
		if next == never || next > end {
			return
		}
		if next > h.now {
			if len(h.inflight) == 0 && h.s.queued > 0 {
				h.idleGaps += next - h.now
			}
			h.now = next
		}
		switch kind {
		case 1:
			f := h.inflight[0]
			copy(h.inflight, h.inflight[1:])
			h.inflight = h.inflight[:len(h.inflight)-1]
			h.served[f.rq.Cgroup] += uint64(f.rq.Bytes >> 9)
			h.servedPID[f.rq.PID] += uint64(f.rq.Bytes >> 9)
			h.s.Completed(h.now, f.rq)
			if h.recycle {
				h.free = append(h.free, f.rq)
			}
			p := f.p
			p.out--
			if p.quiescing {
				if p.out == 0 {
					p.quiescing = false
					end := h.now + p.stall
					p.stallEnds = append(p.stallEnds, end)
					for i := 0; i < p.depth && end < p.stop; i++ {
						p.pending = append(p.pending, end)
					}
				}
			} else if h.now < p.stop {
				p.pending = append(p.pending, h.now+p.think)
			} else if p.out == 0 && !p.exited {
				p.exited = true
				h.s.ProcessExited(h.now, p.pid)
			}
		case 2:
			delete(h.timerAt, idleTimerID)
			h.s.Timer(h.now, idleTimerID)
		case 3:
			p := h.procs[idx]
			copy(p.pending, p.pending[1:])
			p.pending = p.pending[:len(p.pending)-1]
			h.nextID++
			cat := trace.CatRead
			if p.write {
				cat = trace.CatWrite
			}
			var rq *replay.Request
			if n := len(h.free); n > 0 {
				rq = h.free[n-1]
				h.free = h.free[:n-1]
			} else {
				rq = new(replay.Request)
			}
			*rq = replay.Request{ID: h.nextID, PID: p.pid, Cgroup: p.cgroup, Sector: p.nextSector(), Bytes: p.size,
				Cat: cat, Bios: 1, Queued: h.now, Inserted: h.now, Issued: trace.NoTime}
			p.out++
			p.issued++
			if p.stallEvery > 0 && p.issued%p.stallEvery == 0 {
				p.quiescing, p.pending = true, p.pending[:0]
			}
			h.s.Insert(h.now, rq)
		}
		h.dispatch()
	}
}

func (h *fakeHost) dispatch() {
	for len(h.inflight) < h.q.Depth && h.s.HasWork(h.now) {
		rq := h.s.Dispatch(h.now)
		if rq == nil {
			break
		}
		rq.Issued = h.now
		if in := h.s.inService; h.injectedAt != nil && in != nil && in.pid != int32(rq.PID) {
			h.injectedAt[rq.PID] = append(h.injectedAt[rq.PID], h.now)
		}
		start := h.busyTill
		if start < h.now || h.parallel {
			start = h.now
		}
		h.busyTill = start + h.svc + h.perSect*trace.Time(rq.Bytes>>9)
		var p *proc
		for _, x := range h.procs {
			if x.pid == rq.PID {
				p = x
			}
		}
		h.inflight = append(h.inflight, inflight{at: h.busyTill, rq: rq, p: p})
		h.dispatches++
	}
	h.kicked = false
}

func newSched(t testing.TB, h *fakeHost, o replay.Options) *Scheduler {
	t.Helper()
	s, err := New(h, o)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	return s
}

func (h *fakeHost) count(sub string) int {
	n := 0
	for _, l := range h.logs {
		if strings.Contains(l.text, sub) {
			n++
		}
	}
	return n
}

func (h *fakeHost) first(sub string) (logLine, bool) {
	for _, l := range h.logs {
		if strings.Contains(l.text, sub) {
			return l, true
		}
	}
	return logLine{}, false
}

const ms = trace.Time(1000000)
