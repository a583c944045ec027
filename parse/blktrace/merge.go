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

// topIsMin reports whether the top cursor still orders before its
// children, so that the heap needs no Fix: the common case when one CPU
// produces a run of events.
func (h cursorHeap) topIsMin() bool {
	if !h.Less(0, 1) {
		return false
	}
	return len(h) < 3 || h.Less(0, 2)
}

// merger is the merge over raw sources, shared by MergeReader and Input.
//
//  1. On the first call every source's first event is read into a cursor
//     and the cursors are heapified.
//  2. Each call copies the top cursor's event out, reads that source's next
//     event into the cursor and, unless the cursor still orders before its
//     children, restores the heap with one Fix; an exhausted source is
//     popped.
type merger struct {
	srcs    []rawSource
	h       cursorHeap
	started bool
	err     error
}

func (m *merger) init(srcs []rawSource) { m.srcs = srcs }

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
	if len(m.h) == 0 {
		m.err = io.EOF
		return io.EOF
	}
	c := m.h[0]
	*ev = c.ev
	if err := c.src.next(&c.ev); err != nil {
		if err != io.EOF {
			m.err = err
			return err
		}
		heap.Pop(&m.h)
		return nil
	}
	if len(m.h) > 1 && !m.h.topIsMin() {
		heap.Fix(&m.h, 0)
	}
	return nil
}
