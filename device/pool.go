package device

import "github.com/tracesched/tracesched/trace"

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
	for _, c := range captures {
		n += len(c)
	}
	out := make([]trace.Request, 0, n)
	var offset trace.Time
	var id uint64
	for _, c := range captures {
		first, last := trace.NoTime, trace.NoTime
		for i := range c {
			for _, t := range [...]trace.Time{c[i].Queue, c[i].Insert, c[i].Issue, c[i].Complete} {
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
		if !first.Valid() {
			continue
		}
		shift := offset - first
		for i := range c {
			r := c[i]
			for _, t := range []*trace.Time{&r.Queue, &r.Get, &r.Insert, &r.Issue, &r.Complete} {
				if t.Valid() {
					*t += shift
				}
			}
			id++
			r.ID = id
			out = append(out, r)
		}
		offset = last + shift + poolGap
	}
	return out
}
