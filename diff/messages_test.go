package diff

import (
	"runtime/debug"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestSideMessagesAcrossBlocks: a Side fed more messages than a block
// holds has every one in Messages once finished, in order, after those it
// was given, and the collector has its percent back.
func TestSideMessagesAcrossBlocks(t *testing.T) {
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	s := NewSide(trace.Meta{})
	s.Messages = []Message{{Time: -1}}
	n := messageBlockLen + 3
	for i := range n {
		s.Add(&trace.Event{Time: trace.Time(i), Action: trace.ActionMessage, Text: "cfq1S dispatched a request"})
	}
	if len(s.Messages) != 1 {
		t.Fatalf("%d messages before Finish, want the 1 given", len(s.Messages))
	}
	s.Finish()
	if len(s.Messages) != n+1 || s.Messages[0].Time != -1 {
		t.Fatalf("%d messages, first at %d; want %d after the one given", len(s.Messages), s.Messages[0].Time, n)
	}
	for i, m := range s.Messages[1:] {
		if m.Time != trace.Time(i) || m.Msg.Sched != "cfq" || m.Msg.PID != 1 {
			t.Fatalf("message %d: time %d, %+v", i, m.Time, m.Msg)
		}
	}
	if p := debug.SetGCPercent(77); p != 77 {
		t.Errorf("GC percent after Finish: %d, want 77", p)
	}
	if s.pending.n != 0 || len(s.pending.blocks) != 0 {
		t.Errorf("Finish left %d messages in %d blocks", s.pending.n, len(s.pending.blocks))
	}
}
