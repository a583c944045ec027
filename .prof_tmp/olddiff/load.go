package olddiff

import (
	"errors"
	"fmt"
	"io"

	"github.com/tracesched/tracesched/trace"
)

// NewSide returns an empty Side for a capture described by meta. Feed it
// events with Add, then call Finish.
func NewSide(meta trace.Meta) *Side {
	s := &Side{Meta: meta}
	s.rb = trace.NewRebuilder(
		func(r *trace.Request) { s.Requests = append(s.Requests, *r) },
		func(b *trace.Bio) { s.Bios = append(s.Bios, *b) },
	)
	return s
}

// Add feeds the next event, in the order a trace.EventReader returns them.
// Scheduler messages (ActionMessage) are kept; every event goes to the
// Rebuilder. Panics if called after Finish or on a Side not made by NewSide.
func (s *Side) Add(e *trace.Event) {
	if s.rb == nil {
		panic("diff: Side.Add on a finished Side or one not made by NewSide")
	}
	if e.Action == trace.ActionMessage {
		s.Messages = append(s.Messages, Message{Time: e.Time, Cgroup: e.Cgroup, Text: e.Text, Msg: trace.ParseMessage(e.Text)})
	}
	s.rb.Add(e)
}

// Finish closes the Rebuilder (requests still open are kept with
// FlagIncomplete) and sorts the data. The Side is read-only afterwards.
func (s *Side) Finish() {
	if s.rb != nil {
		s.rb.Close()
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
