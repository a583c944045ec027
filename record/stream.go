package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// The ftrace blk tracer's binary stream (trace_options bin + context-info)
// as trace_pipe delivers it: per record a 16-byte context header (pid i32,
// cpu i32, ts u64; little endian on the machines it runs on) then struct
// blk_io_trace (48 bytes, version 7, the kernel synthesizes magic, sequence
// 0 and time = ts) then pdu_len payload bytes. Lost events appear in-band as
// the text "CPU:%d [LOST %lu EVENTS]\n" between records.
const (
	hdrLen   = 16
	bitLen   = 48
	magicV7  = 0x65617407
	maxPDU   = 1 << 16
	notify   = 1 << (10 + 16) // BLK_TC_NOTIFY << BLK_TC_SHIFT
	cgFlag   = 1 << 8         // __BLK_TA_CGROUP
	tnProc   = 0 | notify     // BLK_TN_PROCESS
	tnStamp  = 1 | notify     // BLK_TN_TIMESTAMP
	catWrite = 1 << 1
	catFlush = 1 << 2
	catDisc  = 1 << 13
	catFUA   = 1 << 15
)

// actionLetter names blktrace action codes as blkparse prints them.
var actionLetter = map[uint32]string{1: "Q", 2: "M", 3: "F", 4: "G", 5: "S", 6: "R", 7: "D", 8: "C",
	9: "P", 10: "U", 11: "UT", 12: "I", 13: "X", 14: "B", 15: "A", 16: "ABORT", 17: "DRV"}

// traceDev is one traced device's output: per-CPU files NAME.blktrace.N.
type traceDev struct {
	name  string
	devt  uint32
	files []*cpuFile
	// per device: pids already announced with a PROCESS note
	announced map[uint32]bool
	stamped   bool
	counts    devCounts
}

type cpuFile struct {
	path  string
	f     *os.File
	w     *bufio.Writer
	seq   uint32
	last  uint64 // time of the last record written
	bytes int64
}

// devCounts are what the completeness check and the manifest need.
type devCounts struct {
	byCgroup     map[uint64]map[string]int64
	actions      map[string]int64
	completions  map[string]int64
	flushSeqData int64
	queuedByPID  map[uint32]int64
	records      uint64
	reordered    uint64
}

// splitter turns the stream into per-CPU blktrace files, the way relay
// blktrace writes them, so that blkparse and every reader take them:
// records of each device by their cpu field, per-CPU sequence numbers 1,
// 2, ... on actions (0 on notes), the uninitialised sector/bytes/error of
// notes zeroed, a PROCESS note before each pid's first action and a
// TIMESTAMP note (wall clock) before the first record. With noCgroup the
// cgroup flag and id are stripped (as Debian's blkparse 1.2.0 needs).
type splitter struct {
	devs     map[uint32]*traceDev
	order    []*traceDev
	ncpu     int
	buf      []byte // unparsed bytes of the stream
	noCgroup bool
	// rtOffset is CLOCK_REALTIME - CLOCK_MONOTONIC (ns), for the TIMESTAMP note.
	rtOffset int64
	comm     func(pid uint32) string // comm for PROCESS notes
	newPID   func(pid uint32)        // called on each pid's first record
	seenPID  map[uint32]bool

	maxBytes int64 // stop writing past this many bytes in all (0 = no limit)
	written  int64
	full     bool // maxBytes reached: later records are counted, not written

	records     uint64
	notWritten  uint64 // records dropped because maxBytes was reached
	other       map[string]uint64
	lostMarkers int64
	lostEvents  int64
	junk        int64
	resyncs     int64
	hdrMismatch uint64
	firstT      uint64
	lastT       uint64
	streamBytes int64
}

