package diff

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// Decision kinds, as Mismatch.Kind names them.
const (
	DecisionSelect = "select" // a queue put in service: BFQ "set_in_service_queue", CFQ "set_active"
	DecisionExpire = "expire" // a queue expired, with its reason: BFQ "expire (R, ...", CFQ "slice expired t=T"
	DecisionIdle   = "idle"   // the idling decision: BFQ "may_budget_timeout: wait_request W", CFQ "arm_idle"
)

// decision is one scheduling decision read from a message.
type decision struct {
	t     trace.Time
	kind  string
	queue string // queue name as the scheduler prints it
	what  string // the decision: the queue selected, the expiry reason, the idling flag
}

// Mismatch is a point where the model decided differently from the kernel.
type Mismatch struct {
	Kind      string     `json:"kind"`           // DecisionSelect, DecisionExpire or DecisionIdle
	Queue     string     `json:"queue"`          // for expire and idle: the queue whose sequence differs; "" for select
	Ordinal   int        `json:"ordinal"`        // position in the aligned sequence, from 0
	RealTime  trace.Time `json:"real_time"`      // ns; NoTime when the real sequence is shorter
	PredTime  trace.Time `json:"predicted_time"` // ns; NoTime when the predicted sequence is shorter
	Real      string     `json:"real"`           // the kernel's decision ("" when none)
	Predicted string     `json:"predicted"`      // the model's decision ("" when none)
}

// KindCount counts one kind of decision.
type KindCount struct {
	Real       int `json:"real"`       // decisions in the real trace
	Predicted  int `json:"predicted"`  // decisions in the prediction
	Compared   int `json:"compared"`   // aligned pairs
	Mismatched int `json:"mismatched"` // aligned pairs that differ, plus unpaired decisions
}

// Decisions compares the scheduling decisions the two sides' scheduler
// messages record. Sequences are aligned by order: the select sequence as a
// whole (the n-th queue put in service on each side), expiries and idling
// decisions per queue (the n-th expiry of queue Q on each side). Once a
// sequence departs, later pairs of it keep differing; the first mismatches
// are the telling ones.
type Decisions struct {
	Compared bool      `json:"compared"` // both sides carry scheduler messages
	Select   KindCount `json:"select"`
	Expire   KindCount `json:"expire"`
	Idle     KindCount `json:"idle"`
	// IdleUncompared says the idle decisions are not compared: one side
	// (the model at its default log level) records only the arming of the
	// idle timer, the other every may_budget_timeout check (the kernel's
	// full log: "wait_request 0" at every dispatch). Held against each
	// other they differ almost everywhere whatever the model does; Idle
	// keeps both counts, Compared and Mismatched are 0. Replaying with
	// --set log=all makes the model log every check, as the kernel does.
	IdleUncompared bool       `json:"idle_uncompared"`
	Mismatches     []Mismatch `json:"mismatches"` // the first Options.MaxMismatches, by time (real, then predicted)
}

// isSelect reports whether parseDecision reads m as a DecisionSelect,
// without making the decision (its queue's name).
func isSelect(m *Message) bool {
	b := m.Msg.Body
	return m.Msg.PID != 0 && (strings.HasPrefix(b, "set_in_service_queue") || m.Msg.Sched == "cfq" && strings.HasPrefix(b, "set_active"))
}

func parseDecision(m *Message) (decision, bool) { return parseDecisionNamed(m, nil) }

// decisionNames keeps the strings decisions repeat (queue names, expiry
// reasons), each made once: a side has a few dozen queues and reasons and
// millions of decisions.
type decisionNames struct {
	queues  map[msgQueue]string
	reasons map[string]string
}

type msgQueue struct {
	sched string
	pid   int32
	sync  bool
}

func (n *decisionNames) queue(m *trace.Message) string {
	if n == nil {
		return m.QueueName()
	}
	id := msgQueue{m.Sched, m.PID, m.Sync}
	q, ok := n.queues[id]
	if !ok {
		q = m.QueueName()
		n.queues[id] = q
	}
	return q
}

// reason returns "reason "+r.
func (n *decisionNames) reason(r string) string {
	if n == nil {
		return "reason " + r
	}
	w, ok := n.reasons[r]
	if !ok {
		w = "reason " + r
		n.reasons[strings.Clone(r)] = w
	}
	return w
}

