package device

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Workload is a synthetic closed-loop workload for Synthesize: Streams
// processes each keep up to Depth requests on the device, issuing the next
// one Think (exponentially distributed, this mean) after a completion.
type Workload struct {
	Streams    int           // independent processes (default 1)
	Depth      int           // requests each keeps in flight (default 1)
	Requests   int           // requests in all
	Sizes      []uint32      // request sizes, bytes, drawn uniformly (default 4096)
	Capacity   uint64        // sectors addressed (default 2^24, 8 GiB)
	Sequential float64       // probability a request starts where its stream's previous one ended
	Near       float64       // probability that another request lands within NearSpan sectors of it
	NearSpan   uint64        // sectors (default Capacity/64)
	Writes     float64       // probability a request writes
	Think      time.Duration // mean delay from a completion to the stream's next issue
}

// Synthesize replays w through a device of m, with no scheduler (every
// request is issued as soon as its process sends it), and returns the
// requests as the trace package rebuilds them from a capture: Queue, Get,
// Insert and Issue at the issue, Complete at the modelled completion,
// ordered by ID (issue order). It is how tests and demonstrations make a
// capture of a device the recorded captures lack, a rotational disk.
// Workload draws and the device are seeded from seed.
func Synthesize(m *Model, w Workload, seed uint64) []trace.Request {
	w.Streams = max(w.Streams, 1)
	w.Depth = max(w.Depth, 1)
	if len(w.Sizes) == 0 {
		w.Sizes = []uint32{4096}
	}
	if w.Capacity == 0 {
		w.Capacity = 1 << 24
	}
	if w.NearSpan == 0 {
		w.NearSpan = w.Capacity / 64
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dev := m.NewDevice(seed + 1)
	next := make([]uint64, w.Streams) // sector after each stream's last request
	for i := range next {
		next[i] = rng.Uint64N(w.Capacity)
	}
	out := make([]trace.Request, 0, w.Requests)
	rqs := make([]*replay.Request, 0, w.Requests)
	var q synthQueue
	seq := 0
	push := func(e synthEvent) {
		seq++
		e.seq = seq
		heap.Push(&q, e)
	}
	for s := 0; s < w.Streams; s++ {
		for d := 0; d < w.Depth; d++ {
			push(synthEvent{t: trace.Time(s*w.Depth+d) * 1000, stream: s})
		}
	}
	for q.Len() > 0 {
		e := heap.Pop(&q).(synthEvent)
		if e.done {
			r := &out[e.req]
			r.Complete = e.t
			dev.Done(e.t, rqs[e.req])
			think := trace.Time(rng.ExpFloat64() * float64(w.Think))
			push(synthEvent{t: e.t + think, stream: int(r.PID - 1)})
			continue
		}
		if len(out) == w.Requests {
			continue
		}
		s := e.stream
		bytes := w.Sizes[rng.IntN(len(w.Sizes))]
		sector := next[s]
		size := uint64(bytes >> 9)
		switch u := rng.Float64(); {
		case u < w.Sequential && sector+size <= w.Capacity:
		case u < w.Sequential+w.Near:
			lo := sector - min(sector, w.NearSpan)
			hi := min(sector+w.NearSpan, w.Capacity-size)
			sector = (lo + rng.Uint64N(hi-lo+1)) &^ 7
		default:
			sector = rng.Uint64N(w.Capacity-size) &^ 7
		}
		cat := trace.CatRead
		if rng.Float64() < w.Writes {
			cat = trace.CatWrite | trace.CatSync
		}
		next[s] = sector + uint64(bytes>>9)
		id := uint64(len(out) + 1)
		rq := &replay.Request{ID: id, PID: uint32(s + 1), Sector: sector, Bytes: bytes, Cat: cat, Bios: 1,
			Queued: e.t, Inserted: e.t, Issued: e.t}
		done := dev.Issue(e.t, rq)
		out = append(out, trace.Request{
			ID: id, Dev: trace.MkDev(8, 0), Sector: sector, Bytes: bytes, Cat: cat, PID: uint32(s + 1),
			Queue: e.t, Get: e.t, Insert: e.t, Issue: e.t, Complete: trace.NoTime, Bios: 1,
		})
		rqs = append(rqs, rq)
		push(synthEvent{t: done, done: true, req: len(out) - 1})
	}
	return out
}

type synthEvent struct {
	t      trace.Time
	done   bool // a completion (else a stream's next issue)
	req    int  // completion: index of the request
	stream int  // issue: the stream
	seq    int  // tie-break: order pushed
}

// synthQueue orders events by time, completions before issues, then by seq.
type synthQueue []synthEvent

func (q synthQueue) Len() int { return len(q) }
func (q synthQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.t != b.t {
		return a.t < b.t
	}
	if a.done != b.done {
		return a.done
	}
	return a.seq < b.seq
}
func (q synthQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *synthQueue) Push(x any)   { *q = append(*q, x.(synthEvent)) }
func (q *synthQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
