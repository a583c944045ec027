package blktrace

import (
	"container/heap"
	"io"

	"github.com/tracesched/tracesched/trace"
)

// MergeReader merges several event streams, each in nondecreasing Time,
// into one in nondecreasing Time (a k-way merge on a min-heap). Events with
// equal times come in reader order (the reader passed first wins), and
// events of one reader keep their order, so the output is deterministic.
type MergeReader struct {
	scratch trace.Event
	m       merger
}

// NewMergeReader returns a MergeReader over rs. The first error other than
// io.EOF from any reader ends the merge and is returned from then on.
func NewMergeReader(rs ...trace.EventReader) *MergeReader {
	srcs := make([]rawSource, len(rs))
	for i, r := range rs {
		srcs[i] = eventReaderSource{r}
	}
	mr := &MergeReader{}
	mr.m.init(srcs)
	return mr
}

// ReadEvent returns the earliest pending event, or io.EOF once every reader
// is exhausted.
func (mr *MergeReader) ReadEvent() (trace.Event, error) {
	// The scratch event lives in the reader: a local would escape
	// through the source interface and cost an allocation per event.
	err := mr.m.next(&mr.scratch)
	return mr.scratch, err
}

type eventReaderSource struct{ r trace.EventReader }

func (s eventReaderSource) next(ev *trace.Event) error {
	e, err := s.r.ReadEvent()
	if err != nil {
		return err
	}
	*ev = e
	return nil
}

// cursor is one merge input with its next event.
type cursor struct {
	ev  trace.Event
	src rawSource
	idx int
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if h[i].ev.Time != h[j].ev.Time {
		return h[i].ev.Time < h[j].ev.Time
	}
	return h[i].idx < h[j].idx
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// merger is the merge over raw sources, shared by MergeReader and Input.
//
//  1. On the first call every source's first event is read into a cursor
//     and the cursors are heapified.
//  2. The source of the event last returned is the active one, out of the
//     heap: its next event is decoded straight into the caller's event and
//     returned when it orders before the heap's top (by Time, then source
//     order), which is the common case when one CPU produces a run of
//     events, and costs no copy. Otherwise it is kept in the active
//     source's cursor, which goes back into the heap, and the top
//     cursor's event is copied out; that source becomes the active one.
//     An exhausted source is dropped.
//
// A source's error is returned when its next event is needed, after every
// event it produced before the error.
type merger struct {
	srcs    []rawSource
	h       cursorHeap
	active  *cursor // source of the last event returned, out of h; nil: none
	started bool
	err     error
}

func (m *merger) init(srcs []rawSource) { m.srcs = srcs }

// positionError places err at the event last returned, in the source that
// produced it (its decoder's last record: the merge returns a source's
// events as soon as they are decoded or from its cursor, which holds the
// last one decoded), and makes it sticky.
func (m *merger) positionError(err error) error {
	if m.active != nil {
		if p, ok := m.active.src.(positioner); ok {
			err = p.positionError(err)
		}
	}
	m.err = err
	return err
}

func (m *merger) next(ev *trace.Event) error {
	if m.err != nil {
		return m.err
	}
	if !m.started {
		m.started = true
		m.h = make(cursorHeap, 0, len(m.srcs))
		for i, s := range m.srcs {
			c := &cursor{src: s, idx: i}
			if err := s.next(&c.ev); err != nil {
				if err == io.EOF {
					continue
				}
				m.err = err
				return err
			}
			m.h = append(m.h, c)
		}
		heap.Init(&m.h)
	}
	if a := m.active; a != nil {
		err := a.src.next(ev)
		switch {
		case err == io.EOF:
			m.active = nil
		case err != nil:
			m.err = err
			return err
		case len(m.h) == 0:
			return nil
		default:
			top := m.h[0]
			if ev.Time < top.ev.Time || (ev.Time == top.ev.Time && a.idx < top.idx) {
				return nil
			}
			a.ev = *ev
			m.active = nil
			heap.Push(&m.h, a)
		}
	}
	if len(m.h) == 0 {
		m.err = io.EOF
		return io.EOF
	}
	c := heap.Pop(&m.h).(*cursor)
	*ev = c.ev
	m.active = c
	return nil
}