// parseDecisionNamed is parseDecision with its strings from names (nil:
// made for each).
func parseDecisionNamed(m *Message, names *decisionNames) (decision, bool) {
	// The queue's name (formatted) only once the body is a decision: most
	// messages are not (Message.QueueName is "" exactly when PID is 0).
	if m.Msg.PID == 0 {
		return decision{t: m.Time}, false
	}
	b := m.Msg.Body
	var d decision
	switch {
	case isSelect(m):
		d.kind = DecisionSelect
	case strings.HasPrefix(b, "expire ("):
		r := b[len("expire ("):]
		if i := strings.IndexByte(r, ','); i >= 0 {
			r = r[:i]
		}
		d.kind, d.what = DecisionExpire, names.reason(strings.TrimSuffix(r, ")"))
	case m.Msg.Sched == "cfq" && strings.HasPrefix(b, "slice expired"):
		r := strings.TrimPrefix(b, "slice expired")
		d.kind, d.what = DecisionExpire, strings.TrimSpace(r)
	case strings.HasPrefix(b, "may_budget_timeout: wait_request "):
		r := b[len("may_budget_timeout: wait_request "):]
		if i := strings.IndexByte(r, ' '); i >= 0 {
			r = r[:i]
		}
		if v, err := strconv.Atoi(r); err == nil && v != 0 {
			d.what = "idle"
		} else {
			d.what = "no idle"
		}
		d.kind = DecisionIdle
	case m.Msg.Sched == "cfq" && strings.HasPrefix(b, "arm_idle"):
		d.kind, d.what = DecisionIdle, "idle"
	default:
		return decision{t: m.Time}, false
	}
	d.t, d.queue = m.Time, names.queue(&m.Msg)
	if d.kind == DecisionSelect {
		d.what = d.queue
	}
	return d, true
}

// decisionKey is a kind of decision on one queue.
type decisionKey struct{ kind, queue string }

func (a decisionKey) cmp(b decisionKey) int {
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	return cmp.Compare(a.queue, b.queue)
}

// decisionsOf returns s's decisions: the selects in order, and the others
// by kind and queue.
func decisionsOf(s *Side) (sel []decision, perQueue map[decisionKey][]decision) {
	// Two passes: the first counts each list, the second fills them in
	// one array. A decision holds pointers, and a side with the kernel's
	// full log has one at every dispatch: grown by append, the lists were
	// most of the comparison's time on such a capture.
	names := &decisionNames{queues: map[msgQueue]string{}, reasons: map[string]string{}}
	counts := map[decisionKey]int{}
	nsel, n := 0, 0
	for i := range s.Messages.Len() {
		d, ok := parseDecisionNamed(s.Messages.At(i), names)
		switch {
		case !ok:
		case d.kind == DecisionSelect:
			nsel++
		default:
			counts[decisionKey{d.kind, d.queue}]++
			n++
		}
	}
	perQueue = make(map[decisionKey][]decision, len(counts))
	all := make([]decision, 0, n)
	for k, c := range counts {
		perQueue[k] = all[len(all) : len(all) : len(all)+c]
		all = all[:len(all)+c]
	}
	sel = make([]decision, 0, nsel)
	for i := range s.Messages.Len() {
		d, ok := parseDecisionNamed(s.Messages.At(i), names)
		switch {
		case !ok:
		case d.kind == DecisionSelect:
			sel = append(sel, d)
		default:
			k := decisionKey{d.kind, d.queue}
			perQueue[k] = append(perQueue[k], d) // within its capacity
		}
	}
	return sel, perQueue
}

// align compares two decision sequences position by position.
func align(kind, queue string, a, b []decision, kc *KindCount, out *[]Mismatch) {
	kc.Real += len(a)
	kc.Predicted += len(b)
	n := min(len(a), len(b))
	kc.Compared += n
	for i := 0; i < max(len(a), len(b)); i++ {
		mm := Mismatch{Kind: kind, Queue: queue, Ordinal: i, RealTime: trace.NoTime, PredTime: trace.NoTime}
		if i < len(a) {
			mm.RealTime, mm.Real = a[i].t, a[i].what
		}
		if i < len(b) {
			mm.PredTime, mm.Predicted = b[i].t, b[i].what
		}
		if mm.Real != mm.Predicted {
			kc.Mismatched++
			*out = append(*out, mm)
		}
	}
}

