package device

import (
	"iter"

	"github.com/tracesched/tracesched/trace"
)

// poolGap separates pooled captures in time, ns: longer than any request,
// so no request of one capture is counted in flight with another's.
const poolGap = trace.Time(10e9)

// Pool lays the requests of several captures of one device end to end on a
// single time line, for one Calibrate over all of them: each capture is
// shifted so that its first event comes poolGap after the previous one's
// last, and request IDs are renumbered to stay unique. The inputs are not
// modified. In-flight counts stay those of each capture; the model's
// parameters are fitted on the union, so a depth or size one capture lacks
// is learned from another.
func Pool(captures ...[]trace.Request) []trace.Request {
	n := 0
	seqs := make([]iter.Seq[*trace.Request], len(captures))
	for i, c := range captures {
		n += len(c)
		seqs[i] = Pointers(c)
	}
	out := make([]trace.Request, 0, n)
	for r := range PoolSeq(seqs...) {
		out = append(out, *r)
	}
	return out
}

// PoolSeq is Pool over sequences, for CalibrateSeq: it yields the requests
// of each capture in turn, shifted and renumbered as Pool lays them, into
// one reused trace.Request (valid during its yield only). Each capture's
// sequence is read twice per pass (its time span, then its requests), so
// it must yield the same requests each time it is read; the pooled
// sequence can then be read again too.
func PoolSeq(captures ...iter.Seq[*trace.Request]) iter.Seq[*trace.Request] {
	return func(yield func(*trace.Request) bool) {
		var offset trace.Time
		var id uint64
		var r trace.Request
		for _, c := range captures {
			first, last := span(c)
			if !first.Valid() {
				continue
			}
			shift := offset - first
			for q := range c {
				r = *q
				for _, t := range [...]*trace.Time{&r.Queue, &r.Get, &r.Insert, &r.Issue, &r.Complete} {
					if t.Valid() {
						*t += shift
					}
				}
				id++
				r.ID = id
				if !yield(&r) {
					return
				}
			}
			offset = last + shift + poolGap
		}
	}
}

// span returns the earliest and the latest of the Q, I, D and C times of
// reqs (trace.NoTime for both when there is none).
func span(reqs iter.Seq[*trace.Request]) (first, last trace.Time) {
	first, last = trace.NoTime, trace.NoTime
	for r := range reqs {
		for _, t := range [...]trace.Time{r.Queue, r.Insert, r.Issue, r.Complete} {
			if !t.Valid() {
				continue
			}
			if !first.Valid() || t < first {
				first = t
			}
			if !last.Valid() || t > last {
				last = t
			}
		}
	}
	return first, last
}