func newSplitter(dir string, devs []traceDev, ncpu int) (*splitter, error) {
	s := &splitter{devs: map[uint32]*traceDev{}, ncpu: ncpu, other: map[string]uint64{}, seenPID: map[uint32]bool{}}
	for i := range devs {
		d := devs[i]
		d.announced = map[uint32]bool{}
		d.counts = devCounts{byCgroup: map[uint64]map[string]int64{}, actions: map[string]int64{},
			completions: map[string]int64{}, queuedByPID: map[uint32]int64{}}
		for c := 0; c < ncpu; c++ {
			if _, err := d.file(dir, c); err != nil {
				s.close()
				return nil, err
			}
		}
		dd := d
		s.devs[d.devt] = &dd
		s.order = append(s.order, &dd)
	}
	return s, nil
}

// file returns CPU c's file, creating it (and any lower missing ones:
// blkparse stops at the first missing index).
func (d *traceDev) file(dir string, c int) (*cpuFile, error) {
	for len(d.files) <= c {
		i := len(d.files)
		p := filepath.Join(dir, d.name+".blktrace."+strconv.Itoa(i))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		d.files = append(d.files, &cpuFile{path: p, f: f, w: bufio.NewWriterSize(f, 256<<10)})
	}
	return d.files[c], nil
}

// Write takes the next bytes of the stream.
func (s *splitter) Write(p []byte) (int, error) {
	s.streamBytes += int64(len(p))
	s.buf = append(s.buf, p...)
	off, err := s.parse(s.buf, false)
	n := copy(s.buf, s.buf[off:])
	s.buf = s.buf[:n]
	return len(p), err
}

// finish parses what is left at the end of the stream.
func (s *splitter) finish() error {
	off, err := s.parse(s.buf, true)
	if off < len(s.buf) {
		s.junk += int64(len(s.buf) - off)
	}
	s.buf = s.buf[:0]
	return err
}

var lostPrefix = []byte("CPU:")

// parse consumes whole records from b and returns how far it got.
func (s *splitter) parse(b []byte, final bool) (int, error) {
	le := binary.LittleEndian
	p := 0
	for p < len(b) {
		if bytes.HasPrefix(b[p:], lostPrefix) || (len(b)-p < len(lostPrefix) && bytes.HasPrefix(lostPrefix, b[p:]) && !final) {
			nl := bytes.IndexByte(b[p:min(len(b), p+80)], '\n')
			if nl < 0 {
				if len(b)-p < 80 && !final {
					return p, nil // wait for the rest of the line
				}
			} else if n, ok := parseLost(b[p : p+nl+1]); ok {
				s.lostMarkers++
				s.lostEvents += n
				p += nl + 1
				continue
			}
		}
		if len(b)-p < hdrLen+bitLen {
			return p, nil
		}
		r := b[p+hdrLen:]
		if le.Uint32(r) != magicV7 {
			i := bytes.Index(b[p+1:], []byte{0x07, 0x74, 0x61, 0x65})
			j := bytes.Index(b[p+1:], lostPrefix)
			next := -1
			if i >= 0 && i+1 >= hdrLen {
				next = p + 1 + i - hdrLen
			}
			if j >= 0 && (next < 0 || p+1+j < next) {
				next = p + 1 + j
			}
			if next < 0 {
				keep := max(p, len(b)-(hdrLen+4))
				s.junk += int64(keep - p)
				return keep, nil
			}
			s.junk += int64(next - p)
			s.resyncs++
			p = next
			continue
		}
		pduLen := int(le.Uint16(r[46:]))
		if len(b)-p < hdrLen+bitLen+pduLen {
			return p, nil
		}
		rec := b[p+hdrLen : p+hdrLen+bitLen+pduLen]
		hpid, hcpu, hts := le.Uint32(b[p:]), le.Uint32(b[p+4:]), le.Uint64(b[p+8:])
		if err := s.record(rec, hpid, hcpu, hts); err != nil {
			return p, err
		}
		p += hdrLen + bitLen + pduLen
	}
	return p, nil
}

