package device

import (
	"math"
	"math/rand/v2"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Timing is a device of a Model: the replay.Device the engine drives. Its
// state is the set of requests on the device and the head position (the
// end of the last request issued); a rotational device also keeps its
// requests in service order with their service times. Each Issue draws one
// number from a PCG generator seeded at creation, so a Timing is
// deterministic for a given seed and sequence of calls. Not safe for
// concurrent use.
//
// A rotational device serves one request at a time in issue order: a
// request starts when the one before it completes. Done re-anchors that
// chain: the requests still queued start from the time Done reports, so a
// device told of real completions (as Calibrate's scoring does) follows
// the real device instead of drifting; told of its own completions (as a
// replay engine does) it changes nothing.
type Timing struct {
	m        *Model
	rng      *rand.Rand
	inflight map[*replay.Request]struct{}
	head     uint64             // sector after the last request issued
	bytes    uint64             // bytes of the requests on the device
	bunch    [numOps]bunchState // non-rotational with batching: the bunch opened last (per class with PerOp)
	streams  streams            // where the last requests issued ended (OpTiming.Seq)
	useSeq   bool               // some class has a sequential-stream factor: keep streams
	held     [numOps]heldDraw   // non-rotational: each class's last residual draw (OpTiming.Hold)
	// large: non-rotational with Behind, the requests of at least
	// Behind bytes on the device, in issue order, with their modelled
	// completions (Timing.behind reads the last).
	large []largeOnDevice

	// Non-rotational with SaturatedBelow: the requests on the device
	// averaged (exponentially) over SaturationWindow and over
	// saturationCycles of them, as of avgAt.
	avgK, slowK float64
	avgAt       trace.Time
	avgOn       bool
	// Non-rotational with DepthWindow: the requests on the device
	// averaged over it (NonRotational.load).
	depth depthPeak

	// Rotational only.
	queue  []queued   // requests on the device, in service order
	anchor trace.Time // when queue[0] started (or starts)
	work   trace.Time // sum of the services in queue, ns
}

// heldDraw is a class's residual draw u, drawn by the request rq issued
// at at (OpTiming.Hold).
type heldDraw struct {
	rq *replay.Request
	id uint64 // rq.ID when it drew (an engine may reuse a finished request's struct)
	at trace.Time
	u  float64
}

// hold returns the draw of a request rq issued at now with the hold h,
// for its own draw u: the held one when it was drawn within h of now by
// a request still on the device (on), else u, which rq then holds.
func (d *heldDraw) hold(now, h trace.Time, rq *replay.Request, on bool, u float64) float64 {
	if d.rq != nil && on && now-d.at <= h {
		return d.u
	}
	*d = heldDraw{rq: rq, id: rq.ID, at: now, u: u}
	return u
}

type queued struct {
	rq  *replay.Request
	svc trace.Time // service time, ns
}

// NewDevice returns a device timed by m, its random draws seeded by seed.
// m must be valid (Calibrate and Load return valid models); NewDevice
// panics otherwise.
func (m *Model) NewDevice(seed uint64) *Timing {
	if err := m.Validate(); err != nil {
		panic("device: NewDevice: " + err.Error())
	}
	return &Timing{
		m:        m,
		useSeq:   m.Kind == KindNonRotational && (m.NonRotational.hasSeq() || m.NonRotational.hasSeqCurves()),
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		inflight: make(map[*replay.Request]struct{}),
	}
}

var _ replay.Device = (*Timing)(nil)

// InFlight returns the number of requests issued and not yet done.
func (t *Timing) InFlight() int { return len(t.inflight) }

// Head returns the sector after the last request issued.
func (t *Timing) Head() uint64 { return t.head }

// Issue starts rq on the device at now and returns its completion time,
// never before now. The request counts as on the device until Done.
// Issuing a request already on the device panics.
func (t *Timing) Issue(now trace.Time, rq *replay.Request) trace.Time {
	// One map operation: rq is entered, and was already on the device
	// when that leaves the count unchanged.
	others := len(t.inflight)
	t.inflight[rq] = struct{}{}
	if len(t.inflight) == others {
		panic("device: request issued twice")
	}
	t.average(now, others)
	behind := t.behind(rq)    // before rq is on the device
	ahead := float64(t.bytes) // the others' bytes (OpTiming.Ahead)
	t.bytes += uint64(rq.Bytes)
	u := t.rng.Float64()
	seq := t.useSeq && t.streams.issue(rq.Sector, rq.Bytes)
	var done trace.Time
	switch t.m.Kind {
	case KindRotational:
		svc := trace.Time(nsRound(t.m.Rotational.service(t.head, rq, u)))
		if len(t.queue) == 0 || t.anchor+t.work < now {
			// Idle device (or one whose chain ended before now).
			t.queue = t.queue[:0]
			t.anchor, t.work = now, 0
		}
		t.queue = append(t.queue, queued{rq, svc})
		t.work += svc
		done = t.anchor + t.work
	default:
		n := t.m.NonRotational
		if isFlush(rq.Cat, rq.Bytes) {
			done = now + trace.Time(nsRound(n.flushLatency(ahead, u)))
		} else {
			o := OpOf(rq.Cat, rq.Bytes)
			if h := n.op(o).Hold; h > 0 {
				d := &t.held[o]
				_, on := t.inflight[d.rq]
				on = on && d.rq != nil && d.rq != rq && d.rq.ID == d.id
				u = d.hold(now, trace.Time(h), rq, on, u)
			}
			k := n.load(len(t.inflight), t.depth.v)
			done = now + trace.Time(nsRound(n.latencyAvg(k, t.avgK, t.slowK, rq.Cat, rq.Bytes, ahead, seq, u)))
		}
		if n.Batching != nil && !isFlush(rq.Cat, rq.Bytes) {
			done = n.Batching.place(&t.bunch, OpOf(rq.Cat, rq.Bytes), now, done)
		}
		if behind > now {
			done = max(done, now+trace.Time(nsRound(n.BehindScale*float64(behind-now))))
		}
	}
	if t.m.Kind == KindNonRotational && t.m.NonRotational.Behind > 0 && rq.Bytes >= t.m.NonRotational.Behind {
		t.large = append(t.large, largeOnDevice{rq, done})
	}
	t.head = rq.End()
	return done
}

// behind returns the modelled completion of the request issued last of
// those on the device of at least NonRotational.Behind bytes when rq is
// smaller (Issue scales the wait until then by BehindScale)
// (non-rotational with Behind only), else 0: rq completes no earlier.
func (t *Timing) behind(rq *replay.Request) trace.Time {
	if t.m.Kind != KindNonRotational {
		return 0
	}
	b := t.m.NonRotational.Behind
	if b == 0 || rq.Bytes >= b {
		return 0
	}
	if len(t.large) == 0 {
		return 0
	}
	return t.large[len(t.large)-1].done
}

// largeOnDevice is a request of at least NonRotational.Behind bytes on a
// Timing, with its modelled completion.
type largeOnDevice struct {
	rq   *replay.Request
	done trace.Time
}

// Done tells the device that rq completed at now; a request it does not
// hold is ignored.
func (t *Timing) Done(now trace.Time, rq *replay.Request) {
	// One map operation: rq is removed, and was not on the device when
	// that leaves the count unchanged.
	was := len(t.inflight)
	delete(t.inflight, rq)
	if len(t.inflight) == was {
		return
	}
	t.average(now, was)
	t.bytes -= uint64(rq.Bytes)
	for i, l := range t.large {
		if l.rq == rq {
			t.large = append(t.large[:i], t.large[i+1:]...)
			break
		}
	}
	for i, q := range t.queue {
		if q.rq == rq {
			t.work -= q.svc
			t.queue = append(t.queue[:i], t.queue[i+1:]...)
			t.anchor = now
			break
		}
	}
}

// average brings the averaged depths (SaturatedBelow) to now, with on
// requests on the device since the last update: that count weighs 1 -
// exp(-dt/w), w SaturationWindow and saturationCycles of it. Both start
// at SaturatedBelow, the capture's operating point.
func (t *Timing) average(now trace.Time, on int) {
	n := t.m.NonRotational
	if t.m.Kind == KindNonRotational && n.DepthWindow > 0 {
		t.depth.advance(int64(now), on, n.DepthWindow)
	}
	if t.m.Kind != KindNonRotational || n.SaturatedBelow <= 1 {
		return
	}
	if !t.avgOn {
		t.avgK, t.slowK, t.avgAt, t.avgOn = float64(n.SaturatedBelow), float64(n.SaturatedBelow), now, true
		return
	}
	if dt := now - t.avgAt; dt > 0 {
		k := float64(on)
		w := float64(n.SaturationWindow)
		t.avgK += (k - t.avgK) * (1 - math.Exp(-float64(dt)/w))
		t.slowK += (k - t.slowK) * (1 - math.Exp(-float64(dt)/(saturationCycles*w)))
		t.avgAt = now
	}
}

// latencyAvg returns the latency of a request with k requests on the
// device (itself included), averaged avg and slow (saturationAvg),
// holding ahead bytes besides its own, for the draw u in [0, 1), ns;
// seq: it continues a stream (OpTiming.Seq).
func (n *NonRotational) latencyAvg(k int, avg, slow float64, cat trace.Category, bytes uint32, ahead float64, seq bool, u float64) float64 {
	o := OpOf(cat, bytes)
	ot := n.op(o)
	l := ot.mean(bytes) * n.factor(o, bytes, k, seq, avg, slow) * ot.seqScale(seq)
	r := ot.residual(k, seq, bytes)
	if len(n.Curves) > 0 && !(seq && ot.Seq > 0 && ot.SeqResidual.Len() > 0) {
		if cr := n.curveResidual(o, bytes, k, seq); cr.Len() > 0 {
			r = cr
		}
	}
	if r.Len() > 0 {
		l *= r.At(u)
	}
	return l + ot.wait(ahead)
}

// service returns the service time of rq with the head at head, for the
// draw u in [0, 1), ns (at least 0).
func (r *Rotational) service(head uint64, rq *replay.Request, u float64) float64 {
	return r.serviceOf(head, rq.Sector, rq.Bytes, rq.Cat.IsWrite(), u)
}

func (r *Rotational) serviceOf(head, sector uint64, bytes uint32, write bool, u float64) float64 {
	var s float64
	if r.sequential(head, sector) {
		s = float64(r.SeqBase) + r.PerByte*float64(bytes)
		if r.SeqResidual.Len() > 0 {
			s += r.SeqResidual.At(u)
		}
	} else {
		s = r.randomMean(distance(head, sector), bytes, write)
		if r.Residual.Len() > 0 {
			s += r.Residual.At(u)
		} else {
			s += u * float64(r.Revolution)
		}
	}
	return math.Max(s, 0)
}

// randomMean returns the cost of a random access without its positional
// delay, ns.
func (r *Rotational) randomMean(d uint64, bytes uint32, write bool) float64 {
	s := float64(r.Overhead) + r.Seek(d) + r.PerByte*float64(bytes)
	if write {
		s += float64(r.Write)
	}
	return s
}

func nsRound(v float64) int64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	if v > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(v + 0.5)
}
