package replay

import (
	"cmp"
	"slices"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Release sums the captured bios of one process that another process's
// completion released (step 6 of the closed-loop rule on Workload: fio's
// write after jbd2's commit, jbd2's journal blocks after fio's data). In
// the replay each waits for that bio's predicted completion plus the delay
// the capture showed, Delay*: what the host took to wake the released
// process and run it up to its submission, which no scheduler model times
// (on the rig's loop device the fsync chain's jbd2 woke 0.044 ms p50
// after fio's write under mq-deadline, and 0.48 and 0.070 ms in two runs
// of the same job under BFQ, bench/whatif/README.md).
type Release struct {
	By, PID      uint32 // the releasing process and the released one
	ByComm, Comm string // their names, "" when unknown
	Bios         int    // the released process's captured bios that waited on the other's
	// DelayP50 and DelayMean are the captured delays from the releasing
	// bio's completion to the released bio's Q (the median is the lower
	// middle one), ns.
	DelayP50, DelayMean time.Duration
}

// releaseTally collects the Releases of the captured bios an Engine
// delivers (not those of later cycles, which repeat them).
type releaseTally struct {
	pairs map[[2]uint32]*releaseDelays
}

type releaseDelays struct {
	byComm, comm string
	delays       []trace.Time
}

// add counts r when another process's bio released it.
func (t *releaseTally) add(r *Record) {
	a := r.releaser()
	if a == nil {
		return
	}
	if t.pairs == nil {
		t.pairs = map[[2]uint32]*releaseDelays{}
	}
	k := [2]uint32{a.PID, r.PID}
	d := t.pairs[k]
	if d == nil {
		d = &releaseDelays{byComm: a.Comm, comm: r.Comm}
		t.pairs[k] = d
	}
	d.delays = append(d.delays, r.releaseDelay())
}

// list returns the Releases, the most bios first (then by the released
// and the releasing process).
func (t *releaseTally) list() []Release {
	var out []Release
	for k, d := range t.pairs {
		slices.Sort(d.delays)
		var sum float64
		for _, x := range d.delays {
			sum += float64(x)
		}
		n := len(d.delays)
		out = append(out, Release{By: k[0], PID: k[1], ByComm: d.byComm, Comm: d.comm, Bios: n,
			DelayP50: time.Duration(d.delays[(n-1)/2]), DelayMean: time.Duration(sum / float64(n))})
	}
	slices.SortFunc(out, func(a, b Release) int {
		return cmp.Or(cmp.Compare(b.Bios, a.Bios), cmp.Compare(a.PID, b.PID), cmp.Compare(a.By, b.By))
	})
	return out
}