// parseLost reads "CPU:%d [LOST %lu EVENTS]\n" (the count may be absent).
func parseLost(line []byte) (int64, bool) {
	var cpu int
	var n int64
	if c, _ := fmt.Sscanf(string(line), "CPU:%d [LOST %d EVENTS]\n", &cpu, &n); c == 2 {
		return n, true
	}
	if c, _ := fmt.Sscanf(string(line), "CPU:%d [LOST EVENTS]\n", &cpu); c == 1 {
		return 0, true
	}
	return 0, false
}

// record handles one struct blk_io_trace with its pdu.
func (s *splitter) record(rec []byte, hpid, hcpu uint32, hts uint64) error {
	le := binary.LittleEndian
	s.records++
	t := le.Uint64(rec[8:])
	action := le.Uint32(rec[28:])
	pid := le.Uint32(rec[32:])
	devt := le.Uint32(rec[36:])
	cpu := le.Uint32(rec[40:])
	nbytes := le.Uint32(rec[24:])
	if hpid != pid || hcpu != cpu || hts != t {
		s.hdrMismatch++
	}
	d := s.devs[devt]
	if d == nil {
		s.other[fmt.Sprintf("%d:%d", devt>>20, devt&0xfffff)]++
		return nil
	}
	if s.firstT == 0 || t < s.firstT {
		s.firstT = t
	}
	s.lastT = max(s.lastT, t)
	if !s.seenPID[pid] {
		s.seenPID[pid] = true
		if s.newPID != nil {
			s.newPID(pid)
		}
	}
	d.counts.records++
	isNote := action&notify != 0
	pdu := rec[bitLen:]
	if !isNote {
		s.count(d, action, nbytes, pid, pdu)
	}
	if s.full {
		s.notWritten++
		return nil
	}
	f, err := d.file(filepath.Dir(d.files[0].path), int(cpu))
	if err != nil {
		return err
	}
	if !d.stamped {
		d.stamped = true
		rt := int64(t) + s.rtOffset
		var pb [8]byte
		le.PutUint32(pb[:], uint32(rt/1e9))
		le.PutUint32(pb[4:], uint32(rt%1e9))
		if err := s.emit(f, synth(tnStamp, t, 0, devt, cpu, pb[:]), true); err != nil {
			return err
		}
	}
	if !isNote && !d.announced[pid] {
		d.announced[pid] = true
		comm := "<...>"
		if s.comm != nil {
			comm = s.comm(pid)
		}
		var cb [16]byte
		copy(cb[:15], comm)
		if err := s.emit(f, synth(tnProc, t, pid, devt, cpu, cb[:]), true); err != nil {
			return err
		}
	}
	out := rec
	if isNote {
		// the ftrace path leaves sector, bytes and error uninitialised in notes
		out = append([]byte(nil), rec...)
		clear(out[16:28])
		clear(out[44:46])
	}
	if s.noCgroup && action&cgFlag != 0 && len(pdu) >= 8 {
		o := make([]byte, 0, len(rec)-8)
		o = append(o, rec[:bitLen]...)
		o = append(o, pdu[8:]...)
		if isNote {
			clear(o[16:28])
			clear(o[44:46])
		}
		le.PutUint32(o[28:], action&^cgFlag)
		le.PutUint16(o[46:], uint16(len(pdu)-8))
		out = o
	}
	return s.emit(f, out, isNote)
}

// synth builds a note record.
func synth(action uint32, t uint64, pid, devt, cpu uint32, pdu []byte) []byte {
	le := binary.LittleEndian
	r := make([]byte, bitLen+len(pdu))
	le.PutUint32(r, magicV7)
	le.PutUint64(r[8:], t)
	le.PutUint32(r[28:], action)
	le.PutUint32(r[32:], pid)
	le.PutUint32(r[36:], devt)
	le.PutUint32(r[40:], cpu)
	le.PutUint16(r[46:], uint16(len(pdu)))
	copy(r[bitLen:], pdu)
	return r
}

