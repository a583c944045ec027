package diff

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestSideMessagesAcrossBlocks: a Side fed more messages than a block
// holds has every one, in order, after those it was given; a full
// block's messages stay where they are as the log grows.
func TestSideMessagesAcrossBlocks(t *testing.T) {
	s := NewSide(trace.Meta{})
	s.Messages = MessageLogOf([]Message{{Time: -1}})
	n := 2*messageBlockLen + 3
	var first *Message
	for i := range n {
		s.Add(&trace.Event{Time: trace.Time(i), Action: trace.ActionMessage, Text: "cfq1S dispatched a request"})
		if i == messageBlockLen-2 { // the first block is full
			first = s.Messages.At(1)
		}
	}
	s.Finish()
	if s.Messages.Len() != n+1 || s.Messages.At(0).Time != -1 || s.Messages.At(1) != first {
		t.Fatalf("%d messages, first at %d; want %d after the one given, the first where it was", s.Messages.Len(), s.Messages.At(0).Time, n)
	}
	count := 0
	for i, m := range s.Messages.All() {
		if i > 0 && (m.Time != trace.Time(i-1) || m.Msg.Sched != "cfq" || m.Msg.PID != 1) {
			t.Fatalf("message %d: time %d, %+v", i, m.Time, m.Msg)
		}
		count++
	}
	if count != n+1 || len(s.Messages.Slice()) != n+1 {
		t.Errorf("All yields %d, Slice holds %d; want %d", count, len(s.Messages.Slice()), n+1)
	}
	if got := s.Messages.Search(messageBlockLen + 5); got != messageBlockLen+6 {
		t.Errorf("Search: %d, want %d", got, messageBlockLen+6)
	}
}

// TestSortMessagesAcrossBlocks: a log out of time order is sorted stably
// across blocks.
func TestSortMessagesAcrossBlocks(t *testing.T) {
	var msgs []Message
	for i := range messageBlockLen + 10 {
		msgs = append(msgs, Message{Time: trace.Time((messageBlockLen + 10 - i) / 2), Cgroup: uint64(i)})
	}
	s := FromData(trace.Meta{}, nil, nil, msgs)
	for i := 1; i < s.Messages.Len(); i++ {
		a, b := s.Messages.At(i-1), s.Messages.At(i)
		if a.Time > b.Time || a.Time == b.Time && a.Cgroup > b.Cgroup {
			t.Fatalf("messages %d, %d: (%d, %d) before (%d, %d)", i-1, i, a.Time, a.Cgroup, b.Time, b.Cgroup)
		}
	}
}
