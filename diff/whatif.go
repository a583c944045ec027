package diff

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// Modes of a Result.
const (
	ModeValidate = "validate" // the replay reproduces the capture's own setup
	ModeWhatIf   = "what-if"  // the replay changes the scheduler, kernel, weights or tunables
)

// Change is the lead of a what-if report: what the changed setup does to the
// captured workload, captured -> predicted, per cgroup, per process and in
// total, all over each side's contention window (see window.go), and the
// scheduler decisions behind it, counted from each side's messages.
type Change struct {
	From    string   `json:"from"`    // the recorded scheduler ("" unknown)
	To      string   `json:"to"`      // the predicted scheduler
	Changed []string `json:"changed"` // what the replay changed, in words ("scheduler mq-deadline -> bfq", "weight 421=100")
	// Assumed is what the prediction assumed that the capture does not
	// show, in words (Options.Assumed: the host model's costs); empty
	// when nothing.
	Assumed []string `json:"assumed"`

	Cgroups   []Delta `json:"cgroups"`   // compared cgroups first, then the rest, each by id
	Processes []Delta `json:"processes"` // compared processes, by pid
	Total     Delta   `json:"total"`

	// InFlight is the time-weighted mean number of requests dispatched to
	// the device and not yet completed, over each side's active span: the
	// operating point the device model is driven at.
	InFlight Pair `json:"in_flight"`
	// Decisions counts the scheduler decisions each side's messages record
	// (a scheduler that logs nothing, mq-deadline or none, counts 0), and
	// request merges, which every side has.
	Decisions []DecisionCount `json:"decisions"`
	// Causes are sentences naming the decisions that differ most, largest
	// first.
	Causes []string `json:"causes"`
}

// Delta is one cgroup's, process's or the device's figures captured and
// predicted.
type Delta struct {
	ID        uint64        `json:"id"`   // cgroup id or pid; 0 for the total
	Name      string        `json:"name"` // path or comm when known
	Captured  WindowFigures `json:"captured"`
	Predicted WindowFigures `json:"predicted"`
	// Ratio is Predicted.MiBps / Captured.MiBps (0 when nothing was captured).
	Ratio float64 `json:"ratio"`
}

// Pair is one figure captured and predicted.
type Pair struct {
	Captured  float64 `json:"captured"`
	Predicted float64 `json:"predicted"`
}

// DecisionCount counts one kind of decision on each side.
type DecisionCount struct {
	Name      string `json:"name"`
	Captured  int    `json:"captured"`
	Predicted int    `json:"predicted"`
}

// Decision names, as DecisionCount.Name gives them.
const (
	CountSwitches      = "queue switches"               // BFQ set_in_service_queue, CFQ set_active
	CountIdleWaits     = "idle waits"                   // BFQ may_budget_timeout with wait_request 1, CFQ arm_idle
	CountTooIdle       = "expired: idle window ran out" // BFQ expire reason 0 (BFQQE_TOO_IDLE)
	CountBudgetTimeout = "expired: budget timeout"      // reason 1
	CountExhausted     = "expired: budget exhausted"    // reason 2
	CountNoMore        = "expired: no more requests"    // reason 3
	CountPreempted     = "expired: preempted"           // reason 4
	CountBudgets       = "budget recalculations"        // BFQ recalc_budg
	CountQueueMerges   = "queue merges"                 // BFQ/CFQ merging with queue
	CountBackMerges    = "request back merges"          // bios merged at the back
	CountFrontMerges   = "request front merges"         // bios merged at the front
	CountCFQSlices     = "expired: slice (cfq)"         // CFQ slice expired
)

var expireReasons = []string{CountTooIdle, CountBudgetTimeout, CountExhausted, CountNoMore, CountPreempted}

// expireReason reads the reason number of an expire message as
// fmt.Sscanf(r, "%d", &k) does, without its cost for the usual one or two
// plain digits.
func expireReason(r string) (int, bool) {
	if n := len(r); n >= 1 && n <= 2 {
		k := 0
		for i := range n {
			c := r[i]
			if c < '0' || c > '9' {
				k = -1
				break
			}
			k = 10*k + int(c-'0')
		}
		if k >= 0 {
			return k, true
		}
	}
	var k int
	_, err := fmt.Sscanf(r, "%d", &k)
	return k, err == nil
}

