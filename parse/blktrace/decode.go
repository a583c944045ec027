package blktrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tracesched/tracesched/trace"
)

const (
	magicBase   = 0x65617400 // 'e' 'a' 't' then the version byte
	magicMask   = 0xffffff00
	v7HdrLen    = 48
	v8HdrLen    = 64
	ftraceHdr   = 16 // pid i32, cpu i32, ts u64 before each ftrace-bin record
	maxPDU      = 0xffff
	readBufSize = 1 << 18 // 256 KiB: holds any record (header + u16 pdu_len) many times over

	// Raw action bits.
	actCgroup = 0x100
)

// Notify codes (__BLK_TN_*), the low byte of a NOTIFY record's action.
const (
	tnProcess   = 0
	tnTimestamp = 1
	tnMessage   = 2
)

// rawSource yields events whose Time is still the recording clock (ns), not
// rebased. next fills *ev and returns io.EOF at the end.
type rawSource interface {
	next(ev *trace.Event) error
}

// seqState tracks the last I/O sequence number of one (device, cpu) pair.
type seqState struct {
	dev  trace.Dev
	cpu  uint32
	last uint32
}

// decoder reads one binary stream: a raw per-CPU relay file, a blkparse -d
// dump, or an ftrace bin stream. It allocates only for notify payloads.
type decoder struct {
	name string
	r    io.Reader

	buf      []byte
	pos, end int   // buf[pos:end] holds unread bytes
	off      int64 // stream offset of buf[pos]
	eof      bool  // r returned io.EOF (or an error, kept in rerr)
	rerr     error

	be      bool // header fields are big-endian
	version byte // 7 or 8
	hdrLen  int  // 48 or 64
	ftrace  bool // each record preceded by a 16-byte ftrace header
	fileCPU int64

	texts textArena // the messages' texts

	lastSeq uint32
	seqs    []seqState
	seqIdx  int

	dropped     uint64 // sequence gaps on I/O records
	cpuMismatch uint64 // records whose cpu != fileCPU (when fileCPU >= 0)
	unknown     uint64 // records with an action this reader does not know (skipped)
	records     uint64
	firstCPU    uint32
	multiCPU    bool // records of more than one CPU: a combined stream

	recOff    int64  // offset of the last record decoded
	lostLines uint64 // ftrace "[LOST n EVENTS]" lines read

	err error // sticky
}

// maxLostLine bounds the in-band loss line of an ftrace stream:
// "CPU:%d [LOST %lu EVENTS]\n" with a 10-digit CPU and a 20-digit count.
const maxLostLine = 64

// skipLost reads the loss lines that kernel/trace/trace.c print_trace_line
// writes in-band before the next record of a trace_pipe stream when the
// ring buffer dropped events (also in bin mode): it adds each line's count
// to the dropped events, as the text reader does.
func (d *decoder) skipLost() error {
	for {
		d.fill(maxLostLine)
		b := d.buf[d.pos:d.end]
		if len(b) < 4 || string(b[:4]) != "CPU:" {
			return nil
		}
		nl := bytes.IndexByte(b[:min(len(b), maxLostLine)], '\n')
		var m []string
		if nl >= 0 {
			m = lostLine.FindStringSubmatch(string(b[:nl]))
		}
		if m == nil || len(m[0]) != nl {
			show := b[:min(len(b), maxLostLine)]
			if nl >= 0 {
				show = b[:nl]
			}
			return d.fail(d.off, "malformed ftrace loss line %q (want \"CPU:N [LOST N EVENTS]\")", show)
		}
		n, err := strconv.ParseUint(m[2], 10, 64)
		if err != nil {
			return d.fail(d.off, "ftrace loss line: event count %q: %v", m[2], err)
		}
		d.dropped += n
		d.lostLines++
		d.pos += nl + 1
		d.off += int64(nl + 1)
	}
}

// positionError returns err as a *FormatError at the last record decoded,
// and makes it sticky.
func (d *decoder) positionError(err error) error { return d.failErr(d.recOff, err) }

// sniffResult tells what the first bytes of a stream are.
type sniffResult struct {
	binary  bool
	ftrace  bool
	be      bool
	version byte
}

// errNotBinary means the bytes do not start with a blktrace magic.
var errNotBinary = errors.New("not a blktrace binary stream")

// sniffBinary inspects the start of a stream. It returns errNotBinary when
// no magic is found at offset 0 or 16, and an "unsupported blktrace version"
// error when the magic family matches but the version is neither 7 nor 8.
func sniffBinary(b []byte) (sniffResult, error) {
	try := func(p []byte) (sniffResult, bool, error) {
		if len(p) < 4 {
			return sniffResult{}, false, nil
		}
		for _, be := range []bool{false, true} {
			var m uint32
			if be {
				m = binary.BigEndian.Uint32(p)
			} else {
				m = binary.LittleEndian.Uint32(p)
			}
			if m&magicMask == magicBase {
				v := byte(m)
				if v != 7 && v != 8 {
					return sniffResult{}, true, fmt.Errorf("unsupported blktrace version 0x%02x", v)
				}
				return sniffResult{binary: true, be: be, version: v}, true, nil
			}
		}
		return sniffResult{}, false, nil
	}
	if s, ok, err := try(b); ok {
		return s, err
	}
	if len(b) >= ftraceHdr+4 {
		if s, ok, err := try(b[ftraceHdr:]); ok {
			s.ftrace = true
			if err == nil && s.version != 7 {
				// print_bin_fmt always synthesizes a v7 header.
				err = fmt.Errorf("ftrace bin record with version 0x%02x (expected 0x07)", s.version)
			}
			return s, err
		}
	}
	return sniffResult{}, errNotBinary
}

