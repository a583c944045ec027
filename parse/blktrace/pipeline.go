package blktrace

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// maxPrefix bounds how many notify records are held back while looking for
// the first I/O record, which fixes the time origin. Past it the first
// record's time becomes the origin.
const maxPrefix = 4096

const commCacheSize = 16

type commEntry struct {
	pid  uint32
	ok   bool
	comm string
}

// positioner is a raw source that can say where its last event was read:
// positionError wraps err in a *FormatError or *SyntaxError at that record
// or line, and makes it the source's sticky error.
type positioner interface {
	positionError(err error) error
}

// pipeline turns raw events (recording-clock times) into the events readers
// return:
//
//  1. It reads ahead to the first I/O (non-notify) event; that event's raw
//     time is the origin, as blkparse's genesis. Notify records read before
//     it are held back (at most maxPrefix).
//  2. A held-back notify record whose time is later than the origin comes
//     from a blkparse -d dump, which keeps PROCESS and TIMESTAMP notes with
//     their absolute times at the front of a rebased stream; its Time is
//     clamped to 0 (the origin). Earlier ones (a relay TIMESTAMP note taken
//     at trace start) keep their negative relative time.
//  3. Every event's Time becomes raw - origin; a time beyond
//     ±trace.MaxSpan ends the stream with an error at its record (not in
//     blkparse text, whose times are printed relative already and can be
//     that far apart in real captures: public/text-leveldb's CPU 15 and
//     CPU 13 differ by 1.27e9 s).
//  4. PROCESS notes (and text comm columns) feed a pid -> comm map that
//     fills Comm of later events of the pid; the strings are shared.
//  5. Devices and the first TIMESTAMP note are recorded for Meta.
type pipeline struct {
	src      rawSource
	relative bool // times are already relative (blkparse text): origin 0, no clamping

	started   bool
	origin    int64
	prefix    []trace.Event
	prefixPos int

	comms    map[uint32]string
	lastPID  uint32
	lastComm string
	lastOK   bool
	cache    [commCacheSize]commEntry // direct-mapped by pid: skips most map lookups

	devs    []trace.Dev
	lastDev trace.Dev
	haveDev bool

	clamped bool // notes were clamped: the stream is a blkparse -d dump

	haveWall          bool
	wallSec, wallNsec uint32

	err error
}

// recoverAt turns a panic while reading (a defect of the reader, which the
// fuzz tests look for) into a sticky error placed at the record or line
// last read, as a malformed input would be: a command then fails with the
// file and position instead of a stack trace.
func (p *pipeline) recoverAt(err *error) {
	r := recover()
	if r == nil {
		return
	}
	e := fmt.Errorf("internal error reading the input (please report it with this file): %v", r)
	if pos, ok := p.src.(positioner); ok {
		e = pos.positionError(e)
	}
	p.err, *err = e, e
}

func (p *pipeline) start() error {
	p.started = true
	var ev trace.Event
	for {
		err := p.src.next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			p.err = err
			break
		}
		p.prefix = append(p.prefix, ev)
		if !ev.Action.IsNotify() || len(p.prefix) >= maxPrefix {
			break
		}
	}
	if rs, ok := p.src.(interface{ timesRelative() bool }); ok && rs.timesRelative() {
		p.relative = true
	}
	if p.relative || len(p.prefix) == 0 {
		p.origin = 0
		return nil
	}
	last := p.prefix[len(p.prefix)-1]
	if last.Action.IsNotify() {
		p.origin = int64(p.prefix[0].Time)
	} else {
		p.origin = int64(last.Time)
	}
	for i := range p.prefix {
		e := &p.prefix[i]
		if e.Action.IsNotify() && int64(e.Time) > p.origin {
			e.Time = trace.Time(p.origin)
			p.clamped = true
			if e.Action == trace.ActionTimestamp && !p.haveWall {
				// Absolute note in a dump: its wall clock stands for the origin
				// only approximately (the dump lost the genesis).
				p.haveWall, p.wallSec, p.wallNsec = true, e.WallSec, e.WallNsec
			}
		}
	}
	return nil
}

// next returns the next event in *ev.
func (p *pipeline) next(ev *trace.Event) (err error) {
	defer p.recoverAt(&err)
	return p.nextOne(ev)
}

// nextBatch fills evs with the next events, as len(evs) calls of next
// would, and returns how many it filled: len(evs), or fewer with the
// error that ended the stream (io.EOF at its end). One recoverAt covers
// the batch (its cost per event was a tenth of the decoding's).
func (p *pipeline) nextBatch(evs []trace.Event) (n int, err error) {
	defer p.recoverAt(&err)
	for n = range evs {
		if err := p.nextOne(&evs[n]); err != nil {
			return n, err
		}
	}
	return len(evs), nil
}

