package blktrace

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

var fixtureNames = []string{"fx-bfq-2cg-w100-900", "fx-bfq-4seqread", "fx-mqdl-rw-nocg"}

// readAll reads r to io.EOF, checking every event with Validate.
func readAll(tb testing.TB, r trace.EventReader) []trace.Event {
	tb.Helper()
	var evs []trace.Event
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			tb.Fatalf("after %d events: %v", len(evs), err)
		}
		if err := ev.Validate(); err != nil {
			tb.Fatalf("event %d %+v: %v", len(evs), ev, err)
		}
		evs = append(evs, ev)
	}
}

// countActions counts events by blkparse letter, leaving out PROCESS and
// TIMESTAMP notes (blkparse prints neither).
func countActions(evs []trace.Event) map[string]int {
	m := map[string]int{}
	for _, ev := range evs {
		if ev.Action == trace.ActionProcess || ev.Action == trace.ActionTimestamp {
			continue
		}
		m[ev.Action.Letter()]++
	}
	return m
}

func openAll(tb testing.TB, name string) ([]trace.Event, *Input) {
	tb.Helper()
	in, err := Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close() })
	return readAll(tb, in), in
}

// zstdFile returns the decompressed contents of a .zst file.
func zstdFile(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func fixtureFile(tb testing.TB, fx, suffix string) string {
	return filepath.Join(shared.Fixture(tb, fx), fx+suffix)
}

// encOpts selects the binary encoding of encodeEvent.
type encOpts struct {
	be      bool
	v8      bool
	ftrace  bool  // 16-byte ftrace header before the record
	origin  int64 // added to Time
	noSeq   bool  // write sequence 0
	garbage bool  // fill notify sector/bytes/error with junk (kernels <= 6.18)
}

// encodeEvent appends the binary record of ev, the inverse of the decoder:
// it is the generator for big-endian, v8 and ftrace-bin tests.
func encodeEvent(b []byte, ev *trace.Event, o encOpts) []byte {
	var bo binary.AppendByteOrder = binary.LittleEndian
	if o.be {
		bo = binary.BigEndian
	}
	var pdu []byte
	flag := uint64(0)
	if ev.Cgroup != 0 {
		flag = actCgroup
		pdu = bo.AppendUint64(pdu, ev.Cgroup)
	}
	code := uint64(ev.Action)
	dev := uint32(ev.Dev)
	switch ev.Action {
	case trace.ActionProcess:
		code = tnProcess
		var c [16]byte
		copy(c[:], ev.Text)
		pdu = append(pdu, c[:]...)
	case trace.ActionTimestamp:
		code = tnTimestamp
		pdu = bo.AppendUint32(pdu, ev.WallSec)
		pdu = bo.AppendUint32(pdu, ev.WallNsec)
	case trace.ActionMessage:
		code = tnMessage
		pdu = append(pdu, ev.Text...)
	case trace.ActionUnplugIO, trace.ActionUnplugTimer, trace.ActionZoneUnplug:
		pdu = binary.BigEndian.AppendUint64(pdu, ev.Depth)
	case trace.ActionSplit:
		pdu = binary.BigEndian.AppendUint64(pdu, ev.SplitSector)
	case trace.ActionRemap:
		pdu = binary.BigEndian.AppendUint32(pdu, uint32(ev.FromDev))
		pdu = binary.BigEndian.AppendUint32(pdu, uint32(ev.Dev))
		pdu = binary.BigEndian.AppendUint64(pdu, ev.FromSector)
	}
	action := code | flag | uint64(ev.Cat&0xffff)<<16 | uint64(ev.Cat>>16)<<32
	t := uint64(int64(ev.Time) + o.origin)
	seq, sector, bytes, errno := ev.Seq, ev.Sector, ev.Bytes, uint16(ev.Error)
	if o.noSeq {
		seq = 0
	}
	if o.garbage && ev.Action.IsNotify() {
		seq, sector, bytes, errno = 0xdeadbeef, 0x6266712062667120, 0x31323334, 0x7777
	}
	if o.ftrace {
		b = bo.AppendUint32(b, ev.PID)
		b = bo.AppendUint32(b, ev.CPU)
		b = bo.AppendUint64(b, t)
	}
	version := uint32(7)
	if o.v8 {
		version = 8
	}
	b = bo.AppendUint32(b, magicBase|version)
	b = bo.AppendUint32(b, seq)
	b = bo.AppendUint64(b, t)
	b = bo.AppendUint64(b, sector)
	b = bo.AppendUint32(b, bytes)
	if o.v8 {
		b = bo.AppendUint32(b, ev.PID)
		b = bo.AppendUint64(b, action)
		b = bo.AppendUint32(b, dev)
		b = bo.AppendUint32(b, ev.CPU)
		b = bo.AppendUint16(b, errno)
		b = bo.AppendUint16(b, uint16(len(pdu)))
		b = append(b, make([]byte, 12)...)
	} else {
		b = bo.AppendUint32(b, uint32(action))
		b = bo.AppendUint32(b, ev.PID)
		b = bo.AppendUint32(b, dev)
		b = bo.AppendUint32(b, ev.CPU)
		b = bo.AppendUint16(b, errno)
		b = bo.AppendUint16(b, uint16(len(pdu)))
	}
	return append(b, pdu...)
}

func encodeAll(evs []trace.Event, o encOpts) []byte {
	var b []byte
	for i := range evs {
		b = encodeEvent(b, &evs[i], o)
	}
	return b
}

func asFormatError(err error) *FormatError {
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

var errEOF = io.EOF
