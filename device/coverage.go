package device

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Coverage is what a calibration saw: the operating points its model was
// fitted on. A replay driving the model elsewhere (more requests in
// flight, larger requests, an operation the capture never had)
// extrapolates, and says so (Coverage.Outside).
type Coverage struct {
	// Requests is how many issued and completed requests were seen.
	Requests int `json:"requests"`
	// Depths counts the requests issued with k requests on the device
	// (itself included) by InflightBucket(k): entry b is k = 1, 2, 3-4,
	// 5-8, ..., up to 129+ in the last.
	Depths []int `json:"depth_buckets"`
	// MaxDepth is the largest k seen.
	MaxDepth int `json:"max_depth"`
	// Ops holds, per operation class seen, the requests and the smallest
	// and largest size, bytes.
	Ops []OpCoverage `json:"ops"`
	// Sustained counts the windows of SustainedWindow, from the first
	// issue on, by the requests on the device averaged over the window
	// (idle time counted as 0; windows with none at all left out), in
	// quarter octaves: entry b for an average of about 2^(b/4) (b =
	// round(4*log2(average)); 0 for one or less, the last entry for
	// 2^((SustainedBins-1)/4) and more). The count at each issue cannot
	// tell the load a device was held at: on a loop device that completes
	// its requests in bunches, the requests issued just after a bunch find
	// few others on it whatever the load, so a capture held at 21 on the
	// device shows issues at every count from 1 to 32 (recorded/
	// b-mqdl-w100-900), while eight in ten of its windows averaged 16 to
	// 27. Empty in models saved before version 9: not checked.
	Sustained []int `json:"sustained_load_windows,omitempty"`
	// Sources names the captures or probe targets pooled.
	Sources []string `json:"sources,omitempty"`
}

// SustainedWindow is the length of the windows Coverage.Sustained averages
// the load over: long against a request's latency on the devices seen (tens
// of microseconds to a few milliseconds), so that the bunches of
// completions average out, and short against a workload's phases.
const SustainedWindow = 10 * time.Millisecond

// SustainedBins is the number of Coverage.Sustained entries: quarter
// octaves from 1 to 2^10 requests on the device.
const SustainedBins = 41

// sustainedBin returns the Coverage.Sustained entry of an average load of
// k requests on the device.
func sustainedBin(k float64) int {
	if !(k > 1) {
		return 0
	}
	return min(int(math.Round(4*math.Log2(k))), SustainedBins-1)
}

// sustainedLoad returns the average load of entry b (its centre).
func sustainedLoad(b int) float64 { return math.Exp2(float64(b) / 4) }

// sustainedSweep accumulates Coverage.Sustained from the spans of constant
// load of a sweep in time order.
type sustainedSweep struct {
	hist []int
	cur  int64 // the window being filled, by index from the first issue
	area int64 // requests times ns on the device within it so far
}

// span adds k requests on the device from from to to (ns since the first
// issue, from <= to; k below 0, as a completion at its request's issue
// counted first makes it for an instant, is 0).
func (s *sustainedSweep) span(from, to int64, k int) {
	const w = int64(SustainedWindow)
	k = max(k, 0)
	w0, w1 := from/w, to/w
	if w0 != s.cur {
		s.flush()
		s.cur = w0
	}
	if w0 == w1 {
		s.area += int64(k) * (to - from)
		return
	}
	s.area += int64(k) * ((w0+1)*w - from)
	s.flush()
	if n := w1 - w0 - 1; n > 0 && k > 0 { // whole windows at k
		s.hist[sustainedBin(float64(k))] += int(min(n, math.MaxInt32))
	}
	s.cur, s.area = w1, int64(k)*(to-w1*w)
}

// flush files the window being filled, if it held any load.
func (s *sustainedSweep) flush() {
	if s.area > 0 {
		s.hist[sustainedBin(float64(s.area)/float64(SustainedWindow))]++
	}
	s.area = 0
}

// OpCoverage is one operation class's share of a Coverage.
type OpCoverage struct {
	Op       string `json:"op"` // "read", "write", "other"
	Requests int    `json:"requests"`
	MinBytes uint32 `json:"min_bytes"`
	MaxBytes uint32 `json:"max_bytes"`
}

// depthBuckets is the number of Coverage.Depths entries (k up to 128 apart).
const depthBuckets = 9

// minCovered is how many requests a depth bucket needs to count as seen.
const minCovered = 20

// CoverageOf measures the operating points of requests on one device: the
// number on the device at each issue (as Calibrate counts it) and the
// operation classes and sizes.
//
// The number on the device at an issue at time t is the issues up to it
// (ties at t in any order: they take consecutive counts, so the histogram
// does not depend on their order) less the completions at or before t (a
// completion at t is counted first). The issue and completion times are
// sorted apart, as plain integers, and merged.
func CoverageOf(reqs []trace.Request) *Coverage { return CoverageOfSeq(Pointers(reqs)) }

