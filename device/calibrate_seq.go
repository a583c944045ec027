package device

import (
	"iter"

	"github.com/tracesched/tracesched/trace"
)

// CalibrateSeq is Calibrate over requests given as a sequence (a diff
// side's compact table read one request at a time, say) instead of one
// slice, with the same result: reqs must yield the same requests in the
// same order each time it is ranged over, and each *trace.Request is read
// only during its yield.
//
// On a capture of more samples than both windows of opts (CVSamples and
// FitSamples, each at least MinRequests), only what the whole capture
// contributes (the number of samples, the mean D2C, the seek correlation
// and where the windows lie) is computed from all of it, in a compact pass
// of about 70 bytes per request; then the requests of each window are read
// again and prepared as Calibrate prepares them. Memory is then that pass
// and the windows, not the 130 + 400 bytes per request of a slice and its
// preparation. Any other capture (or requests not in increasing ID order)
// is read into a slice and given to Calibrate.
func CalibrateSeq(reqs iter.Seq[*trace.Request], opts CalibrateOptions) (*Model, *Fit, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	bounded := opts.CVSamples >= opts.MinRequests && opts.FitSamples >= opts.MinRequests
	if !bounded {
		return Calibrate(collect(reqs), opts)
	}
	sum, bounds, ok := summarize(reqs, []int{opts.CVSamples, opts.FitSamples})
	if !ok || sum.n <= max(opts.CVSamples, opts.FitSamples) {
		return Calibrate(collect(reqs), opts)
	}
	win := func(n int) *capture {
		b := bounds[n]
		return prepare(windowSeq(reqs, b[0], b[1], n+n/8))
	}
	var all *capture
	full := func() *capture { // not reached: both steps have their window
		if all == nil {
			all = prepare(collect(reqs))
		}
		return all
	}
	return calibrate(sum, win, full, opts)
}

// collect copies a sequence of requests into one slice.
func collect(reqs iter.Seq[*trace.Request]) []trace.Request {
	var out []trace.Request
	for r := range reqs {
		out = append(out, *r)
	}
	return out
}

// windowSeq returns the requests of reqs, in order, issued within [from,
// to] (or completed within it, for those without a D): what window
// returns for a window of samples from from to to. size is the room to
// start with (the window's samples, and a little for the requests in it
// that are not samples).
func windowSeq(reqs iter.Seq[*trace.Request], from, to trace.Time, size int) []trace.Request {
	out := make([]trace.Request, 0, size)
	for r := range reqs {
		t := r.Issue
		if !t.Valid() {
			t = r.Complete
		}
		if t.Valid() && t >= from && t <= to {
			out = append(out, *r)
		}
	}
	return out
}

// summarize computes, in one pass over reqs and a few compact arrays,
// what prepare and Calibrate derive from the whole capture: the summary,
// and for each window size n in sizes (when the capture has more samples)
// the issue times of the first and last sample of the middle window of n
// samples. ok is false when the requests that reach the device are not in
// increasing ID order (prepare breaks ties by ID; here by position).
//
// It follows prepare exactly: the samples in issue order (ties by ID), the
// completions in time order (ties by ID) for each sample's service time and
// the head position before it, the mean D2C summed in sample order, and
// seekCorrelation's even spread of pairs.
func summarize(reqs iter.Seq[*trace.Request], sizes []int) (sum summary, bounds map[int][2]trace.Time, ok bool) {
	// Per request on the device (prepare's c.rqs), in order.
	var issue, done []trace.Time
	var sector, end []uint64
	var sample []bool
	first := trace.NoTime
	var longest trace.Time // d2cBounds's largest D2C
	seenD2C := false
	var lastID uint64
	ok = true
	for r := range reqs {
		for _, t := range [...]trace.Time{r.Issue, r.Complete} {
			if t.Valid() && (!first.Valid() || t < first) {
				first = t
			}
		}
		if r.Flags&trace.FlagMergedAway != 0 || (!r.Issue.Valid() && !r.Complete.Valid()) {
			continue
		}
		if r.Issue.Valid() && r.Complete.Valid() && r.Complete >= r.Issue {
			longest, seenD2C = max(longest, r.Complete-r.Issue), true
		}
		if len(issue) > 0 && r.ID <= lastID {
			ok = false
		}
		lastID = r.ID
		kernelMade := r.Cat&trace.CatPC != 0
		s := r.Issue.Valid() && r.Complete.Valid() && r.Complete >= r.Issue && (r.Flags&trace.FlagNoQueue == 0 || !kernelMade)
		issue = append(issue, r.Issue)
		done = append(done, r.Complete)
		sector = append(sector, r.Sector)
		end = append(end, r.Sector+uint64(r.Bytes>>9))
		sample = append(sample, s)
		if s {
			sum.n++
		} else {
			sum.skipped++
		}
	}
	if !ok {
		return sum, nil, false
	}

	// The completion walk (prepare's step 4): each sample's service time
	// and seek distance from the request completed before it. A C with no
	// D later than the largest D2C after the capture's start was never on
	// the device (prepare's step 1) and takes no part in it.
	if !seenD2C {
		longest = trace.RebuildInFlightTimeout
	}
	order := make([]int32, 0, len(issue))
	keys := make([]uint64, 0, len(issue))
	for j, t := range done {
		if t.Valid() && (issue[j].Valid() || t-first <= longest) {
			keys = append(keys, uint64(t-first))
			order = append(order, int32(j))
		}
	}
	radixPairs(keys, order) // stable: ties by position, so by ID
	service := make([]float64, len(issue))
	dist := make([]float64, len(issue))
	hasPrev := make([]bool, len(issue))
	prev := -1
	for _, j := range order {
		if sample[j] && prev >= 0 {
			service[j] = float64(done[j] - max(issue[j], done[prev]))
			dist[j] = float64(distance(end[prev], sector[j]))
			hasPrev[j] = true
		}
		prev = int(j)
	}
	sector, end = nil, nil

	// The samples in issue order.
	order, keys = order[:0], keys[:0]
	for j, s := range sample {
		if s {
			keys = append(keys, uint64(issue[j]-first))
			order = append(order, int32(j))
		}
	}
	radixPairs(keys, order)
	keys = nil
	var total float64
	nPrev := 0
	for _, j := range order {
		total += float64(done[j] - issue[j])
		if hasPrev[j] {
			nPrev++
		}
	}
	if sum.n > 0 {
		sum.meanD2C = total / float64(sum.n)
	} else {
		sum.meanD2C = mean(nil)
	}
	stride := max((nPrev+maxSeekPairs-1)/maxSeekPairs, 1)
	d := make([]float64, 0, nPrev/stride+1)
	s := make([]float64, 0, cap(d))
	k := 0
	for _, j := range order {
		if !hasPrev[j] {
			continue
		}
		if k%stride == 0 {
			d = append(d, dist[j])
			s = append(s, service[j])
		}
		k++
	}
	sum.seek = seekCorrelationOf(d, s)
	bounds = map[int][2]trace.Time{}
	for _, n := range sizes {
		if n > 0 && n <= len(order) {
			lo := (len(order) - n) / 2
			bounds[n] = [2]trace.Time{issue[order[lo]], issue[order[lo+n-1]]}
		}
	}
	return sum, bounds, true
}

// Pointers yields a pointer to each element of reqs in order: a slice as
// CalibrateSeq and CoverageOfSeq take it.
func Pointers(reqs []trace.Request) iter.Seq[*trace.Request] {
	return func(yield func(*trace.Request) bool) {
		for i := range reqs {
			if !yield(&reqs[i]) {
				return
			}
		}
	}
}
