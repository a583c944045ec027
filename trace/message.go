package trace

import (
	"strconv"
	"strings"
)

// Message is a scheduler debug line (a blktrace message record) split into
// the queue it names and the rest. BFQ names queues bfq<pid><S|A>, and
// merged (shared) queues bfqSHARED-<S|A> (bfq_bfqq_name in
// block/bfq-iosched.h); device-level lines start "bfq ". CFQ (Linux 4.x)
// names queues cfq<pid><S|A><N| > (cfq_log_cfqq); device-level lines start
// "cfq ".
type Message struct {
	Sched  string // "bfq" or "cfq"; "" for a message from anything else
	PID    int32  // pid of the queue's process; -1 for a shared queue; 0 when no queue is named
	Sync   bool   // the queue is a sync queue (S)
	Shared bool   // the queue is a merged queue (bfqSHARED-)
	NoIdle bool   // CFQ: the queue is on the SYNC_NOIDLE tree (N)
	Body   string // the text after the scheduler or queue prefix
}

// QueueName returns the queue's name as the scheduler prints it, or "" when
// the message names no queue.
func (m Message) QueueName() string {
	if m.PID == 0 {
		return ""
	}
	return QueueName(m.Sched, m.PID, m.Sync)
}

// QueueName formats a scheduler queue name: bfq1234S, bfqSHARED-S, cfq1234A.
// pid -1 names a shared queue.
func QueueName(sched string, pid int32, sync bool) string {
	c := "A"
	if sync {
		c = "S"
	}
	if pid < 0 {
		return sched + "SHARED-" + c
	}
	return sched + strconv.Itoa(int(pid)) + c
}

// ParseMessage splits a message text into its scheduler, queue and body.
// Text from other sources gives a Message with only Body set.
func ParseMessage(text string) Message {
	if len(text) < 4 {
		return Message{Body: text}
	}
	sched := text[:3]
	if sched != "bfq" && sched != "cfq" {
		return Message{Body: text}
	}
	rest := text[3:]
	if rest[0] == ' ' {
		return Message{Sched: sched, Body: rest[1:]}
	}
	m := Message{Sched: sched}
	i := 0
	if sched == "bfq" && len(rest) >= 7 && rest[:7] == "SHARED-" {
		m.PID, m.Shared = -1, true
		i = 7
	} else {
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i > 10 {
			return Message{Body: text}
		}
		pid, err := strconv.ParseInt(rest[:i], 10, 32)
		if err != nil {
			return Message{Body: text}
		}
		if pid == 0 {
			// BFQ names a queue it has just allocated, before it sets the
			// queue's pid, bfq0S or bfq0A (new_ioprio): a BFQ line that
			// names no process's queue.
			if i < len(rest) && (rest[i] == 'S' || rest[i] == 'A') {
				return Message{Sched: sched, Body: strings.TrimLeft(rest[i+1:], " ")}
			}
			return Message{Body: text}
		}
		m.PID = int32(pid)
	}
	if i >= len(rest) || (rest[i] != 'S' && rest[i] != 'A') {
		return Message{Body: text}
	}
	m.Sync = rest[i] == 'S'
	i++
	if sched == "cfq" && i < len(rest) && (rest[i] == 'N' || rest[i] == ' ') {
		m.NoIdle = rest[i] == 'N'
		i++
	}
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	m.Body = rest[i:]
	return m
}
