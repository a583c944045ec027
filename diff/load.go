package diff

import (
	"errors"
	"fmt"
	"io"

	"github.com/tracesched/tracesched/trace"
)

// NewSide returns an empty Side for a capture described by meta. Feed it
// events with Add, then call Finish.
func NewSide(meta trace.Meta) *Side { return NewSideObserved(meta, nil) }

// NewSideObserved is NewSide for a caller that builds something else from
// the same pass over a trace: observe, when not nil, is called with every
// bio the Side's Rebuilder finishes, as it finishes it (during Add or
// Finish), before the Side keeps its copy.
func NewSideObserved(meta trace.Meta, observe func(*trace.Bio)) *Side {
	s := &Side{Meta: meta}
	onBio := s.addBio
	if observe != nil {
		onBio = func(b *trace.Bio) {
			observe(b)
			s.addBio(b)
		}
	}
	s.rb = trace.NewRebuilder(s.takeRequest, onBio)
	return s
}

// Add feeds the next event, in the order a trace.EventReader returns them.
// Scheduler messages (ActionMessage) are kept, with the insertions (I) of
// their own instant that came before them (ties.go); every event goes to
// the Rebuilder. Panics if called after Finish or on a Side not made by NewSide.
func (s *Side) Add(e *trace.Event) {
	if s.rb == nil {
		panic("diff: Side.Add on a finished Side or one not made by NewSide")
	}
	switch e.Action {
	case trace.ActionInsert:
		s.tie.insert(e.Time, e.PID)
	case trace.ActionMessage:
		s.noteMessage(s.Messages.Len(), e) // the index it will have
		s.Messages.add(e)
	}
	s.rb.Add(e)
}

// Finish closes the Rebuilder (requests still open are kept with
// FlagIncomplete) and sorts the data. The Side is read-only afterwards.
func (s *Side) Finish() {
	if s.rb != nil {
		s.rb.Close()
		s.flushHeld()
		s.Stats = s.rb.Stats()
		s.rb = nil
	}
	s.finish()
}

// Load reads every event of r into a new Side and finishes it.
func Load(r trace.EventReader, meta trace.Meta) (*Side, error) {
	s := NewSide(meta)
	for n := 0; ; n++ {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading event %d: %w", n, err)
		}
		s.Add(&e)
	}
	s.Finish()
	return s, nil
}