// nextOne is next without the recovery.
func (p *pipeline) nextOne(ev *trace.Event) error {
	if !p.started {
		p.start()
	}
	if p.err != nil {
		// Sticky: also when the error was an event of the prefix read ahead.
		return p.err
	}
	if p.prefixPos < len(p.prefix) {
		*ev = p.prefix[p.prefixPos]
		p.prefixPos++
		if p.prefixPos == len(p.prefix) {
			p.prefix = nil
			p.prefixPos = 0
		}
	} else {
		if err := p.src.next(ev); err != nil {
			p.err = err
			return err
		}
	}
	ev.Time -= trace.Time(p.origin)
	if !p.relative && (ev.Time > trace.MaxSpan || ev.Time < -trace.MaxSpan) {
		// A corrupt time (one flipped bit makes a 146-year capture): refused
		// here, before any consumer sizes anything by the capture's span.
		err := fmt.Errorf("time %.3f s from the capture's first event is beyond the physical bound of %v (trace.MaxSpan): a corrupt record", ev.Time.Seconds(), time.Duration(trace.MaxSpan))
		if ps, ok := p.src.(positioner); ok {
			err = ps.positionError(err)
		}
		p.err = err
		return err
	}

	switch {
	case ev.Action == trace.ActionProcess:
		p.setComm(ev.PID, ev.Text)
		ev.Comm = ev.Text
	case ev.Comm != "":
		if !p.lastOK || p.lastPID != ev.PID || p.lastComm != ev.Comm {
			if old, ok := p.comms[ev.PID]; ok && old == ev.Comm {
				ev.Comm = old
				p.lastPID, p.lastComm, p.lastOK = ev.PID, old, true
			} else {
				p.setComm(ev.PID, ev.Comm)
			}
		} else {
			ev.Comm = p.lastComm
		}
	case p.comms != nil:
		if p.lastOK && p.lastPID == ev.PID {
			ev.Comm = p.lastComm
		} else {
			e := &p.cache[ev.PID%commCacheSize]
			if !e.ok || e.pid != ev.PID {
				*e = commEntry{pid: ev.PID, ok: true, comm: p.comms[ev.PID]}
			}
			p.lastPID, p.lastComm, p.lastOK = ev.PID, e.comm, true
			ev.Comm = e.comm
		}
	}
	if ev.Action == trace.ActionTimestamp && !p.haveWall {
		// Wall clock at the origin = note's wall clock + (origin - note time).
		ns := max(int64(ev.WallSec)*1e9+int64(ev.WallNsec)-int64(ev.Time), 0)
		p.haveWall, p.wallSec, p.wallNsec = true, uint32(ns/1e9), uint32(ns%1e9)
	}
	if !p.haveDev || ev.Dev != p.lastDev {
		p.addDev(ev.Dev)
	}
	return nil
}

func (p *pipeline) setComm(pid uint32, comm string) {
	if p.comms == nil {
		p.comms = make(map[uint32]string)
	}
	p.comms[pid] = comm
	p.cache[pid%commCacheSize] = commEntry{pid: pid, ok: true, comm: comm}
	p.lastPID, p.lastComm, p.lastOK = pid, comm, true
}

func (p *pipeline) addDev(d trace.Dev) {
	p.lastDev, p.haveDev = d, true
	if !slices.Contains(p.devs, d) {
		p.devs = append(p.devs, d)
	}
}

func (p *pipeline) meta(source string) trace.Meta {
	m := trace.Meta{Source: source, Devices: slices.Clone(p.devs), Origin: p.origin}
	slices.Sort(m.Devices)
	if p.haveWall {
		m.WallSec, m.WallNsec = p.wallSec, p.wallNsec
	}
	return m
}

// ReadEventInto reads the next event into *ev, as ReadEvent returns it,
// without ReadEvent's copies of the event (ReadEvent decodes into a
// scratch event and returns it by value): readers that keep events in
// slabs decode straight into them. *ev is fully overwritten. It returns
// io.EOF at the end; errors are sticky, as ReadEvent's.
func (in *Input) ReadEventInto(ev *trace.Event) error { return in.p.next(ev) }

// ReadEventsInto reads the next events into evs, as len(evs) calls of
// ReadEventInto would, and returns how many it read: len(evs) with a nil
// error, or fewer with the error that ended the stream (io.EOF at its
// end; sticky, as ReadEvent's). Every event of evs[:n] is fully
// overwritten; those after are left as they were.
func (in *Input) ReadEventsInto(evs []trace.Event) (int, error) { return in.p.nextBatch(evs) }