// emit writes one record to f with its sequence number. rec may be the
// stream's own bytes: the sequence field is written separately.
func (s *splitter) emit(f *cpuFile, rec []byte, note bool) error {
	var seq [4]byte
	if !note {
		f.seq++
		binary.LittleEndian.PutUint32(seq[:], f.seq)
	}
	t := binary.LittleEndian.Uint64(rec[8:])
	if t < f.last {
		s.devs[binary.LittleEndian.Uint32(rec[36:])].counts.reordered++
	}
	f.last = max(f.last, t)
	n := int64(len(rec))
	if s.maxBytes > 0 && s.written+n > s.maxBytes {
		s.full = true
		s.notWritten++
		return nil
	}
	if _, err := f.w.Write(rec[:4]); err != nil {
		return err
	}
	if _, err := f.w.Write(seq[:]); err != nil {
		return err
	}
	if _, err := f.w.Write(rec[8:]); err != nil {
		return err
	}
	s.written += n
	f.bytes += n
	return nil
}

// count adds an I/O event to the device's counts.
func (s *splitter) count(d *traceDev, action, nbytes, pid uint32, pdu []byte) {
	a := actionLetter[action&0xff]
	if a == "" {
		a = "act" + strconv.Itoa(int(action&0xff))
	}
	c := &d.counts
	c.actions[a]++
	cg := uint64(0) // 0: the event carries no cgroup id
	if action&cgFlag != 0 && len(pdu) >= 8 {
		cg = binary.LittleEndian.Uint64(pdu)
	}
	m := c.byCgroup[cg]
	if m == nil {
		m = map[string]int64{}
		c.byCgroup[cg] = m
	}
	m[a]++
	cat := action >> 16
	switch a {
	case "C":
		kind := "flush"
		switch {
		case cat&catDisc != 0:
			kind = "discard"
		case cat&catWrite != 0:
			kind = "write"
		case nbytes > 0:
			kind = "read"
		}
		c.completions[kind]++
	case "Q":
		c.queuedByPID[pid]++
		if cat&catWrite != 0 && cat&(catFlush|catFUA) != 0 && nbytes > 0 {
			c.flushSeqData++
		}
	}
}

// flush writes buffered records to the files.
func (s *splitter) flush() error {
	for _, d := range s.order {
		for _, f := range d.files {
			if err := f.w.Flush(); err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
		}
	}
	return nil
}

// close flushes and closes every file; the first error is returned.
func (s *splitter) close() error {
	var first error
	for _, d := range s.order {
		for _, f := range d.files {
			if err := f.w.Flush(); err != nil && first == nil {
				first = fmt.Errorf("%s: %w", f.path, err)
			}
			if err := f.f.Close(); err != nil && first == nil {
				first = fmt.Errorf("%s: %w", f.path, err)
			}
		}
	}
	return first
}

// trimTorn cuts each file after its last whole record: a write error (a
// full disk) can leave half a record at the end, which readers take for a
// damaged trace. It returns the bytes cut.
func (s *splitter) trimTorn() (int64, error) {
	var cut int64
	for _, d := range s.order {
		for _, f := range d.files {
			n, err := trimFile(f.path)
			if err != nil {
				return cut, err
			}
			cut += n
		}
	}
	return cut, nil
}

func trimFile(path string) (int64, error) {
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(fh, 1<<20)
	var off int64
	var hdr [bitLen]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		if binary.LittleEndian.Uint32(hdr[:]) != magicV7 {
			break
		}
		n := int64(binary.LittleEndian.Uint16(hdr[46:]))
		if _, err := r.Discard(int(n)); err != nil {
			break
		}
		off += bitLen + n
	}
	if off == fi.Size() {
		return 0, nil
	}
	return fi.Size() - off, fh.Truncate(off)
}
