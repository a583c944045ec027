package trace

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Time is a point in a capture, in nanoseconds since the capture's time
// origin (Meta.Origin; for blktrace input the first event, as blkparse counts).
type Time int64

// NoTime marks a time that was not observed (a request with no G event, an
// I/O still in flight when the capture ended).
const NoTime Time = math.MinInt64

// MaxSpan is the physical bound on a capture's times: no event is more
// than 30 days from the capture's origin. Readers refuse a time beyond it
// (a flipped high bit of a record's time makes a capture centuries long),
// so that nothing sized by a capture's span (bandwidth windows, timers)
// can grow without bound.
const MaxSpan Time = 30 * 24 * 3600 * 1e9

// Valid reports whether t is an observed time (not NoTime).
func (t Time) Valid() bool { return t != NoTime }

// Sub returns t-u as a duration.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// String prints t as blkparse does: seconds with nine decimals.
func (t Time) String() string {
	if t == NoTime {
		return "-"
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%09d", sign, v/1e9, v%1e9)
}

// Dev is a kernel dev_t as blktrace records it: major in the top 12 bits,
// minor in the low 20 (MINORBITS=20; not the glibc encoding).
type Dev uint32

// MkDev builds a Dev from its major and minor numbers.
func MkDev(major, minor uint32) Dev { return Dev(major<<20 | minor&0xfffff) }

// Major returns the device's major number.
func (d Dev) Major() uint32 { return uint32(d) >> 20 }

// Minor returns the device's minor number.
func (d Dev) Minor() uint32 { return uint32(d) & 0xfffff }

// String prints d as "major,minor", blkparse's form without padding.
func (d Dev) String() string {
	return strconv.FormatUint(uint64(d.Major()), 10) + "," + strconv.FormatUint(uint64(d.Minor()), 10)
}

// Action is what an event records. Values 1 to 19 are the kernel's
// __BLK_TA_* codes (include/uapi/linux/blktrace_api.h); the notify records
// (__BLK_TN_*) follow from ActionProcess on.
type Action uint8

const (
	ActionNone        Action = 0
	ActionQueue       Action = 1  // Q: a bio enters the block layer
	ActionBackMerge   Action = 2  // M: bio merged at the back of a request (or a request merged into another)
	ActionFrontMerge  Action = 3  // F: bio merged at the front of a request
	ActionGetRQ       Action = 4  // G: request allocated for a bio
	ActionSleepRQ     Action = 5  // S: waited for a request (legacy path)
	ActionRequeue     Action = 6  // R: request sent back to the queue
	ActionIssue       Action = 7  // D: request issued to the driver
	ActionComplete    Action = 8  // C: request (or part of it) completed
	ActionPlug        Action = 9  // P: queue plugged
	ActionUnplugIO    Action = 10 // U: explicit unplug; payload: requests released
	ActionUnplugTimer Action = 11 // UT (letter T): implicit unplug; payload: requests released
	ActionInsert      Action = 12 // I: request inserted into the scheduler or plug list
	ActionSplit       Action = 13 // X: bio split; payload: sector of the second part
	ActionBounce      Action = 14 // B: bio bounced (unused by current kernels)
	ActionRemap       Action = 15 // A: bio or request remapped from another device
	ActionAbort       Action = 16 // never emitted by current kernels
	ActionDrvData     Action = 17 // driver data (opaque payload)
	ActionZonePlug    Action = 18 // ZP: zone write plugging (v8 records, Linux 6.19)
	ActionZoneUnplug  Action = 19 // ZU: zone write unplug; payload: depth

	ActionProcess   Action = 32 // notify: process name for a pid (Text)
	ActionTimestamp Action = 33 // notify: wall clock at trace start (WallSec, WallNsec)
	ActionMessage   Action = 34 // notify: text message, such as a scheduler's debug line (m)
)

// actionLetters are the keys blkparse and `stats --json` use for each action.
var actionLetters = [...]string{
	ActionNone: "?", ActionQueue: "Q", ActionBackMerge: "M", ActionFrontMerge: "F",
	ActionGetRQ: "G", ActionSleepRQ: "S", ActionRequeue: "R", ActionIssue: "D",
	ActionComplete: "C", ActionPlug: "P", ActionUnplugIO: "U", ActionUnplugTimer: "T",
	ActionInsert: "I", ActionSplit: "X", ActionBounce: "B", ActionRemap: "A",
	ActionAbort: "abort", ActionDrvData: "drv_data", ActionZonePlug: "ZP", ActionZoneUnplug: "ZU",
	ActionProcess: "process", ActionTimestamp: "timestamp", ActionMessage: "m",
}

// Letter returns the key of a in `stats --json` events.by_action: blkparse's
// action letter, with T for an unplug by timer (blkparse prints UT).
func (a Action) Letter() string {
	if int(a) < len(actionLetters) && actionLetters[a] != "" {
		return actionLetters[a]
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// String returns the action as blkparse prints it (UT for an unplug by timer).
func (a Action) String() string {
	if a == ActionUnplugTimer {
		return "UT"
	}
	return a.Letter()
}

// IsNotify reports whether a is a notify record (process, timestamp, message)
// rather than an I/O event.
func (a Action) IsNotify() bool { return a >= ActionProcess }

// ParseAction maps a blkparse action column ("Q", "UT", "m", ...) to its Action.
func ParseAction(s string) (Action, bool) {
	switch s {
	case "UT", "T":
		return ActionUnplugTimer, true
	}
	for a, l := range actionLetters {
		if l == s && a != int(ActionNone) {
			return Action(a), true
		}
	}
	return ActionNone, false
}

// Category holds the blktrace category bits of an event (BLK_TC_*): the
// action field shifted right by 16. The low 16 bits are the classic
// categories of v7 records; bits 16 and up are the v8 extensions
// (BLK_TC_SHIFT2 = 32 in the record, so bit 16 here).
type Category uint32

const (
	CatRead     Category = 1 << 0
	CatWrite    Category = 1 << 1
	CatFlush    Category = 1 << 2
	CatSync     Category = 1 << 3
	CatQueue    Category = 1 << 4
	CatRequeue  Category = 1 << 5
	CatIssue    Category = 1 << 6
	CatComplete Category = 1 << 7
	CatFS       Category = 1 << 8
	CatPC       Category = 1 << 9
	CatNotify   Category = 1 << 10
	CatAhead    Category = 1 << 11
	CatMeta     Category = 1 << 12
	CatDiscard  Category = 1 << 13
	CatDrvData  Category = 1 << 14
	CatFUA      Category = 1 << 15
)

// IsWrite reports whether the categories name a write-direction operation
// (writes, discards, flushes).
func (c Category) IsWrite() bool { return c&(CatWrite|CatDiscard) != 0 }

// IsSync reports whether REQ_SYNC was set.
func (c Category) IsSync() bool { return c&CatSync != 0 }

// OpFlags keeps only the bits that describe the operation and its flags
// (direction, flush, sync, ahead, meta, discard, FUA), dropping the bits
// that describe which event reported it.
func (c Category) OpFlags() Category {
	return c & (CatRead | CatWrite | CatFlush | CatSync | CatAhead | CatMeta | CatDiscard | CatFUA)
}

// RWBS renders the categories as blkparse and the kernel's fill_rwbs do:
// F (flush), one of D/W/R/N, then F (FUA), A (ahead), S (sync), M (meta).
// bytes decides between R and N for non-write events.
func (c Category) RWBS(bytes uint32) string {
	var b [6]byte
	n := 0
	if c&CatFlush != 0 {
		b[n] = 'F'
		n++
	}
	switch {
	case c&CatDiscard != 0:
		b[n] = 'D'
	case c&CatWrite != 0:
		b[n] = 'W'
	case bytes != 0:
		b[n] = 'R'
	default:
		b[n] = 'N'
	}
	n++
	if c&CatFUA != 0 {
		b[n] = 'F'
		n++
	}
	if c&CatAhead != 0 {
		b[n] = 'A'
		n++
	}
	if c&CatSync != 0 {
		b[n] = 'S'
		n++
	}
	if c&CatMeta != 0 {
		b[n] = 'M'
		n++
	}
	return string(b[:n])
}

// Event is one record of a block-layer trace: an I/O event or a notify
// record. Fields that an action does not use are zero.
//
// Invariants (checked by Validate): notify records carry no sector, bytes,
// sequence or error (the kernel leaves them uninitialised; readers zero them);
// Bytes is a whole number of 512-byte sectors for I/O events except
// passthrough (CatPC) ones.
type Event struct {
	Time   Time     // ns since the capture's origin
	Seq    uint32   // per-CPU sequence number (0 where the source has none)
	CPU    uint32   // CPU the event was recorded on
	Dev    Dev      // device the event is about (for A: the target device)
	Action Action   // what happened
	Cat    Category // category bits: operation, flags, and the reporting family
	Sector uint64   // start sector, 512-byte units, whole-disk coordinates
	Bytes  uint32   // bytes the event covers
	PID    uint32   // task that was current when the event was recorded
	Error  int16    // completion or requeue status: a negative errno, 0 for success

	Cgroup     uint64 // cgroup id (inode of the blkio cgroup directory); 0 when the record has none
	CgroupPath string // cgroup path when the source names it, else ""
	Comm       string // process name for PID when known, else ""

	// Payload, by action.
	Text        string // ActionMessage: the message; ActionProcess: the process name
	FromDev     Dev    // ActionRemap: device the I/O came from
	FromSector  uint64 // ActionRemap: sector on FromDev
	Depth       uint64 // ActionUnplugIO, ActionUnplugTimer, ActionZoneUnplug: requests released
	SplitSector uint64 // ActionSplit: start sector of the second (remaining) part
	WallSec     uint32 // ActionTimestamp: wall clock seconds at the record's Time
	WallNsec    uint32 // ActionTimestamp: wall clock nanoseconds
}

// Sectors returns the number of 512-byte sectors the event covers.
func (e *Event) Sectors() uint64 { return uint64(e.Bytes) >> 9 }

// End returns the first sector after the event's range.
func (e *Event) End() uint64 { return e.Sector + e.Sectors() }

// RWBS returns the event's operation as blkparse prints it; N for notify records.
func (e *Event) RWBS() string {
	if e.Action.IsNotify() {
		return "N"
	}
	return e.Cat.RWBS(e.Bytes)
}

// Message parses the event's text as a scheduler debug message. It returns
// the zero Message for events that are not ActionMessage.
func (e *Event) Message() Message {
	if e.Action != ActionMessage {
		return Message{}
	}
	return ParseMessage(e.Text)
}

// Validate reports the first broken invariant of e, or nil.
func (e *Event) Validate() error {
	switch {
	case e.Time == NoTime:
		return fmt.Errorf("event has no time")
	case e.Action == ActionNone || (e.Action > ActionZoneUnplug && e.Action < ActionProcess) || e.Action > ActionMessage:
		return fmt.Errorf("invalid action %d", e.Action)
	case e.Action.IsNotify() && (e.Sector != 0 || e.Bytes != 0 || e.Error != 0):
		return fmt.Errorf("notify record with sector %d, bytes %d, error %d", e.Sector, e.Bytes, e.Error)
	case e.Action != ActionMessage && e.Action != ActionProcess && e.Text != "":
		return fmt.Errorf("%s event with text", e.Action)
	}
	return nil
}

// EventReader is a stream of events. ReadEvent returns the next event, or
// io.EOF once the stream is exhausted. Readers of blktrace data return
// events in nondecreasing Time except where the source itself is out of
// order (a blkparse -d dump keeps notify records with their original times).
type EventReader interface {
	ReadEvent() (Event, error)
}
