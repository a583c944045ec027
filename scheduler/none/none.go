// Package none models blk-mq without an I/O scheduler ("none"): requests
// go to the device in the order they were inserted, and a bio merges only
// into one of the last few requests still waiting in the software queue
// (blk_bio_list_merge in block/blk-merge.c, which looks at up to 8 requests
// from the tail).
package none

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// mergeWindow is how many requests from the tail of the software queue a
// bio may merge into (blk_bio_list_merge: "checked = 8").
const mergeWindow = 8

// Scheduler is the "none" model: a FIFO of requests.
type Scheduler struct {
	h    replay.Host
	fifo []*replay.Request // waiting requests in insertion order; nil entries were merged away
	head int
	live int
}

// New returns the none model. It has no tunables: any Options.Set entry is
// an error.
func New(h replay.Host, o replay.Options) (*Scheduler, error) {
	if len(o.Set) > 0 {
		names := make([]string, 0, len(o.Set))
		for k := range o.Set {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("none: unknown attribute %s (none has no tunables)", strings.Join(names, ", "))
	}
	return &Scheduler{h: h}, nil
}

// Name returns "none".
func (s *Scheduler) Name() string { return "none" }

// recent reports whether rq is among the last mergeWindow waiting requests.
func (s *Scheduler) recent(rq *replay.Request) bool {
	n := 0
	for i := len(s.fifo) - 1; i >= s.head && n < mergeWindow; i-- {
		if s.fifo[i] == nil {
			continue
		}
		if s.fifo[i] == rq {
			return true
		}
		n++
	}
	return false
}

// AllowMerge allows a merge only into one of the last 8 requests inserted
// that are still waiting.
func (s *Scheduler) AllowMerge(rq *replay.Request, bio *replay.Bio) bool { return s.recent(rq) }

// RequestMerge returns a request among the last 8 waiting that bio can be
// merged in front of.
func (s *Scheduler) RequestMerge(now trace.Time, bio *replay.Bio) *replay.Request {
	n := 0
	for i := len(s.fifo) - 1; i >= s.head && n < mergeWindow; i-- {
		rq := s.fifo[i]
		if rq == nil {
			continue
		}
		n++
		if rq.Sector == bio.End() {
			return rq
		}
	}
	return nil
}

// RequestMerged does nothing: the FIFO position does not change.
func (s *Scheduler) RequestMerged(now trace.Time, rq *replay.Request, how replay.Merge) {}

// RequestsMerged forgets next.
func (s *Scheduler) RequestsMerged(now trace.Time, rq, next *replay.Request) {
	for i := s.head; i < len(s.fifo); i++ {
		if s.fifo[i] == next {
			s.fifo[i] = nil
			s.live--
			return
		}
	}
}

// Insert appends rq to the FIFO.
func (s *Scheduler) Insert(now trace.Time, rq *replay.Request) {
	s.fifo = append(s.fifo, rq)
	s.live++
}

// HasWork reports whether a request waits.
func (s *Scheduler) HasWork(now trace.Time) bool { return s.live > 0 }

// Dispatch returns the oldest waiting request.
func (s *Scheduler) Dispatch(now trace.Time) *replay.Request {
	for s.head < len(s.fifo) {
		rq := s.fifo[s.head]
		s.fifo[s.head] = nil
		s.head++
		if s.head == len(s.fifo) {
			s.fifo, s.head = s.fifo[:0], 0
		} else if s.head >= 1024 && s.head*2 >= len(s.fifo) {
			n := copy(s.fifo, s.fifo[s.head:])
			clear(s.fifo[n:])
			s.fifo, s.head = s.fifo[:n], 0
		}
		if rq != nil {
			s.live--
			return rq
		}
	}
	return nil
}

// Completed does nothing.
func (s *Scheduler) Completed(now trace.Time, rq *replay.Request) {}

// Timer does nothing: none arms no timers.
func (s *Scheduler) Timer(now trace.Time, id int) {}
