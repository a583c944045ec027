package blktrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

func sampleEvents() []trace.Event {
	d := trace.MkDev(8, 16)
	return []trace.Event{
		{Time: 0, Seq: 1, CPU: 0, Dev: d, Action: trace.ActionQueue, Cat: trace.CatRead | trace.CatQueue, Sector: 2048, Bytes: 4096, PID: 42, Cgroup: 0x49d},
		{Time: 1000, Seq: 2, CPU: 0, Dev: d, Action: trace.ActionGetRQ, Cat: trace.CatRead | trace.CatQueue, Sector: 2048, Bytes: 4096, PID: 42},
		{Time: 2000, CPU: 0, Dev: d, Action: trace.ActionMessage, Cat: trace.CatNotify, PID: 42, Cgroup: 1, Text: "bfq42S add_request 1"},
		{Time: 3000, Seq: 3, CPU: 0, Dev: d, Action: trace.ActionIssue, Cat: trace.CatRead | trace.CatIssue | trace.CatFS, Sector: 2048, Bytes: 4096, PID: 42},
	}
}

// recordOffsets returns the offset of each record of a v7 LE stream.
func recordOffsets(b []byte) []int {
	var offs []int
	for off := 0; off+48 <= len(b); off += 48 + int(binary.LittleEndian.Uint16(b[off+46:])) {
		offs = append(offs, off)
	}
	return offs
}

func TestBinaryErrors(t *testing.T) {
	good := encodeAll(sampleEvents(), encOpts{origin: 1e9})
	offs := recordOffsets(good)
	if len(offs) != 4 {
		t.Fatalf("offsets %v", offs)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name   string
		in     []byte
		offset int
		seq    uint32
		match  string
		trunc  bool
	}{
		{"truncated header", good[:offs[3]+20], offs[3], 2, `truncated record: 20 bytes left, record header needs 48`, true},
		{"truncated pdu", good[:offs[2]+50], offs[2], 2, `truncated record: pdu_len 28, only 50 of 76 bytes left`, true},
		{"bad magic mid-file", mod(func(b []byte) []byte { copy(b[offs[2]:], []byte{0, 0, 0, 0}); return b }), offs[2], 2, `bad magic 0x00000000`, false},
		{"version change", mod(func(b []byte) []byte { b[offs[1]] = 8; return b }), offs[1], 1, `unsupported blktrace version 0x08 \(stream started with 0x07\)`, false},
		{"short cgroup pdu", mod(func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[offs[0]+46:], 4)
			return append(b[:offs[0]+52], good[offs[1]:]...)
		}), 0, 0, `cgroup flag set but pdu_len is 4`, false},
		{"unsupported version", mod(func(b []byte) []byte { b[0] = 6; return b }), 0, 0, `unsupported blktrace version 0x06`, false},
		{"garbage", []byte("this is not a trace at all, it is text........................................."), 0, 0, `bad magic 0x73696874`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := firstErr(tc.in)
			fe := asFormatError(err)
			if fe == nil {
				t.Fatalf("got %v, want a *FormatError", err)
			}
			if fe.Offset != int64(tc.offset) || fe.Seq != tc.seq || fe.File != "x" {
				t.Errorf("got offset %#x seq %d, want %#x seq %d (%v)", fe.Offset, fe.Seq, tc.offset, tc.seq, err)
			}
			if !regexp.MustCompile(tc.match).MatchString(err.Error()) {
				t.Errorf("error %q does not match %q", err, tc.match)
			}
			if errors.Is(err, ErrTruncated) != tc.trunc {
				t.Errorf("errors.Is(ErrTruncated) = %v", !tc.trunc)
			}
		})
	}
	// The documented rendering.
	e := &FormatError{File: "sda.blktrace.3", Offset: 0x1a2b0, Seq: 4812, Err: errBadMagic(0)}
	if e.Error() != "sda.blktrace.3: offset 0x1a2b0 (seq 4812): bad magic 0x00000000" {
		t.Errorf("FormatError renders %q", e.Error())
	}
}

func TestTextErrors(t *testing.T) {
	const ok = "  8,16   0        1     0.000000000  1234  Q  WS 2056 + 8 [fio]\n"
	tests := []struct {
		name, in, want string
	}{
		{"unknown action", ok + "  8,16   0        2     0.000001000  1234  Z  WS 2056 + 8 [fio]\n", `run1.txt:2:44: unknown action "Z"`},
		{"bad time", "  8,16   0        2     0.0000x1000  1234  Q  WS 2056 + 8 [fio]\n", `run1.txt:1:25: bad time "0.0000x1000"`},
		{"bad rwbs", ok + ok + "  8,16   0        2     0.000001000  1234  Q  QQ 2056 + 8 [fio]\n", `run1.txt:3:47: bad rwbs "QQ"`},
		{"bad sector", ok + "  8,16   0        2     0.000001000  1234  D  WS 20x6 + 8 [fio]\n", `run1.txt:2:50: bad sector "20x6"`},
		{"bad count", ok + "  8,16   0        2     0.000001000  1234  D  WS 2056 + x [fio]\n", `run1.txt:2:57: bad sector count "x"`},
		{"garbage", ok + "\n  hello world\n", `run1.txt:3:3: unrecognized line "hello world"`},
		{"bad device", "  8,1x6   0        1     0.000000000  1234  Q  WS 2056 + 8 [fio]\n", `run1.txt:1:3: unrecognized line`},
		{"bad error", ok + "  8,16   1        1     0.000059000     0  C  WS 2040 + 24 [x]\n", `run1.txt:2:61: bad error "x"`},
		{"long line", ok + strings.Repeat("x", maxLine+10) + "\n", `run1.txt:2:1: line longer than`},
		{"bad ftrace dev", "# tracer: blk\n  fio-1234 [001] d..1. 12.000001: 8,x Q R 1 + 8 [fio]\n", `run1.txt:2:35: bad device "8,x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewTextReader(strings.NewReader(tc.in), "run1.txt")
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := tr.ReadEvent()
				if err == nil {
					if err := ev.Validate(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("got %v, want a *SyntaxError", err)
				}
				if !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("got  %q\nwant %q", err, tc.want)
				}
				return
			}
		})
	}
	if _, err := NewTextReader(bytes.NewReader([]byte{7, 't', 'a', 'e', 0, 0}), "b"); err == nil {
		t.Error("binary input accepted as text")
	}
}
