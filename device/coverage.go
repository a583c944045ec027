package device

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

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
	// Sources names the captures or probe targets pooled.
	Sources []string `json:"sources,omitempty"`
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
	j := 0
	for n, t := range issues {
		for j < len(dones) && dones[j] <= t {
			j++
		}
		k := n + 1 - j
		c.Requests++
		c.Depths[min(InflightBucket(k), depthBuckets-1)]++
		c.MaxDepth = max(c.MaxDepth, k)
	}
	for o := range numOps {
		if ops[o].Requests > 0 {
			ops[o].Op = Op(o).String()
			c.Ops = append(c.Ops, ops[o])
		}
	}
	return c
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
