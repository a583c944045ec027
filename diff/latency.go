package diff

import (
	"math"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// Dist summarises a latency distribution, in seconds.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// LatencyPair compares one latency (Q2C or D2C) on the two sides.
type LatencyPair struct {
	Real Dist `json:"real"`
	Pred Dist `json:"predicted"`
	// Demerit is DiskSim's demerit figure: the root mean square horizontal
	// distance between the two CDFs, in seconds (see demerit).
	Demerit float64 `json:"demerit_seconds"`
	// Relative is Demerit as a fraction of the real mean (0 when that is 0).
	Relative float64 `json:"demerit"`
}

// Latency compares request latencies: Q2C (first bio queued to completion)
// and D2C (issue to completion) over each side's completed requests, less
// those the other side saw start and not complete (a capture that ends
// with requests on the device has no latency for them, and the replay's,
// which completes them, would be set against nothing; fs-bfq-writeback
// ends with 128 writes of 1.25 MiB dispatched in its last 50 ms: counted,
// their predicted 36 ms made the D2C demerit 868 % of the real mean). A
// request is known on both sides by its process and start sector.
type Latency struct {
	D2CDemerit float64     `json:"d2c_demerit"` // D2C.Relative
	Q2CDemerit float64     `json:"q2c_demerit"` // Q2C.Relative
	D2C        LatencyPair `json:"d2c"`
	Q2C        LatencyPair `json:"q2c"`
	// Unfinished counts the completed requests left out because the
	// other side never completed them, real and predicted.
	UnfinishedReal int `json:"unfinished_real,omitempty"`
	UnfinishedPred int `json:"unfinished_predicted,omitempty"`
}

// demeritSteps is the number of quantiles the demerit figure samples:
// 1e-4, 2e-4, ..., 1.
const demeritSteps = 10000

// Quantile returns the q-quantile of sorted xs by linear interpolation
// between order statistics at position q*(n-1) (Hyndman and Fan's type 7),
// the rule of every percentile the diff reports; ok is false when xs is
// empty.
func Quantile(xs []float64, q float64) (v float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return quantile(xs, q), true
}

// quantile is Quantile with 0 for an empty xs.
func quantile(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	p := q * float64(n-1)
	lo := int(math.Floor(p))
	if lo >= n-1 {
		return xs[n-1]
	}
	f := p - float64(lo)
	return xs[lo] + f*(xs[lo+1]-xs[lo])
}

// demerit returns the RMS horizontal distance between the empirical CDFs of
// two sorted samples: sqrt(mean over q = 1e-4, 2e-4, ..., 1 of
// (quantile_a(q) - quantile_b(q))^2), in the samples' unit; 0 when either
// is empty.
func demerit(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	var s float64
	for i := 1; i <= demeritSteps; i++ {
		q := float64(i) / demeritSteps
		d := quantile(a, q) - quantile(b, q)
		s += d * d
	}
	return math.Sqrt(s / demeritSteps)
}

func summarise(xs []float64) Dist {
	d := Dist{N: len(xs)}
	if len(xs) == 0 {
		return d
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	d.Mean = s / float64(len(xs))
	d.P50, d.P90, d.P99, d.P999 = quantile(xs, 0.5), quantile(xs, 0.9), quantile(xs, 0.99), quantile(xs, 0.999)
	d.Max = xs[len(xs)-1]
	return d
}

func pair(a, b []float64) LatencyPair {
	slices.Sort(a)
	slices.Sort(b)
	return sortedPair(a, b)
}

// sortedPair compares two sorted samples.
func sortedPair(a, b []float64) LatencyPair {
	p := LatencyPair{Real: summarise(a), Pred: summarise(b), Demerit: demerit(a, b)}
	if p.Real.Mean > 0 {
		p.Relative = p.Demerit / p.Real.Mean
	}
	return p
}

func compareLatency(real, pred *Side) Latency {
	rp, pp := real.prepared(), pred.prepared()
	ru, pu := unfinished(real), unfinished(pred)
	if len(ru) == 0 && len(pu) == 0 {
		l := Latency{D2C: sortedPair(rp.d2c, pp.d2c), Q2C: sortedPair(rp.q2c, pp.q2c)}
		l.D2CDemerit, l.Q2CDemerit = l.D2C.Relative, l.Q2C.Relative
		return l
	}
	rq, rd, rn := latenciesExcept(real, pu)
	pq, pd, pn := latenciesExcept(pred, ru)
	l := Latency{D2C: pair(rd, pd), Q2C: pair(rq, pq), UnfinishedReal: rn, UnfinishedPred: pn}
	l.D2CDemerit, l.Q2CDemerit = l.D2C.Relative, l.Q2C.Relative
	return l
}

// rqKey names a request on either side: its process and start sector.
type rqKey struct {
	pid    uint32
	sector uint64
}

// unfinished returns the requests s saw queued and never completed (a
// request merged into another is not one), nil when there are none.
func unfinished(s *Side) map[rqKey]bool {
	var out map[rqKey]bool
	for i := range s.NumRequests() {
		if s.reqComplete(i).Valid() || !s.reqQueue(i).Valid() || s.reqFlags(i)&trace.FlagMergedAway != 0 {
			continue
		}
		if out == nil {
			out = map[rqKey]bool{}
		}
		out[rqKey{s.reqPID(i), s.reqs.sector.At(i)}] = true
	}
	return out
}

// latenciesExcept returns s's Q2C and D2C samples in seconds, unsorted, of
// its completed requests not in skip, and how many completed ones skip
// left out.
func latenciesExcept(s *Side, skip map[rqKey]bool) (q2c, d2c []float64, skipped int) {
	for i := range s.NumRequests() {
		c := s.reqComplete(i)
		if !c.Valid() {
			continue
		}
		if skip[rqKey{s.reqPID(i), s.reqs.sector.At(i)}] {
			skipped++
			continue
		}
		if qt := s.reqQueue(i); qt.Valid() && c >= qt {
			q2c = append(q2c, float64(c-qt)/1e9)
		}
		if it := s.reqIssue(i); it.Valid() && c >= it {
			d2c = append(d2c, float64(c-it)/1e9)
		}
	}
	return q2c, d2c, skipped
}

// unfinishedBios returns s's completed bios whose counterpart on other
// (the same process and index) was queued and never completed there, by
// index on s; nil when there are none. The span bandwidths leave them out
// on s, as the latencies leave out such requests: a capture that ends with
// a process's bios in flight has no bytes of them, and the replay's, which
// completes them after its own, would be set against nothing
// (fs-bfq-writeback: the flusher's last bios, whose 1.25 MiB parts the
// capture's last 50 ms dispatched).
func unfinishedBios(s, other *Side) map[int]bool {
	var out map[int]bool
	for i := range other.NumBios() {
		if other.bioDone(i).Valid() || !other.bioQueue(i).Valid() {
			continue
		}
		j := s.Bio(other.bioPID(i), other.bioIndex(i))
		if j < 0 || !s.bioDone(j).Valid() {
			continue
		}
		if out == nil {
			out = map[int]bool{}
		}
		out[j] = true
	}
	return out
}
