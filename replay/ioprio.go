package replay

import (
	"fmt"
	"strconv"
	"strings"
)

// IOPrio is a process's I/O priority (include/uapi/linux/ioprio.h): a
// class and, for RT and BE, a level from 0 (highest) to 7.
type IOPrio struct {
	Class IOPrioClass
	Level uint8
}

// IOPrioClass is IOPRIO_CLASS_*.
type IOPrioClass uint8

const (
	IOPrioNone IOPrioClass = iota // IOPRIO_CLASS_NONE: derived from the CPU nice value
	IOPrioRT                      // IOPRIO_CLASS_RT
	IOPrioBE                      // IOPRIO_CLASS_BE
	IOPrioIdle                    // IOPRIO_CLASS_IDLE
)

// DefaultIOPrio is what a process without an I/O priority gets at nice 0:
// best effort, level 4 (IOPRIO_BE_NORM).
var DefaultIOPrio = IOPrio{Class: IOPrioBE, Level: 4}

func (p IOPrio) String() string {
	switch p.Class {
	case IOPrioRT:
		return "rt/" + strconv.Itoa(int(p.Level))
	case IOPrioBE:
		return "be/" + strconv.Itoa(int(p.Level))
	case IOPrioIdle:
		return "idle"
	}
	return "none"
}

// ParseIOPrio reads "rt/N", "be/N" (N 0-7) or "idle", as ionice names
// them ("realtime", "best-effort" also accepted).
func ParseIOPrio(s string) (IOPrio, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "idle" || s == "3" {
		return IOPrio{Class: IOPrioIdle}, nil
	}
	cls, lvl, ok := strings.Cut(s, "/")
	if !ok {
		return IOPrio{}, fmt.Errorf("invalid I/O priority %q (want rt/N, be/N with N 0-7, or idle)", s)
	}
	var c IOPrioClass
	switch cls {
	case "rt", "realtime", "1":
		c = IOPrioRT
	case "be", "best-effort", "2":
		c = IOPrioBE
	default:
		return IOPrio{}, fmt.Errorf("invalid I/O priority class %q in %q (want rt, be or idle)", cls, s)
	}
	n, err := strconv.Atoi(lvl)
	if err != nil || n < 0 || n > 7 {
		return IOPrio{}, fmt.Errorf("invalid I/O priority level %q in %q (want 0-7)", lvl, s)
	}
	return IOPrio{Class: c, Level: uint8(n)}, nil
}

// NiceIOPrio is the I/O priority of a process without one set, from its
// CPU nice value (-20..19) and whether it runs under a real-time or the
// idle scheduling policy: task_nice_ioclass (SCHED_IDLE -> IDLE, SCHED_FIFO
// or SCHED_RR -> RT, else BE) and task_nice_ioprio ((nice + 20) / 5).
func NiceIOPrio(nice int, realtime, idle bool) IOPrio {
	nice = min(max(nice, -20), 19)
	switch {
	case idle:
		return IOPrio{Class: IOPrioIdle}
	case realtime:
		return IOPrio{Class: IOPrioRT, Level: uint8((nice + 20) / 5)}
	}
	return IOPrio{Class: IOPrioBE, Level: uint8((nice + 20) / 5)}
}

// JournalIOPrio is the I/O priority ext4 gives its journal thread
// (jbd2/DEV-N): the journal_ioprio mount option's default,
// IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3) (DEFAULT_JOURNAL_IOPRIO in
// fs/ext4/ext4.h, set_task_ioprio on the thread); BFQ logs its queue with
// weight 50 (fs-bfq-fsync-vs-seqread: "calc_finish: serv 8874, w 50").
var JournalIOPrio = IOPrio{Class: IOPrioBE, Level: 3}

// IOPrioFor is IOPrioOf for a process named comm: a process given no I/O
// priority that is a jbd2 journal thread has JournalIOPrio.
func (o Options) IOPrioFor(pid uint32, comm string) IOPrio {
	if p, ok := o.IOPrio[pid]; ok && p.Class != IOPrioNone {
		return p
	}
	if strings.HasPrefix(comm, "jbd2/") {
		return JournalIOPrio
	}
	return DefaultIOPrio
}