// CoverageOfSeq is CoverageOf over requests given as a sequence.
func CoverageOfSeq(reqs iter.Seq[*trace.Request]) *Coverage {
	c := &Coverage{Depths: make([]int, depthBuckets)}
	var ops [numOps]OpCoverage
	var issues, dones []trace.Time
	for r := range reqs {
		if r.Flags&trace.FlagMergedAway != 0 || !r.Issue.Valid() || !r.Complete.Valid() || r.Complete < r.Issue {
			continue
		}
		issues = append(issues, r.Issue)
		dones = append(dones, r.Complete)
		o := OpOf(r.Cat, r.Bytes)
		oc := &ops[o]
		if oc.Requests == 0 || r.Bytes < oc.MinBytes {
			oc.MinBytes = r.Bytes
		}
		oc.MaxBytes = max(oc.MaxBytes, r.Bytes)
		oc.Requests++
	}
	sortTimes(issues)
	sortTimes(dones)
	sus := sustainedSweep{hist: make([]int, SustainedBins)}
	sweepLoad(issues, dones, func(from, to trace.Time, k int) {
		sus.span(int64(from-issues[0]), int64(to-issues[0]), k)
	}, func(k int) {
		c.Requests++
		c.Depths[min(InflightBucket(k), depthBuckets-1)]++
		c.MaxDepth = max(c.MaxDepth, k)
	})
	if len(issues) > 0 {
		sus.flush()
		c.Sustained = sus.hist
	}
	for o := range numOps {
		if ops[o].Requests > 0 {
			ops[o].Op = Op(o).String()
			c.Ops = append(c.Ops, ops[o])
		}
	}
	return c
}

// sweepLoad walks the issue and completion times of a device's requests
// (each slice sorted) in time order, a completion before an issue at the
// same time, as Calibrate counts the requests on the device. It calls span
// for each stretch between consecutive events, with the k requests on the
// device over it (a request completed at its own issue is taken off
// before it is put on: k is -1 for that instant), and issue, unless nil,
// at each issue with the count just after it, itself included.
func sweepLoad(issues, dones []trace.Time, span func(from, to trace.Time, k int), issue func(k int)) {
	if len(issues) == 0 {
		return
	}
	k, i, j := 0, 0, 0
	prev := issues[0] // every completion is at or after its request's issue
	for i < len(issues) || j < len(dones) {
		t, d := trace.Time(0), -1
		if j < len(dones) && (i == len(issues) || dones[j] <= issues[i]) {
			t = dones[j]
			j++
		} else {
			t, d = issues[i], 1
			i++
		}
		span(prev, t, k)
		prev = t
		k += d
		if d > 0 && issue != nil {
			issue(k)
		}
	}
}

// sortTimes sorts ts in place; a slice already in order (requests kept in
// issue order) costs one pass.
func sortTimes(ts []trace.Time) {
	if !slices.IsSorted(ts) {
		slices.Sort(ts)
	}
}

// Merge pools another coverage into c (calibrate A B C).
func (c *Coverage) Merge(o *Coverage) {
	switch {
	case c.Requests == 0:
		c.Sustained = slices.Clone(o.Sustained)
	case o.Requests == 0:
	case len(c.Sustained) > 0 && len(o.Sustained) > 0:
		for len(c.Sustained) < len(o.Sustained) {
			c.Sustained = append(c.Sustained, 0)
		}
		for i, n := range o.Sustained {
			c.Sustained[i] += n
		}
	default:
		c.Sustained = nil // one of them was not measured: the pool cannot be told
	}
	c.Requests += o.Requests
	for len(c.Depths) < len(o.Depths) {
		c.Depths = append(c.Depths, 0)
	}
	for i, n := range o.Depths {
		c.Depths[i] += n
	}
	c.MaxDepth = max(c.MaxDepth, o.MaxDepth)
	for _, x := range o.Ops {
		j := slices.IndexFunc(c.Ops, func(y OpCoverage) bool { return y.Op == x.Op })
		if j < 0 {
			c.Ops = append(c.Ops, x)
			continue
		}
		y := &c.Ops[j]
		y.Requests += x.Requests
		y.MinBytes, y.MaxBytes = min(y.MinBytes, x.MinBytes), max(y.MaxBytes, x.MaxBytes)
	}
	slices.SortFunc(c.Ops, func(a, b OpCoverage) int { return cmp.Compare(opIndex(a.Op), opIndex(b.Op)) })
	c.Sources = append(c.Sources, o.Sources...)
}

func opIndex(s string) int { return slices.Index(opNames[:], s) }

// bucketRange names the k of a depth bucket.
func bucketRange(b int) string {
	switch {
	case b == 0:
		return "1"
	case b == 1:
		return "2"
	case b == depthBuckets-1:
		return fmt.Sprintf("%d+", 1<<(b-1)+1)
	}
	return fmt.Sprintf("%d-%d", 1<<(b-1)+1, 1<<b)
}