func newDecoder(r io.Reader, name string, s sniffResult, fileCPU int64, buf []byte) *decoder {
	d := &decoder{name: name, r: r, be: s.be, version: s.version, ftrace: s.ftrace, fileCPU: fileCPU}
	if buf == nil {
		buf = make([]byte, readBufSize)
	}
	d.buf = buf
	d.hdrLen = v7HdrLen
	if s.version == 8 {
		d.hdrLen = v8HdrLen
	}
	return d
}

// fill makes at least n bytes available in buf[pos:end] unless the stream
// ends first. It reports whether n bytes are available.
func (d *decoder) fill(n int) bool {
	if d.end-d.pos >= n {
		return true
	}
	if d.eof {
		return false
	}
	if d.pos > 0 {
		copy(d.buf, d.buf[d.pos:d.end])
		d.end -= d.pos
		d.pos = 0
	}
	for empty := 0; d.end < n; {
		m, err := d.r.Read(d.buf[d.end:])
		d.end += m
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.rerr = err
			}
			break
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= 100 {
			// As bufio does with a reader that keeps returning 0, nil.
			d.eof, d.rerr = true, io.ErrNoProgress
			break
		}
	}
	return d.end-d.pos >= n
}

func (d *decoder) u16(b []byte) uint16 {
	if d.be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *decoder) u32(b []byte) uint32 {
	if d.be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64(b []byte) uint64 {
	if d.be {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) fail(off int64, format string, args ...any) error {
	d.err = &FormatError{File: d.name, Offset: off, Seq: d.lastSeq, Err: fmt.Errorf(format, args...)}
	return d.err
}

func (d *decoder) failErr(off int64, err error) error {
	d.err = &FormatError{File: d.name, Offset: off, Seq: d.lastSeq, Err: err}
	return d.err
}

// next decodes the next record into *ev, Time in raw recording-clock ns.
// Records with an unknown action code are counted and skipped.
func (d *decoder) next(ev *trace.Event) error {
	if d.err != nil {
		return d.err
	}
	for {
		skip, err := d.decodeOne(ev)
		if err != nil || !skip {
			return err
		}
	}
}

func (d *decoder) decodeOne(ev *trace.Event) (skip bool, err error) {
	pre := 0
	if d.ftrace {
		pre = ftraceHdr
	}
	hl := pre + d.hdrLen
	if d.ftrace {
		if err := d.skipLost(); err != nil {
			return false, err
		}
	}
	if d.end-d.pos < hl && !d.fill(hl) { // (the test first: fill is not inlined)
		if d.rerr != nil {
			return false, d.failErr(d.off, explainRead(d.rerr))
		}
		if d.end == d.pos {
			d.err = io.EOF
			return false, io.EOF
		}
		return false, d.failErr(d.off, fmt.Errorf("%w: %d bytes left, record header needs %d", ErrTruncated, d.end-d.pos, hl))
	}
	// The header as an array: its fields are read at constant offsets
	// with no bounds checks. h is the part both versions share (the v8
	// header is longer).
	h := (*[v7HdrLen]byte)(d.buf[d.pos+pre : d.end])
	magic := d.u32(h[0:4])
	if magic != magicBase|uint32(d.version) {
		if magic&magicMask == magicBase {
			return false, d.fail(d.off, "unsupported blktrace version 0x%02x (stream started with 0x%02x)", byte(magic), d.version)
		}
		return false, d.failErr(d.off, errBadMagic(magic))
	}
	var (
		action uint64
		pid    uint32
		dev    uint32
		cpu    uint32
		errno  uint16
		pdulen int
	)
	if d.version == 8 {
		h8 := (*[v8HdrLen]byte)(d.buf[d.pos+pre : d.end])
		pid = d.u32(h8[28:32])
		action = d.u64(h8[32:40])
		dev = d.u32(h8[40:44])
		cpu = d.u32(h8[44:48])
		errno = d.u16(h8[48:50])
		pdulen = int(d.u16(h8[50:52]))
	} else {
		action = uint64(d.u32(h[28:32]))
		pid = d.u32(h[32:36])
		dev = d.u32(h[36:40])
		cpu = d.u32(h[40:44])
		errno = d.u16(h[44:46])
		pdulen = int(d.u16(h[46:48]))
	}
	total := hl + pdulen
	if d.end-d.pos < total && !d.fill(total) {
		if d.rerr != nil {
			return false, d.failErr(d.off, explainRead(d.rerr))
		}
		return false, d.failErr(d.off, fmt.Errorf("%w: pdu_len %d, only %d of %d bytes left", ErrTruncated, pdulen, d.end-d.pos, total))
	}
	rec := d.buf[d.pos : d.pos+total] // fill may have moved the record
	h = (*[v7HdrLen]byte)(rec[pre:])
	recOff := d.off
	d.recOff = recOff
	t := d.u64(h[8:16])
	seq := d.u32(h[4:8])
	if d.ftrace {
		fh := (*[ftraceHdr]byte)(rec)
		hpid := d.u32(fh[0:4])
		hcpu := d.u32(fh[4:8])
		hts := d.u64(fh[8:16])
		if hpid != pid || hcpu != cpu || hts != t {
			return false, d.fail(recOff, "ftrace bin header (pid %d, cpu %d, ts %d) does not match its record (pid %d, cpu %d, time %d): not a 6.18-style stream (a 6.19 kernel mis-synthesizes v7 records)", int32(hpid), int32(hcpu), hts, pid, cpu, t)
		}
	}
	d.pos += total
	d.off += int64(total)
	d.records++

	pdu := rec[pre+d.hdrLen:]
	code := uint8(action)
	cat := trace.Category(uint32(action>>16)&0xffff | uint32(action>>32)<<16)

	// Cleared in place, then set: a composite literal would be built
	// aside and copied in (with write barriers, ev being on the heap).
	*ev = trace.Event{}
	ev.Time, ev.CPU, ev.Dev, ev.Cat, ev.PID = trace.Time(int64(t)), cpu, trace.Dev(dev), cat, pid
	if d.fileCPU >= 0 && int64(cpu) != d.fileCPU {
		d.cpuMismatch++
	}
	if d.records == 1 {
		d.firstCPU = cpu
	} else if cpu != d.firstCPU {
		d.multiCPU = true
	}
	if action&actCgroup != 0 {
		if len(pdu) < 8 {
			return false, d.fail(recOff, "cgroup flag set but pdu_len is %d (< 8)", pdulen)
		}
		ev.Cgroup = d.u64(pdu)
		pdu = pdu[8:]
	}

	if cat&trace.CatNotify != 0 {
		switch code {
		case tnProcess:
			ev.Action = trace.ActionProcess
			ev.Text = cString(pdu)
		case tnTimestamp:
			ev.Action = trace.ActionTimestamp
			if len(pdu) >= 8 {
				ev.WallSec = d.u32(pdu)
				ev.WallNsec = d.u32(pdu[4:])
			}
		case tnMessage:
			ev.Action = trace.ActionMessage
			ev.Text = d.texts.string(trimNUL(pdu))
		default:
			d.unknown++
			return true, nil
		}
		return false, nil
	}
	if code == 0 || code > uint8(trace.ActionZoneUnplug) {
		d.unknown++
		return true, nil
	}
	ev.Action = trace.Action(code)
	ev.Seq = seq
	ev.Sector = d.u64(h[16:24])
	ev.Bytes = d.u32(h[24:28])
	ev.Error = int16(errno)
	switch ev.Action {
	case trace.ActionUnplugIO, trace.ActionUnplugTimer, trace.ActionZoneUnplug:
		if len(pdu) >= 8 {
			ev.Depth = binary.BigEndian.Uint64(pdu)
		}
	case trace.ActionSplit:
		if len(pdu) >= 8 {
			ev.SplitSector = binary.BigEndian.Uint64(pdu)
		}
	case trace.ActionRemap:
		if len(pdu) >= 16 {
			ev.FromDev = trace.Dev(binary.BigEndian.Uint32(pdu))
			ev.Dev = trace.Dev(binary.BigEndian.Uint32(pdu[4:]))
			ev.FromSector = binary.BigEndian.Uint64(pdu[8:])
		}
	}
	if seq != 0 {
		d.checkSeq(trace.Dev(dev), cpu, seq)
		d.lastSeq = seq
	}
	return false, nil
}

// checkSeq counts gaps in the per-(device, cpu) sequence of I/O records.
func (d *decoder) checkSeq(dev trace.Dev, cpu, seq uint32) {
	i := d.seqIdx
	if i >= len(d.seqs) || d.seqs[i].dev != dev || d.seqs[i].cpu != cpu {
		i = -1
		for j := range d.seqs {
			if d.seqs[j].dev == dev && d.seqs[j].cpu == cpu {
				i = j
				break
			}
		}
		if i < 0 {
			d.seqs = append(d.seqs, seqState{dev: dev, cpu: cpu, last: seq})
			d.seqIdx = len(d.seqs) - 1
			return
		}
		d.seqIdx = i
	}
	s := &d.seqs[i]
	if s.last != 0 && seq > s.last && seq-s.last > 1 {
		d.dropped += uint64(seq - s.last - 1)
	}
	s.last = seq
}

func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func errBadMagic(m uint32) error { return fmt.Errorf("bad magic %#08x", m) }
