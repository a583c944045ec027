package device

import (
	"cmp"
	"slices"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// sample is one request usable for calibration: issued and completed in
// the capture.
type sample struct {
	req     int        // index in capture.rqs
	issue   trace.Time // D
	done    trace.Time // C
	d2c     float64    // done-issue, ns
	k       int        // requests on the device just after its issue, itself included
	op      Op
	sector  uint64
	bytes   uint32
	write   bool
	service float64 // C minus the later of D and the previous completion, ns
	head    uint64  // end of the request that completed before it
	hasPrev bool    // service and head are known
	// ahead is the bytes of the other requests on the device just after
	// its issue (itself excluded), counted as k counts them.
	ahead float64
	// behind: it is smaller than behindMin bytes and a request of at
	// least behindMin bytes was on the device at its issue
	// (NonRotational.Behind).
	behind bool
	// seq: it continues a stream (streams.issue over every request
	// issued before it, in replay order), as Timing tells it.
	seq bool
	// peak: the decaying peak of the requests on the device at its
	// issue, over the capture's peakWindow (setDepthPeak;
	// NonRotational.DepthWindow).
	peak float64
}

// event is an issue or completion in a capture, in replay order.
type event struct {
	t    trace.Time
	done bool // C (else D)
	// lapse marks the end of a request whose C the capture lacks, placed
	// at its D plus the capture's largest D2C (prepare, step 1): it takes
	// the request off the device but is no completion of the device's.
	lapse bool
	req   int // index in capture.rqs
}

// capture is a trace prepared for fitting and scoring: every request that
// occupied the device, the order in which to replay its issues and
// completions, and the usable samples.
type capture struct {
	rqs     []replay.Request
	events  []event
	samples []sample // in issue order
	skipped int      // requests that reached the device but lack a D or a C
	// peakWindow is the window the samples' peak were set for (0: not
	// set).
	peakWindow time.Duration
}

// prepare builds a capture from rebuilt requests.
//
//  1. Every request that reached the device (a D, or a C, not merged away)
//     occupies it from its D to its C, with two bounds from the D2C of the
//     capture's samples (RebuildInFlightTimeout when it has none):
//     - a request with a C and no D occupies it from the capture's first
//     time only when its C comes within the largest D2C of it (it was
//     issued before the capture started, FlagNoQueue); a later one was
//     never on the device: its D was not lost, there was none (the
//     zero-byte completion that ends a flush sequence, which the flush
//     machinery served through its own flush requests: 2168 of them in
//     recorded-fs/fs-bfq-pgbench, which counted from the start kept
//     some 2000 requests "on the device" for a calibration that saw
//     one or two), and it takes no part in the walks below;
//     - a request with a D and no C (the capture ended first,
//     FlagIncomplete, or a per-CPU file with its C is missing: 61,242
//     of them in public/hadoop-node8) leaves it at its D plus the
//     median D2C, a lapse event that is no completion (step 4 skips
//     it): it most likely took what most requests took, and the largest
//     D2C is no bound where the missing completions make the rebuilt
//     ones unreliable (hadoop-node8's reach 60 s, its median 1.8 ms;
//     with the largest, some 38,000 requests stayed "on the device").
//  2. Issues and completions are ordered by time, completions first at
//     equal times, then by request ID: the order scoring replays them in.
//  3. Walking that order gives, at each D, the number of requests on the
//     device (k), the bytes of the others (ahead) and whether it continues
//     a stream (seq, streams.issue); requests with both a D and a C at or
//     after it become samples.
//  4. Walking completions in order gives each sample's service time (as a
//     device serving one request at a time would see it) and the head
//     position before it.
func prepare(reqs []trace.Request) *capture {
	c := &capture{}
	first := trace.NoTime
	for i := range reqs {
		r := &reqs[i]
		for _, t := range [...]trace.Time{r.Issue, r.Complete} {
			if t.Valid() && (!first.Valid() || t < first) {
				first = t
			}
		}
	}
	longest, typical := d2cBounds(reqs)
	ids := make([]uint64, 0, len(reqs))
	c.rqs = make([]replay.Request, 0, len(reqs))
	c.events = make([]event, 0, 2*len(reqs))
	hasSample := make([]bool, 0, len(reqs)) // by index in c.rqs
	nSamples := 0
	for i := range reqs {
		r := &reqs[i]
		if r.Flags&trace.FlagMergedAway != 0 || (!r.Issue.Valid() && !r.Complete.Valid()) {
			continue
		}
		j := len(c.rqs)
		c.rqs = append(c.rqs, replay.Request{
			ID: uint64(j + 1), PID: r.PID, Cgroup: r.Cgroup, Sector: r.Sector, Bytes: r.Bytes,
			Cat: r.Cat.OpFlags(), Bios: int(max(r.Bios, 1)), Queued: r.Queue, Inserted: r.Insert, Issued: r.Issue,
		})
		ids = append(ids, r.ID)
		switch {
		case r.Issue.Valid() && r.Complete.Valid():
			c.events = append(c.events, event{t: r.Issue, req: j}, event{t: r.Complete, done: true, req: j})
		case r.Issue.Valid(): // no C: off the device after a typical D2C
			c.events = append(c.events, event{t: r.Issue, req: j}, event{t: r.Issue + typical, done: true, lapse: true, req: j})
		case r.Complete-first <= longest: // no D, in flight at the start
			c.events = append(c.events, event{t: first, req: j}, event{t: r.Complete, done: true, req: j})
		}
		// A request with no Q still has a D2C when its D and C are in the
		// capture (a D/C-only capture like public/keks-discard, or I/O queued
		// before the capture started); passthrough requests are not the
		// device's ordinary service. The flush machinery's own flushes
		// (REQ_OP_FLUSH, no Q: blk_kick_flush) are: they are what the
		// "other" class (flushLatency) is fitted on, and a replay issues
		// one wherever the kernel did.
		kernelMade := r.Cat&trace.CatPC != 0
		ok := r.Issue.Valid() && r.Complete.Valid() && r.Complete >= r.Issue && (r.Flags&trace.FlagNoQueue == 0 || !kernelMade)
		hasSample = append(hasSample, ok)
		if ok {
			nSamples++
		} else {
			c.skipped++
		}
	}
	sortEvents(c.events, ids, first)
	c.samples = make([]sample, 0, nSamples)
	onDev, onBytes, onLarge := 0, 0.0, 0
	var st streams
	for _, e := range c.events {
		r := &c.rqs[e.req]
		if e.done {
			onDev--
			onBytes -= float64(r.Bytes)
			if r.Bytes >= behindMin {
				onLarge--
			}
			continue
		}
		behind := r.Bytes < behindMin && onLarge > 0
		onDev++
		onBytes += float64(r.Bytes)
		if r.Bytes >= behindMin {
			onLarge++
		}
		seq := st.issue(r.Sector, r.Bytes)
		if !hasSample[e.req] {
			continue
		}
		c.samples = append(c.samples, sample{
			req: e.req, issue: e.t, k: onDev, op: OpOf(r.Cat, r.Bytes),
			sector: r.Sector, bytes: r.Bytes, write: r.Cat.IsWrite(),
			ahead: max(onBytes-float64(r.Bytes), 0), seq: seq, behind: behind,
		})
	}
	// Completion times, and the service walk (step 4).
	doneAt := make([]trace.Time, len(c.rqs))
	for i := range doneAt {
		doneAt[i] = trace.NoTime
	}
	for _, e := range c.events {
		if e.done && !e.lapse {
			doneAt[e.req] = e.t
		}
	}
	pos := make([]int, len(c.rqs)) // sample of each request, -1 when none
	for i := range pos {
		pos[i] = -1
	}
	for i := range c.samples {
		s := &c.samples[i]
		s.done = doneAt[s.req]
		s.d2c = float64(s.done - s.issue)
		pos[s.req] = i
	}
	prev := -1
	for _, e := range c.events {
		if !e.done || e.lapse {
			continue
		}
		if i := pos[e.req]; i >= 0 && prev >= 0 {
			s := &c.samples[i]
			start := max(s.issue, doneAt[prev])
			s.service = float64(s.done - start)
			s.head = c.rqs[prev].End()
			s.hasPrev = true
		}
		prev = e.req
	}
	return c
}

// d2cBounds returns the largest and the median D2C of the requests issued
// and completed in reqs (C at or after D), or trace.RebuildInFlightTimeout
// for both when none is: how long prepare lets a request whose D or C the
// capture lacks occupy the device (step 1).
func d2cBounds(reqs []trace.Request) (longest, typical trace.Time) {
	var d []float64
	for i := range reqs {
		r := &reqs[i]
		if r.Flags&trace.FlagMergedAway == 0 && r.Issue.Valid() && r.Complete.Valid() && r.Complete >= r.Issue {
			d = append(d, float64(r.Complete-r.Issue))
		}
	}
	if len(d) == 0 {
		return trace.RebuildInFlightTimeout, trace.RebuildInFlightTimeout
	}
	sortFloats(d)
	return trace.Time(d[len(d)-1]), trace.Time(d[(len(d)-1)/2])
}

// predict replays the capture's issues and completions through a device of
// m and returns the modelled D2C of every sample, ns, in sample order.
// Each request is issued at its real D with the real set of requests on
// the device; completions are told to the device at their real C.
func (c *capture) predict(m *Model, seed uint64) []float64 {
	dev := m.NewDevice(seed)
	pos := make([]int, len(c.rqs))
	for i := range pos {
		pos[i] = -1
	}
	for i, s := range c.samples {
		pos[s.req] = i
	}
	out := make([]float64, len(c.samples))
	for _, e := range c.events {
		rq := &c.rqs[e.req]
		if e.done {
			dev.Done(e.t, rq)
			continue
		}
		t := dev.Issue(e.t, rq)
		if i := pos[e.req]; i >= 0 {
			out[i] = float64(t - e.t)
		}
	}
	return out
}

// sortEvents puts events in replay order: by time, completions first at
// equal times, then by request ID (ids, by index in capture.rqs). Every
// time is at or after first. Where the events are in increasing ID order
// already (requests given by ID, each one's issue before its completion),
// a stable LSD radix sort by (time, kind) alone gives that order;
// otherwise a comparison sort does.
func sortEvents(evs []event, ids []uint64, first trace.Time) {
	byID := len(evs) >= radixMin
	for i := 1; byID && i < len(evs); i++ {
		if ids[evs[i].req] < ids[evs[i-1].req] {
			byID = false
		}
	}
	if !byID {
		slices.SortFunc(evs, func(a, b event) int {
			if x := cmp.Compare(a.t, b.t); x != 0 {
				return x
			}
			if a.done != b.done {
				if a.done {
					return -1
				}
				return 1
			}
			return cmp.Compare(ids[a.req], ids[b.req])
		})
		return
	}
	keys := make([]uint64, len(evs))
	perm := make([]int32, len(evs))
	for i, e := range evs {
		k := uint64(e.t-first) << 1
		if !e.done {
			k |= 1
		}
		keys[i], perm[i] = k, int32(i)
	}
	radixPairs(keys, perm)
	sorted := make([]event, len(evs))
	for i, j := range perm {
		sorted[i] = evs[j]
	}
	copy(evs, sorted)
}
