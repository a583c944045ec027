package diff

import "github.com/tracesched/tracesched/trace"

// The Rebuilder hands requests over as they complete: nearly, not quite,
// in ID order (a request overtakes a few others in the device's queue).
// A Side keeps its requests by ID, so a Side fed in completion order had
// to permute every request column at Finish. Instead, a request that
// arrives ahead of the next ID is held in a ring, indexed by ID, until the
// ones before it have arrived; the table is then filled in ID order and
// Finish finds it sorted. A ring that would pass reorderMaxHeld requests
// (a request that never completes until the end of the trace, or a gap in
// the IDs) is given up on: what it holds goes into the table in ID order,
// and later requests as they come (Finish then sorts, as before).

// reorderMaxHeld bounds the requests a Side holds back (about 136 B each).
const reorderMaxHeld = 1 << 16

// reqReorder is the ring of requests held back.
type reqReorder struct {
	next uint64 // the ID the table takes next; 0 before the first
	ring []trace.Request
	have []bool
	held int
	off  bool // given up: requests go into the table as they come
}

// takeRequest is the Rebuilder's request callback: r into the table in ID
// order, through the ring.
func (s *Side) takeRequest(r *trace.Request) {
	o := &s.order
	if o.off {
		s.addRequest(r)
		return
	}
	if o.next == 0 {
		o.next = 1 // the Rebuilder numbers requests from 1
	}
	switch {
	case r.ID == o.next:
		s.addRequest(r)
		o.next++
		s.drainHeld()
	case r.ID < o.next:
		s.addRequest(r) // out of the sequence: Finish sorts
	default:
		d := r.ID - o.next
		for d >= uint64(len(o.ring)) {
			if !o.grow() {
				s.flushHeld()
				o.off = true
				s.addRequest(r)
				return
			}
		}
		slot := r.ID & uint64(len(o.ring)-1)
		o.ring[slot], o.have[slot] = *r, true
		o.held++
	}
}

// drainHeld moves the held requests that now follow on into the table.
func (s *Side) drainHeld() {
	o := &s.order
	mask := uint64(len(o.ring) - 1)
	for o.held > 0 {
		slot := o.next & mask
		if !o.have[slot] {
			return
		}
		s.addRequest(&o.ring[slot])
		o.have[slot] = false // the slot's copy stays until overwritten (its Comm is interned anyway)
		o.held--
		o.next++
	}
}

// grow doubles the ring (from 1,024), or reports false at reorderMaxHeld.
func (o *reqReorder) grow() bool {
	n := max(2*len(o.ring), 1024)
	if n > reorderMaxHeld {
		return false
	}
	ring, have := make([]trace.Request, n), make([]bool, n)
	for id := o.next; id < o.next+uint64(len(o.ring)); id++ {
		if old := id & uint64(len(o.ring)-1); o.have[old] {
			ring[id&uint64(n-1)], have[id&uint64(n-1)] = o.ring[old], true
		}
	}
	o.ring, o.have = ring, have
	return true
}

// flushHeld moves every held request into the table, in ID order, skipping
// the IDs that have not arrived, and empties the ring.
func (s *Side) flushHeld() {
	o := &s.order
	mask := uint64(len(o.ring) - 1)
	for id := o.next; o.held > 0; id++ {
		if slot := id & mask; o.have[slot] {
			s.addRequest(&o.ring[slot])
			o.have[slot] = false
			o.held--
			o.next = id + 1
		}
	}
	o.ring, o.have = nil, nil
}
