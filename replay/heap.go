package replay

import "github.com/tracesched/tracesched/trace"

// evKind is what a simulation event does when it fires.
type evKind uint8

const (
	evSource   evKind = iota // deliver the records whose captured Queue time has come
	evArrive                 // a bio arrives (Q) and is submitted
	evComplete               // a request completes on the device
	evTimer                  // a scheduler timer fires
)

// simEvent is one entry of the engine's event queue.
type simEvent struct {
	at   trace.Time
	seq  uint64 // insertion order: breaks ties between equal times
	kind evKind
	rec  *Record
	rq   *Request
	id   int    // evTimer: the scheduler's timer id
	gen  uint64 // evTimer: arming generation; stale entries are skipped
}

// eventQueue is a binary min-heap of simulation events ordered by (at,
// seq): events at the same simulated time fire in the order they were
// scheduled, so a run never depends on heap layout.
type eventQueue []simEvent

func (q eventQueue) less(a, b int) bool {
	if q[a].at != q[b].at {
		return q[a].at < q[b].at
	}
	return q[a].seq < q[b].seq
}

func (q *eventQueue) push(ev simEvent) {
	*q = append(*q, ev)
	s := *q
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (q *eventQueue) pop() simEvent {
	s := *q
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = simEvent{}
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*q = s
	return top
}
