package diff

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// A replay runs on simulated time: an insertion and the scheduler's
// reaction to it (BFQ expiring the in-service queue as the new request
// finds its budget spent, setting a queue in service because the request
// made it busy) carry one timestamp, and only the order of the events in
// the trace tells which came first. The think-time measure needs that
// order at the bounds of BFQ's in-service spans (bfq_update_io_thinktime
// samples no insertion into a busy queue), so a Side notes, while it
// loads, which insertions of the same instant came before each message.

// pidCount counts one process's insertions (I events, by the task that
// was current) at one instant.
type pidCount struct {
	pid uint32
	n   uint32
}

// insertTie is a message logged at the instant of insertions that came
// before it in the trace: the message's index in Side.Messages and those
// insertions by process (shared, read-only).
type insertTie struct {
	msg    int32
	counts []pidCount
}

// tieState follows the insertions of the latest insertion instant while a
// Side loads. counts is shared with the insertTies that took it (shared):
// the next insertion copies it first.
type tieState struct {
	t      trace.Time
	valid  bool
	shared bool
	counts []pidCount
}

// insert notes an insertion by pid at t (the trace's order: t never
// decreases within one instant's run; a new t starts a new run).
func (ts *tieState) insert(t trace.Time, pid uint32) {
	switch {
	case !ts.valid || t != ts.t:
		ts.t, ts.valid = t, true
		if ts.shared {
			ts.counts, ts.shared = nil, false
		} else {
			ts.counts = ts.counts[:0]
		}
	case ts.shared:
		ts.counts, ts.shared = slices.Clone(ts.counts), false
	}
	for i := range ts.counts {
		if ts.counts[i].pid == pid {
			ts.counts[i].n++
			return
		}
	}
	ts.counts = append(ts.counts, pidCount{pid, 1})
}

// at returns the insertions of instant t seen so far, nil when none; the
// slice is shared from then on.
func (ts *tieState) at(t trace.Time) []pidCount {
	if !ts.valid || t != ts.t || len(ts.counts) == 0 {
		return nil
	}
	ts.shared = true
	return ts.counts
}

// noteMessage notes, for Add, which insertions of message e's instant came
// before it; index is the message's position in Messages. Only the
// messages that bound BFQ's in-service spans (inService) are noted.
func (s *Side) noteMessage(index int, e *trace.Event) {
	if !strings.Contains(e.Text, "set_in_service_queue") && !strings.Contains(e.Text, "expire (") {
		return
	}
	if c := s.tie.at(e.Time); c != nil {
		s.insertTies = append(s.insertTies, insertTie{msg: int32(index), counts: c})
	}
}

// insertsBefore returns how many insertions by pid at message i's own Time
// came before message i in the trace (0 when none, or when s was built
// from data without the trace's order: FromData).
func (s *Side) insertsBefore(i int, pid uint32) uint32 {
	k, ok := slices.BinarySearchFunc(s.insertTies, int32(i), func(t insertTie, i int32) int { return cmp.Compare(t.msg, i) })
	if !ok {
		return 0
	}
	for _, c := range s.insertTies[k].counts {
		if c.pid == pid {
			return c.n
		}
	}
	return 0
}

// sortMessages sorts s.Messages by Time, stably, keeping insertTies on
// their messages.
func (s *Side) sortMessages() {
	if s.Messages.sortedByTime() {
		return
	}
	perm := s.Messages.timeOrder()
	s.Messages = s.Messages.permuted(perm)
	if len(s.insertTies) == 0 {
		return
	}
	inv := make([]int32, len(perm))
	for to, from := range perm {
		inv[from] = int32(to)
	}
	for k := range s.insertTies {
		s.insertTies[k].msg = inv[s.insertTies[k].msg]
	}
	slices.SortFunc(s.insertTies, func(a, b insertTie) int { return cmp.Compare(a.msg, b.msg) })
}