// countDecisions counts the decision kinds of a side.
func countDecisions(s *Side) map[string]int {
	n := map[string]int{}
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		b := m.Msg.Body
		switch {
		case strings.HasPrefix(b, "set_in_service_queue"), m.Msg.Sched == "cfq" && strings.HasPrefix(b, "set_active"):
			n[CountSwitches]++
		case strings.HasPrefix(b, "may_budget_timeout: wait_request "):
			if !strings.HasPrefix(b[len("may_budget_timeout: wait_request "):], "0") {
				n[CountIdleWaits]++
			}
		case m.Msg.Sched == "cfq" && strings.HasPrefix(b, "arm_idle"):
			n[CountIdleWaits]++
		case strings.HasPrefix(b, "expire ("):
			r := b[len("expire ("):]
			if j := strings.IndexAny(r, ",)"); j >= 0 {
				r = r[:j]
			}
			if k, ok := expireReason(r); ok && k >= 0 && k < len(expireReasons) {
				n[expireReasons[k]]++
			}
		case m.Msg.Sched == "cfq" && strings.HasPrefix(b, "slice expired"):
			n[CountCFQSlices]++
		case strings.HasPrefix(b, "recalc_budg: last budg"):
			n[CountBudgets]++
		case strings.HasPrefix(b, "merging with queue"):
			n[CountQueueMerges]++
		}
	}
	for i := range s.NumBios() {
		switch s.bioMerge(i) {
		case trace.MergeBack:
			n[CountBackMerges]++
		case trace.MergeFront:
			n[CountFrontMerges]++
		}
	}
	return n
}

// inFlight returns the time-weighted mean number of requests between D and
// C over the side's requests' span (first D to last C).
func inFlight(s *Side) float64 {
	// The dispatches and the completions, each nearly in order already in
	// request order, as (t-t0)<<1 | (0 complete, 1 dispatch), sorted apart
	// and merged: completions first at equal times.
	n := s.NumRequests()
	t0, m := trace.Time(0), 0
	for i := range n {
		iss, c := s.reqIssue(i), s.reqComplete(i)
		if !iss.Valid() || !c.Valid() || c < iss {
			continue
		}
		if m == 0 || iss < t0 {
			t0 = iss
		}
		m++
	}
	if m == 0 {
		return 0
	}
	buf := make([]uint64, 3*m)
	d, c, scratch := buf[:0:m], buf[m:m:2*m], buf[2*m:]
	for i := range n {
		iss, cp := s.reqIssue(i), s.reqComplete(i)
		if !iss.Valid() || !cp.Valid() || cp < iss {
			continue
		}
		d = append(d, uint64(iss-t0)<<1|1)
		c = append(c, uint64(cp-t0)<<1)
	}
	radixU64(d, 0, scratch)
	radixU64(c, 0, scratch)
	var area float64
	depth := 0
	first := min(d[0], c[0]) >> 1
	prev := first
	step := func(e uint64) {
		t := e >> 1
		area += float64(depth) * float64(t-prev)
		prev = t
		if e&1 == 1 {
			depth++
		} else {
			depth--
		}
	}
	for len(d) > 0 || len(c) > 0 {
		if len(c) == 0 || len(d) > 0 && d[0] < c[0] {
			step(d[0])
			d = d[1:]
		} else {
			step(c[0])
			c = c[1:]
		}
	}
	span := float64(prev - first)
	if span <= 0 {
		return 0
	}
	return area / span
}

func delta(id uint64, name string, c, p WindowFigures) Delta {
	d := Delta{ID: id, Name: name, Captured: c, Predicted: p}
	if c.MiBps > 0 {
		d.Ratio = p.MiBps / c.MiBps
	}
	return d
}

