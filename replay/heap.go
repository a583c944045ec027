package replay

import "github.com/tracesched/tracesched/trace"

// evKind is what a simulation event does when it fires.
type evKind uint8

const (
	evSource   evKind = iota // deliver the records whose captured Queue time has come
	evArrive                 // a bio arrives (Q) and is submitted
	evComplete               // a request completes on the device
	evTimer                  // a scheduler timer fires
	evCPU                    // a CPU's submission ends (Config.Submit): id is the CPU
	evWBT                    // the writeback throttle's stat window ends (wbt.go): gen is its generation
)

// simEvent is one entry of the engine's event queue (48 bytes: the heap
// moves it whole).
type simEvent struct {
	at  trace.Time
	seq uint64 // insertion order: breaks ties between equal times; an evTimer's is its arming's generation (Engine.timers)
	rec *Record
	rq  *Request
	// arg: evTimer, the scheduler's timer id; evCPU, the CPU; evWBT, the
	// writeback throttle's window generation.
	arg  uint64
	kind evKind
}

// eventQueue is a binary min-heap of simulation events ordered by (at,
// seq): events at the same simulated time fire in the order they were
// scheduled, so a run never depends on heap layout.
type eventQueue []simEvent

// before orders events by (at, seq).
func before(a, b *simEvent) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push and pop move a hole along the heap's path and write the event once
// into it, instead of swapping at each level.
func (q *eventQueue) push(ev simEvent) {
	*q = append(*q, simEvent{})
	s := *q
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&ev, &s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = ev
}

func (q *eventQueue) pop() simEvent {
	s := *q
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s[n] = simEvent{}
	s = s[:n]
	if n > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			m := l
			if r := l + 1; r < n && before(&s[r], &s[l]) {
				m = r
			}
			if !before(&s[m], &last) {
				break
			}
			s[i] = s[m]
			i = m
		}
		s[i] = last
	}
	*q = s
	return top
}
