package diff

import (
	"runtime/debug"
	"sync"

	"github.com/tracesched/tracesched/trace"
)

// messageBlockLen is the messages of one block of a messageLog.
const messageBlockLen = 1 << 14

// messageLog keeps a loading Side's messages as they come, in blocks of
// messageBlockLen, until Finish joins them into Side.Messages. Appending
// them to one slice instead copies it at every growth, and a Message holds
// pointers: a growth of a slice of millions (a capture with BFQ's messages
// has about 17 a request) is a long copy the garbage collector cannot
// preempt, each pointer through a write barrier while it marks. Loading
// 435 k requests with 7.6 M messages took 16 CPU-s so.
type messageLog struct {
	blocks [][]Message
	n      int
}

// add keeps the message of e, an ActionMessage event.
func (m *messageLog) add(e *trace.Event) {
	k := len(m.blocks) - 1
	if k < 0 || len(m.blocks[k]) == messageBlockLen {
		m.blocks = append(m.blocks, make([]Message, 0, messageBlockLen))
		k++
	}
	m.blocks[k] = append(m.blocks[k], Message{Time: e.Time, Cgroup: e.Cgroup, Text: e.Text, Msg: trace.ParseMessage(e.Text)})
	m.n++
}

// join returns to followed by the messages kept, in their order, in one
// slice of their length, and empties m.
//
// The copy is made with the garbage collector off: while a collection
// marks, every pointer copied passes a write barrier, and the new slice
// (tens or hundreds of MB) is what starts a collection (CFQ's 2.8 M
// messages of a 2.1 M-request replay took 2.5 CPU-s to join so, 0.7
// without). debug.SetGCPercent(-1) returns once no collection is marking.
func (m *messageLog) join(to []Message) []Message {
	if m.n == 0 {
		return to
	}
	defer gcOff()()
	out := make([]Message, 0, len(to)+m.n)
	out = append(out, to...)
	for i, b := range m.blocks {
		out = append(out, b...)
		m.blocks[i] = nil
	}
	*m = messageLog{}
	return out
}

// gcOffMu serializes gcOff: the percent is the process's, and two callers
// restoring each other's value would leave the collector off.
var gcOffMu sync.Mutex

// gcOff turns the garbage collector off (waiting for a collection that is
// marking to end) and returns the function that turns it back on, to the
// percent it had.
func gcOff() (restore func()) {
	gcOffMu.Lock()
	old := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(old)
		gcOffMu.Unlock()
	}
}