// Outside compares the operating points a replay drove the model at (use)
// with those the calibration saw (c), and returns one sentence per kind of
// extrapolation, with the share of the replay's requests concerned: depth
// buckets the calibration had fewer than 20 requests in, sizes beyond
// its range for a class (more than twice its largest or under half its
// smallest), classes it never saw. None: nil.
func (c *Coverage) Outside(use *Coverage) []string {
	if c == nil || use == nil || use.Requests == 0 {
		return nil
	}
	var out []string
	var far []string
	n := 0
	for b, k := range use.Depths {
		seen := b < len(c.Depths) && c.Depths[b] >= minCovered
		if k > 0 && !seen {
			n += k
			far = append(far, bucketRange(b))
		}
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%.1f%% of the predicted requests were issued at depths the calibration did not see (k = %s requests on the device; it saw up to %d)",
			100*float64(n)/float64(use.Requests), strings.Join(far, ", "), c.maxCovered()))
	}
	if s := c.outsideSustained(use); s != "" {
		out = append(out, s)
	}
	for _, u := range use.Ops {
		j := slices.IndexFunc(c.Ops, func(y OpCoverage) bool { return y.Op == u.Op })
		if j < 0 {
			out = append(out, fmt.Sprintf("%.1f%% of the predicted requests are %ss, which the calibration never saw (timed as another class)",
				100*float64(u.Requests)/float64(use.Requests), u.Op))
			continue
		}
		y := c.Ops[j]
		if u.MaxBytes > 2*y.MaxBytes || 2*u.MinBytes < y.MinBytes {
			out = append(out, fmt.Sprintf("%s sizes %d-%d bytes predicted, the calibration saw %d-%d", u.Op, u.MinBytes, u.MaxBytes, y.MinBytes, y.MaxBytes))
		}
	}
	return out
}

// outsideSustained is Outside's sentence on the sustained load: when
// use's median window held a load more than a quarter octave outside the
// 10th to 90th percentile of c's windows (a load the calibration held in
// fewer than a tenth of them, as at its start and end), the share of
// use's windows outside that range, use's median and c's range; ""
// otherwise (or when either was not measured). A replay at the
// calibration's operating point has its median inside the range; the
// quarter octave keeps a capture held in a narrow band (2 to 2.4
// requests, recorded/d-bfq-4seqread-idle2000) from reporting a replay
// near it (2.8).
func (c *Coverage) outsideSustained(use *Coverage) string {
	lo, _, hi := sustainedPercentiles(c.Sustained)
	_, med, _ := sustainedPercentiles(use.Sustained)
	if lo < 0 || med < 0 || (med >= lo-1 && med <= hi+1) {
		return ""
	}
	var out, tot int
	for b, n := range use.Sustained {
		tot += n
		if b < lo || b > hi {
			out += n
		}
	}
	return fmt.Sprintf("the median predicted %v window held about %.3g requests on the device, where the calibration's held %.3g to %.3g (10th to 90th percentile; %.0f%% of the predicted windows are outside that): the latencies at that load are extrapolated (a model that saw it: tracesched probe, or calibrate pooling a capture taken at that load)",
		SustainedWindow, sustainedLoad(med), sustainedLoad(lo), sustainedLoad(hi), 100*float64(out)/float64(tot))
}

// SustainedSummary describes the load the calibration held the device at
// (Sustained): its median window and 10th to 90th percentile, in requests
// on the device; "" when it was not measured.
func (c *Coverage) SustainedSummary() string {
	lo, med, hi := sustainedPercentiles(c.Sustained)
	if med < 0 {
		return ""
	}
	return fmt.Sprintf("load held over %v windows: about %.3g requests on the device (median), %.3g to %.3g (10th to 90th percentile)",
		SustainedWindow, sustainedLoad(med), sustainedLoad(lo), sustainedLoad(hi))
}

// sustainedPercentiles returns the entries of hist (Coverage.Sustained)
// at its 10th, 50th and 90th percentile window, -1 each for no windows.
func sustainedPercentiles(hist []int) (p10, p50, p90 int) {
	return quantileBins(hist, 0.1), quantileBins(hist, 0.5), quantileBins(hist, 0.9)
}

// quantileBins returns the entry of hist (window counts by entry) at
// which the share q of the windows is reached, -1 for no windows.
func quantileBins(hist []int, q float64) int {
	tot := 0
	for _, n := range hist {
		tot += n
	}
	if tot == 0 {
		return -1
	}
	acc := 0
	for b, n := range hist {
		acc += n
		if float64(acc) >= q*float64(tot) {
			return b
		}
	}
	return len(hist) - 1
}

// maxCovered is the largest k of a depth bucket with enough requests.
func (c *Coverage) maxCovered() int {
	best := 0
	for b, n := range c.Depths {
		if n >= minCovered {
			if b == 0 {
				best = 1
			} else {
				best = 1 << b
			}
		}
	}
	return min(best, max(c.MaxDepth, 1))
}
