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
}

func (b *Batching) validate() error {
	if b.JoinLead < 0 || b.JoinWindow < 0 || b.Drain < 0 || b.BunchGap < 0 {
		return fmt.Errorf("batching: negative duration (join_lead_ns %d, drain_ns %d, bunch_gap_ns %d)", b.JoinLead, b.Drain, b.BunchGap)
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
	open   bool       // a bunch was opened
}

// place returns the completion time of a request issued at now whose own
// completion time would be own, and updates the bunch state.
func (b *Batching) place(s *bunchState, now, own trace.Time) trace.Time {
	if s.open && s.at-now >= trace.Time(b.JoinLead) && (b.JoinWindow == 0 || now-s.opened <= trace.Time(b.JoinWindow)) {
		s.joined++
		return s.at + trace.Time(s.joined)*trace.Time(b.Drain)
	}
	*s = bunchState{at: own, opened: now, open: true}
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
	var openers []int
	var leads, windows []float64
	var drainSum float64
	for j := 0; j < len(byDone); {
		k := j + 1
		for k < len(byDone) && ss[byDone[k]].done-ss[byDone[k-1]].done < gap {
			drainSum += float64(ss[byDone[k]].done - ss[byDone[k-1]].done)
			k++
		}
		at := ss[byDone[j]].done
		first := byDone[j]
		for _, i := range byDone[j:k] {
			if ss[i].issue < ss[first].issue {
				first = i
			}
		}
		for range k - j {
			openers = append(openers, first) // weighted by the bunch's size
		}
		for _, i := range byDone[j:k] {
			if i != first {
				leads = append(leads, float64(at-ss[i].issue))
				windows = append(windows, float64(ss[i].issue-ss[first].issue))
			}
		}
		b.Bunches++
		j = k
	}
	if len(leads) == 0 {
		return nil, all
	}
	slices.Sort(leads)
	b.JoinLead = time.Duration(math.Round(max(quantileSorted(leads, joinLeadQuantile), 0)))
	slices.Sort(windows)
	b.JoinWindow = time.Duration(math.Round(quantileSorted(windows, joinWindowQuantile)))
	b.Drain = time.Duration(math.Round(drainSum / float64(len(leads))))
	b.JoinedFraction = float64(len(leads)) / float64(len(ss))
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
	slices.Sort(s)
	gaps := make([]float64, 0, max(len(s)-1, 0))
	for i := 1; i < len(s); i++ {
		gaps = append(gaps, s[i]-s[i-1])
	}
	slices.Sort(gaps)
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