// whatIf builds the Change from a finished Result.
func (r *Result) whatIf(opts Options) *Change {
	c := &Change{From: opts.RecordedScheduler, To: r.Scheduler, Changed: append([]string{}, opts.Changes...),
		Assumed: append([]string{}, opts.Assumed...),
		Cgroups: []Delta{}, Processes: []Delta{}, Causes: []string{}}
	for _, g := range r.Cgroups {
		c.Cgroups = append(c.Cgroups, delta(g.ID, g.Path,
			WindowFigures{MiBps: g.RealMiBps, IOPS: g.RealIOPS, Share: g.RealShare, P50: g.RealP50, P99: g.RealP99},
			WindowFigures{MiBps: g.PredMiBps, IOPS: g.PredIOPS, Share: g.PredShare, P50: g.PredP50, P99: g.PredP99}))
	}
	slices.SortStableFunc(c.Cgroups, func(a, b Delta) int {
		return -cmp.Compare(b2i(slices.Contains(r.Bandwidth.ComparedCgroups, a.ID)), b2i(slices.Contains(r.Bandwidth.ComparedCgroups, b.ID)))
	})
	for _, p := range r.Processes {
		if !p.Compared {
			continue
		}
		c.Processes = append(c.Processes, delta(uint64(p.PID), p.Comm,
			WindowFigures{MiBps: p.RealMiBps, IOPS: p.RealIOPS, Share: p.RealShare, P50: p.RealP50, P99: p.RealP99},
			WindowFigures{MiBps: p.PredMiBps, IOPS: p.PredIOPS, Share: p.PredShare, P50: p.PredP50, P99: p.PredP99}))
	}
	c.Total = delta(0, "total", r.Bandwidth.Real, r.Bandwidth.Pred)
	c.InFlight = Pair{Captured: inFlight(r.RealSide), Predicted: inFlight(r.PredSide)}
	rc, pc := countDecisions(r.RealSide), countDecisions(r.PredSide)
	names := []string{CountSwitches, CountIdleWaits, CountTooIdle, CountBudgetTimeout, CountExhausted, CountNoMore, CountPreempted,
		CountCFQSlices, CountBudgets, CountQueueMerges, CountBackMerges, CountFrontMerges}
	for _, k := range names {
		if rc[k] == 0 && pc[k] == 0 {
			continue
		}
		c.Decisions = append(c.Decisions, DecisionCount{Name: k, Captured: rc[k], Predicted: pc[k]})
	}
	if c.Decisions == nil {
		c.Decisions = []DecisionCount{}
	}
	c.Causes = causes(c, r)
	return c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// causes names the decisions that changed most, as sentences.
func causes(c *Change, r *Result) []string {
	type cause struct {
		weight float64
		text   string
	}
	var cs []cause
	spread := func(d DecisionCount) float64 {
		return math.Abs(float64(d.Predicted-d.Captured)) / math.Max(1, float64(max(d.Predicted, d.Captured)))
	}
	secs := func(side int) float64 {
		if side == 0 {
			return math.Max(r.WallSeconds, 1e-9)
		}
		return math.Max(r.SimulatedSeconds, 1e-9)
	}
	for _, d := range c.Decisions {
		if d.Captured == d.Predicted {
			continue
		}
		w := spread(d) * float64(max(d.Predicted, d.Captured))
		var t string
		switch d.Name {
		case CountIdleWaits:
			t = fmt.Sprintf("idling: the device was kept waiting for the in-service queue's next request %d times (%.0f/s; captured %d)", d.Predicted, float64(d.Predicted)/secs(1), d.Captured)
		case CountSwitches:
			t = fmt.Sprintf("service slots: %d queue switches (%.0f/s; captured %d): each queue is served in budgets, not request by request", d.Predicted, float64(d.Predicted)/secs(1), d.Captured)
		case CountExhausted, CountBudgetTimeout, CountTooIdle, CountNoMore, CountPreempted, CountCFQSlices:
			t = fmt.Sprintf("budgets: %s %d times (captured %d)", d.Name, d.Predicted, d.Captured)
		case CountBudgets:
			t = fmt.Sprintf("budgets: %d recalculations (captured %d)", d.Predicted, d.Captured)
		case CountQueueMerges:
			t = fmt.Sprintf("queue merges: %d (captured %d): cooperating processes served as one queue", d.Predicted, d.Captured)
		case CountBackMerges, CountFrontMerges:
			t = fmt.Sprintf("merges: %d %s (captured %d)", d.Predicted, d.Name, d.Captured)
		default:
			continue
		}
		cs = append(cs, cause{w, t})
	}
	if f := c.InFlight; f.Captured > 0 && math.Abs(f.Predicted-f.Captured)/f.Captured > 0.2 {
		cs = append(cs, cause{1e12, fmt.Sprintf("dispatch depth: %.1f requests in flight on average, captured %.1f: the device is driven at another operating point", f.Predicted, f.Captured)})
	}
	slices.SortStableFunc(cs, func(a, b cause) int { return cmp.Compare(b.weight, a.weight) })
	out := []string{}
	for _, x := range cs[:min(len(cs), 5)] {
		out = append(out, x.text)
	}
	return out
}
