package device

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Batching is the completion batching of a non-rotational device: requests
// complete in bunches, as a loop device's worker (or a driver reaping its
// completion queue) delivers every finished request at once and then
// sleeps.
//
// A bunch is opened by a request that finds no bunch it can join: its
// completion time, drawn from the per-request model (which for a batching
// device is fitted on the requests that opened the capture's bunches),
// becomes the bunch's delivery instant. A request issued at least JoinLead
// before the delivery instant of the bunch opened last joins that bunch
// instead of drawing its own time: the n-th joiner completes n*Drain after
// the instant (completions within a bunch are delivered one after another,
// in issue order). A request issued later than that opens the next bunch.
// A request joins only a bunch a request of its own operation class (read,
// write, other) opened: a 4 KiB read issued just after a 1.25 MiB write
// does not wait for the write (fs-bfq-writeback: reads dispatched 0-50 us
// after a lone write at 2.2695 s completed in 0.7 ms, the write in 4.2 ms;
// joining its bunch, the model held them 36 ms, and ten writes issued just
// after a read completed with it in 53 us against the capture's 4.3 ms).
// With PerOp, each class also keeps a bunch state of its own: a request
// joins only the bunch its class opened last, across other classes'.
type Batching struct {
	// JoinLead is how long before a bunch's delivery instant a request must
	// be issued to join it, ns.
	JoinLead time.Duration `json:"join_lead_ns"`
	// JoinWindow is how long after its opener's issue a bunch takes
	// joiners, ns: a request issued later opens a bunch of its own. 0: no
	// limit.
	JoinWindow time.Duration `json:"join_window_ns"`
	// Drain is the time between two completions of a bunch, ns.
	Drain time.Duration `json:"drain_ns"`
	// BunchGap is the largest gap between consecutive completions of one
	// bunch in the capture it was fitted on, ns (it defines the bunches
	// the other parameters were measured on; the device does not use it).
	BunchGap time.Duration `json:"bunch_gap_ns"`
	// Bunches is how many bunches the capture showed, JoinedFraction the
	// fraction of its requests that joined a bunch opened by another.
	Bunches        int     `json:"bunches"`
	JoinedFraction float64 `json:"joined_fraction"`
	// PerOp: the device delivers each operation class's completions in a
	// pass of its own (in the capture, a bunch holding several classes
	// completed them class after class, not in issue order), so each class
	// opens and joins its own bunches.
	PerOp bool `json:"per_op,omitempty"`
	// OpDrain is, with PerOp, the drain of each class's bunches (indexed
	// by Op: read, write, other), ns: the mean gap between consecutive
	// completions of that class in a bunch. A missing or zero entry: Drain.
	OpDrain []time.Duration `json:"op_drain_ns,omitempty"`
	// OpJoinLead and OpJoinWindow are, with PerOp, JoinLead and JoinWindow
	// of each class's bunches (indexed by Op), fitted on the class's
	// joiners; a missing or zero lead: JoinLead and JoinWindow.
	OpJoinLead   []time.Duration `json:"op_join_lead_ns,omitempty"`
	OpJoinWindow []time.Duration `json:"op_join_window_ns,omitempty"`
}

func (b *Batching) validate() error {
	if b.JoinLead < 0 || b.JoinWindow < 0 || b.Drain < 0 || b.BunchGap < 0 {
		return fmt.Errorf("batching: negative duration (join_lead_ns %d, drain_ns %d, bunch_gap_ns %d)", b.JoinLead, b.Drain, b.BunchGap)
	}
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"op_drain_ns", b.OpDrain}, {"op_join_lead_ns", b.OpJoinLead}, {"op_join_window_ns", b.OpJoinWindow}} {
		if len(f.ds) > int(numOps) {
			return fmt.Errorf("batching: %d %s entries, at most %d", len(f.ds), f.name, numOps)
		}
		for _, d := range f.ds {
			if d < 0 {
				return fmt.Errorf("batching: negative %s %d", f.name, d)
			}
		}
	}
	if b.JoinedFraction < 0 || b.JoinedFraction > 1 || math.IsNaN(b.JoinedFraction) {
		return fmt.Errorf("batching: joined_fraction %v outside [0, 1]", b.JoinedFraction)
	}
	return nil
}

// bunchState is a Timing's current bunch.
type bunchState struct {
	at     trace.Time // delivery instant of the bunch opened last
	opened trace.Time // issue time of its opener
	joined int        // requests that joined it
	op     Op         // operation class of its opener
	open   bool       // a bunch was opened
}

// state returns the bunch state of a request of class o in states, one
// per class.
func (b *Batching) state(states *[numOps]bunchState, o Op) *bunchState {
	if b.PerOp {
		return &states[o]
	}
	return &states[0]
}

