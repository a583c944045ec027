package diff

import (
	"cmp"
	"iter"
	"slices"
	"sort"

	"github.com/tracesched/tracesched/trace"
)

// messageBlockBits: a MessageLog block holds 1<<messageBlockBits messages.
const (
	messageBlockBits = 14
	messageBlockLen  = 1 << messageBlockBits
	messageBlockMask = messageBlockLen - 1
)

// MessageLog is a side's scheduler messages, in order, read by position
// (Len, At, All). It keeps them in blocks of messageBlockLen, so that
// appending never copies more than one block: a Message holds pointers,
// and a slice of millions (a capture with BFQ's full log has about 17 a
// request) grown by append was copied whole at every growth, a long copy
// the garbage collector cannot preempt, every pointer through a write
// barrier while it marks (loading 435 k requests with 7.6 M messages took
// 16 CPU-s so). The zero value is an empty log.
type MessageLog struct {
	// blocks: every one full (messageBlockLen) but the last; only the
	// first grows by append, the next ones are made whole.
	blocks [][]Message
}

// MessageLogOf returns a log of a copy of msgs.
func MessageLogOf(msgs []Message) MessageLog {
	var l MessageLog
	for i := range msgs {
		l.Append(msgs[i])
	}
	return l
}

// Len returns the number of messages.
func (l *MessageLog) Len() int {
	k := len(l.blocks) - 1
	if k < 0 {
		return 0
	}
	return k<<messageBlockBits + len(l.blocks[k])
}

// At returns message i (0 <= i < Len), valid until the next Append (the
// first block moves as it grows).
func (l *MessageLog) At(i int) *Message { return &l.blocks[i>>messageBlockBits][i&messageBlockMask] }

// Append adds m at the end.
func (l *MessageLog) Append(m Message) {
	k := len(l.blocks) - 1
	if k < 0 || len(l.blocks[k]) == messageBlockLen {
		// The first block grows by append, from a few: a short log holds
		// little. The next ones are made whole.
		c := messageBlockLen
		if k < 0 {
			c = 64
		}
		l.blocks = append(l.blocks, make([]Message, 0, c))
		k++
	}
	l.blocks[k] = append(l.blocks[k], m)
}

// All yields each message with its position, in order.
func (l *MessageLog) All() iter.Seq2[int, *Message] {
	return func(yield func(int, *Message) bool) {
		i := 0
		for _, b := range l.blocks {
			for j := range b {
				if !yield(i, &b[j]) {
					return
				}
				i++
			}
		}
	}
}

// Slice returns a copy of the messages in one slice.
func (l *MessageLog) Slice() []Message {
	out := make([]Message, 0, l.Len())
	for _, b := range l.blocks {
		out = append(out, b...)
	}
	return out
}

// Search returns the first position whose message is at or after t (Len
// when none), for a log in time order.
func (l *MessageLog) Search(t trace.Time) int {
	return sort.Search(l.Len(), func(i int) bool { return l.At(i).Time >= t })
}

// sortedByTime reports whether the messages are in time order.
func (l *MessageLog) sortedByTime() bool {
	prev := trace.Time(0)
	for i, m := range l.All() {
		if i > 0 && m.Time < prev {
			return false
		}
		prev = m.Time
	}
	return true
}

// permuted returns a log whose message j is l's perm[j].
func (l *MessageLog) permuted(perm []int32) MessageLog {
	var out MessageLog
	for _, from := range perm {
		out.Append(*l.At(int(from)))
	}
	return out
}

// timeOrder returns the positions of the messages stably sorted by time.
func (l *MessageLog) timeOrder() []int32 {
	perm := make([]int32, l.Len())
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(l.At(int(a)).Time, l.At(int(b)).Time) })
	return perm
}

// add keeps the message of e, an ActionMessage event.
func (l *MessageLog) add(e *trace.Event) {
	l.Append(Message{Time: e.Time, Cgroup: e.Cgroup, Text: e.Text, Msg: trace.ParseMessage(e.Text)})
}