// hasSchedMessages reports whether s carries a scheduler's messages.
func hasSchedMessages(s *Side) bool {
	for i := range s.Messages.Len() {
		if s.Messages.At(i).Msg.Sched != "" {
			return true
		}
	}
	return false
}

// countSelects counts s's select decisions (parseDecision's
// DecisionSelect) without making them.
func countSelects(s *Side) int {
	n := 0
	for i := range s.Messages.Len() {
		if isSelect(s.Messages.At(i)) {
			n++
		}
	}
	return n
}

func compareDecisions(real, pred *Side, opts Options) Decisions {
	d := Decisions{Compared: hasSchedMessages(real) && hasSchedMessages(pred), Mismatches: []Mismatch{}}
	if !d.Compared {
		// Nothing to align: the counts of selects only, without making
		// every decision (a queue name, a map entry each) of the side
		// that has messages.
		d.Select.Real, d.Select.Predicted = countSelects(real), countSelects(pred)
		return d
	}
	rs, rq := decisionsOf(real)
	ps, pq := decisionsOf(pred)
	var all []Mismatch
	align(DecisionSelect, "", rs, ps, &d.Select, &all)
	keys := make([]decisionKey, 0, len(rq)+len(pq))
	for k := range rq {
		keys = append(keys, k)
	}
	for k := range pq {
		if _, ok := rq[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, decisionKey.cmp)
	// Like with like: idle decisions are compared only when both sides log
	// them alike (see Decisions.IdleUncompared).
	// A side records idle arms only when it has at least minArmsOnly idle
	// decisions and none of them is "no idle" (a few messages say nothing
	// about a log level).
	const minArmsOnly = 16
	armsOnly := func(pq map[decisionKey][]decision) bool {
		n := 0
		for k, l := range pq {
			if k.kind != DecisionIdle {
				continue
			}
			for _, x := range l {
				if x.what != "idle" {
					return false
				}
				n++
			}
		}
		return n >= minArmsOnly
	}
	// What each side logs is known from its metadata where it can be: a
	// capture carries the kernel's full log (every bfq_better_to_idle
	// check, "idle" or "no idle"); a bfq replay logs its idle arms only
	// unless it ran with --set log=all. The count is the fallback for
	// other sides.
	logsArmsOnly := func(s *Side, perQueue map[decisionKey][]decision) bool {
		switch {
		case s.Meta.Source != "replay":
			return false
		case s.Meta.Extra["scheduler"] == "bfq":
			return s.Meta.Extra["set.log"] != "all"
		}
		return armsOnly(perQueue)
	}
	d.IdleUncompared = logsArmsOnly(pred, pq) != logsArmsOnly(real, rq)
	for _, k := range keys {
		kind, queue := k.kind, k.queue
		kc := &d.Expire
		if kind == DecisionIdle {
			kc = &d.Idle
			if d.IdleUncompared {
				kc.Real += len(rq[k])
				kc.Predicted += len(pq[k])
				continue
			}
		}
		align(kind, queue, rq[k], pq[k], kc, &all)
	}
	at := func(m Mismatch) trace.Time {
		if m.RealTime.Valid() {
			return m.RealTime
		}
		return m.PredTime
	}
	slices.SortStableFunc(all, func(a, b Mismatch) int {
		if c := cmp.Compare(at(a), at(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.PredTime, b.PredTime); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return cmp.Compare(a.Queue, b.Queue)
	})
	if len(all) > opts.MaxMismatches {
		all = all[:opts.MaxMismatches]
	}
	d.Mismatches = append(d.Mismatches, all...)
	return d
}

// Decision is one scheduling decision a scheduler message records, as
// Compare reads it to align the two sides' decisions.
type Decision struct {
	Time  trace.Time // ns
	Kind  string     // DecisionSelect, DecisionExpire or DecisionIdle
	Queue string     // the queue, as the scheduler prints it
	What  string     // the decision: the queue selected, "reason N", "idle" or "no idle"
}

// DecisionOf returns the scheduling decision m records, by the rules of
// Decisions; false when it records none.
func DecisionOf(m *Message) (Decision, bool) {
	d, ok := parseDecision(m)
	return Decision{Time: d.t, Kind: d.kind, Queue: d.queue, What: d.what}, ok
}