// drain returns the drain of a bunch of class o, ns.
func (b *Batching) drain(o Op) time.Duration {
	if b.PerOp && int(o) < len(b.OpDrain) && b.OpDrain[o] > 0 {
		return b.OpDrain[o]
	}
	return b.Drain
}

// place returns the completion time of a request of class o issued at now
// whose own completion time would be own, and updates its bunch state
// (states holds one per class; see state).
func (b *Batching) place(states *[numOps]bunchState, o Op, now, own trace.Time) trace.Time {
	s := b.state(states, o)
	lead, win := b.JoinLead, b.JoinWindow
	if b.PerOp && int(o) < len(b.OpJoinLead) && b.OpJoinLead[o] > 0 {
		lead, win = b.OpJoinLead[o], 0
		if int(o) < len(b.OpJoinWindow) {
			win = b.OpJoinWindow[o]
		}
	}
	if s.open && s.op == o && s.at-now >= trace.Time(lead) && (win == 0 || now-s.opened <= trace.Time(win)) {
		s.joined++
		return s.at + trace.Time(s.joined)*trace.Time(b.drain(o))
	}
	*s = bunchState{at: own, opened: now, op: o, open: true}
	return own
}

// DefaultBunchGap is the gap between consecutive completions, ns, under
// which fitBatching counts them in one bunch.
const DefaultBunchGap = 5 * time.Microsecond

// minBatchExcess is how much larger than a Poisson stream of completions
// at the same rate the fraction of completion gaps under DefaultBunchGap
// must be for fitBatching to model batching.
const minBatchExcess = 0.2

// joinLeadQuantile is the quantile of the joiners' lead (bunch instant
// minus issue) that becomes Batching.JoinLead: the lead nearly every
// request that joined a bunch had.
const joinLeadQuantile = 0.02

// maxOpReversals is the largest fraction of the changes of operation class
// between consecutive completions of a bunch that may go back to a class
// the bunch already completed (a write followed by a read) for fitBatching
// to find the classes delivered in passes of their own (Batching.PerOp).
// Completions in issue order change class both ways about equally.
const maxOpReversals = 0.1

// joinWindowQuantile is the quantile of the joiners' delays (issue after
// their opener's) that becomes Batching.JoinWindow.
const joinWindowQuantile = 0.99

// fitBatching looks for completion bunches in samples (issue order) and
// returns their batching and the indices of the requests that opened them,
// each repeated as many times as its bunch has members (so that the
// openers' latencies are those the capture's requests saw: a bunch of 32
// weighs 32 times one of 1), or nil and every index when completions do
// not bunch.
//
//  1. Sort the completions by time; consecutive ones less than
//     DefaultBunchGap apart form a bunch. Batching is modelled only when
//     the fraction f of gaps under DefaultBunchGap exceeds the fraction a
//     Poisson stream at the capture's completion rate would show,
//     1 - exp(-gap/mean gap), by minBatchExcess.
//  2. A bunch's instant is its first completion, its opener the member
//     issued first; the others joined it. JoinLead is the
//     joinLeadQuantile-quantile of the joiners' leads (instant minus
//     issue), Drain the mean gap between consecutive completions of a
//     bunch.
//  3. PerOp when some bunch completes requests of more than one operation
//     class and at most maxOpReversals of the class changes between
//     consecutive completions of a bunch go back to a class it already
//     completed. The bunches are then each class's members of a bunch,
//     and OpDrain, OpJoinLead and OpJoinWindow hold each class's drain
//     (mean gap between consecutive completions of that class in a bunch),
//     lead and window (from at least 100 joiners of the class).
func fitBatching(ss []sample) (*Batching, []int) {
	all := make([]int, len(ss))
	for i := range all {
		all[i] = i
	}
	if len(ss) < 3 {
		return nil, all
	}
	byDone := slices.Clone(all)
	slices.SortStableFunc(byDone, func(a, b int) int {
		if ss[a].done != ss[b].done {
			if ss[a].done < ss[b].done {
				return -1
			}
			return 1
		}
		return a - b
	})
	gap := trace.Time(DefaultBunchGap)
	under := 0
	for j := 1; j < len(byDone); j++ {
		if ss[byDone[j]].done-ss[byDone[j-1]].done < gap {
			under++
		}
	}
	n := float64(len(byDone) - 1)
	span := float64(ss[byDone[len(byDone)-1]].done - ss[byDone[0]].done)
	if span <= 0 {
		return nil, all
	}
	poisson := 1 - math.Exp(-float64(gap)*n/span)
	if float64(under)/n-poisson < minBatchExcess {
		return nil, all
	}
	b := &Batching{BunchGap: DefaultBunchGap}
	var bounds []int // bunch j is byDone[bounds[j]:bounds[j+1]]
	var drainSum, drains float64
	changes, reversals := 0, 0
	var opGap, opGaps [numOps]float64
	for j := 0; j < len(byDone); {
		bounds = append(bounds, j)
		k := j + 1
		var seen [numOps]bool
		seen[ss[byDone[j]].op] = true
		for k < len(byDone) && ss[byDone[k]].done-ss[byDone[k-1]].done < gap {
			g := float64(ss[byDone[k]].done - ss[byDone[k-1]].done)
			drainSum += g
			drains++
			if o := ss[byDone[k]].op; o == ss[byDone[k-1]].op {
				opGap[o] += g
				opGaps[o]++
			} else {
				changes++
				if seen[o] {
					reversals++
				}
				seen[o] = true
			}
			k++
		}
		j = k
	}
	bounds = append(bounds, len(byDone))
	b.PerOp = changes > 0 && float64(reversals) <= maxOpReversals*float64(changes)
	var openers []int
	var leads, windows []float64
	var opLeads, opWindows [numOps][]float64
	var group []int
	for j := 0; j+1 < len(bounds); j++ {
		bunch := byDone[bounds[j]:bounds[j+1]]
		for o := range numOps {
			// With PerOp each class's members form a bunch of their own.
			group = group[:0]
			for _, i := range bunch {
				if !b.PerOp || ss[i].op == o {
					group = append(group, i)
				}
			}
			if len(group) == 0 {
				continue
			}
			at := ss[group[0]].done
			first := group[0]
			for _, i := range group {
				if ss[i].issue < ss[first].issue {
					first = i
				}
			}
			for range group {
				openers = append(openers, first) // weighted by the bunch's size
			}
			for _, i := range group {
				if i != first {
					leads = append(leads, float64(at-ss[i].issue))
					windows = append(windows, float64(ss[i].issue-ss[first].issue))
					opLeads[ss[i].op] = append(opLeads[ss[i].op], float64(at-ss[i].issue))
					opWindows[ss[i].op] = append(opWindows[ss[i].op], float64(ss[i].issue-ss[first].issue))
				}
			}
			b.Bunches++
			if !b.PerOp {
				break
			}
		}
	}
	if len(leads) == 0 {
		return nil, all
	}
	sortFloats(leads)
	b.JoinLead = time.Duration(math.Round(max(quantileSorted(leads, joinLeadQuantile), 0)))
	sortFloats(windows)
	b.JoinWindow = time.Duration(math.Round(quantileSorted(windows, joinWindowQuantile)))
	b.Drain = time.Duration(math.Round(drainSum / max(drains, 1)))
	b.JoinedFraction = float64(len(leads)) / float64(len(ss))
	if b.PerOp {
		b.OpDrain = make([]time.Duration, numOps)
		b.OpJoinLead = make([]time.Duration, numOps)
		b.OpJoinWindow = make([]time.Duration, numOps)
		for o := range numOps {
			if len(opLeads[o]) >= 100 {
				sortFloats(opLeads[o])
				sortFloats(opWindows[o])
				b.OpJoinLead[o] = time.Duration(math.Round(max(quantileSorted(opLeads[o], joinLeadQuantile), 0)))
				b.OpJoinWindow[o] = time.Duration(math.Round(quantileSorted(opWindows[o], joinWindowQuantile)))
			}
			if opGaps[o] > 0 {
				b.OpDrain[o] = time.Duration(math.Round(opGap[o] / opGaps[o]))
			}
		}
	}
	slices.Sort(openers)
	return b, openers
}

// GapThresholds are the gaps between consecutive completions, ns, at
// which Fit.CompletionGaps compares the capture with the model.
var gapThresholds = [...]time.Duration{
	1 * time.Microsecond, 2 * time.Microsecond, 5 * time.Microsecond, 10 * time.Microsecond,
	20 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond,
}

// GapProfile is the distribution of the gaps between consecutive
// completions: Under[i] is the fraction of gaps shorter than UnderNs[i].
type GapProfile struct {
	UnderNs []time.Duration `json:"under_ns"` // thresholds, ns
	Real    []float64       `json:"real"`     // fraction of the capture's gaps under each
	Model   []float64       `json:"model"`    // fraction of the model's gaps under each
}

// gapFractions returns, for each of gapThresholds, the fraction of gaps
// between consecutive values of done (any order; ns) shorter than it.
func gapFractions(done []float64) []float64 {
	s := slices.Clone(done)
	sortFloats(s)
	gaps := make([]float64, 0, max(len(s)-1, 0))
	for i := 1; i < len(s); i++ {
		gaps = append(gaps, s[i]-s[i-1])
	}
	sortFloats(gaps)
	out := make([]float64, len(gapThresholds))
	if len(gaps) == 0 {
		return out
	}
	for i, th := range gapThresholds {
		k, _ := slices.BinarySearch(gaps, float64(th))
		out[i] = float64(k) / float64(len(gaps))
	}
	return out
}
