package blktrace

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// lastRecord returns the offset of the last v7 little-endian record of b
// whose action code is code.
func lastRecord(tb testing.TB, b []byte, code uint8) int {
	tb.Helper()
	last := -1
	for off := 0; off+48 <= len(b); off += 48 + int(binary.LittleEndian.Uint16(b[off+46:])) {
		if uint8(binary.LittleEndian.Uint32(b[off+28:])) == code {
			last = off
		}
	}
	if last < 0 {
		tb.Fatalf("no record with action %d", code)
	}
	return last
}

// Issue 14 item 2: bit 62 of the time of the last C record of
// fx-mqdl-rw-nocg.blktrace.1 flipped makes a capture 146 years long; the
// reader refuses that record, naming the file and its offset.
func TestBitFlippedTimeRefused(t *testing.T) {
	b := zstdFile(t, fixtureFile(t, "fx-mqdl-rw-nocg", ".blktrace.1.zst"))
	off := lastRecord(t, b, 8) // __BLK_TA_COMPLETE
	tm := binary.LittleEndian.Uint64(b[off+8:])
	binary.LittleEndian.PutUint64(b[off+8:], tm^1<<62)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "fx.blktrace.0"), zstdFile(t, fixtureFile(t, "fx-mqdl-rw-nocg", ".blktrace.0.zst")), 0o644)
	os.WriteFile(filepath.Join(dir, "fx.blktrace.1"), b, 0o644)
	in, err := Open(filepath.Join(dir, "fx"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	n := 0
	for {
		var ev trace.Event
		ev, err = in.ReadEvent()
		if err != nil {
			break
		}
		if ev.Time > trace.MaxSpan {
			t.Fatalf("event at %v returned", ev.Time)
		}
		n++
	}
	fe := asFormatError(err)
	if fe == nil {
		t.Fatalf("got %v (%d events), want a *FormatError", err, n)
	}
	if fe.Offset != int64(off) || !strings.HasSuffix(fe.File, "fx.blktrace.1") || !strings.Contains(fe.Error(), "physical bound") {
		t.Errorf("got %q (offset %#x), want fx.blktrace.1 at offset %#x beyond the physical bound", fe, fe.Offset, off)
	}
	// Every event before it came out: 8405 events in the capture, the
	// flipped C sorts last.
	if n != 8404 {
		t.Errorf("%d events before the error, want 8404", n)
	}
	// The same flip one bit lower (bit 50, 13 days) is within the bound and read.
	binary.LittleEndian.PutUint64(b[off+8:], tm^1<<50)
	os.WriteFile(filepath.Join(dir, "fx.blktrace.1"), b, 0o644)
	in2, err := Open(filepath.Join(dir, "fx"))
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close()
	for {
		if _, err = in2.ReadEvent(); err != nil {
			break
		}
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("bit 50 flipped: %v, want io.EOF", err)
	}
}

// A text line with a time beyond the bound is refused at its line.
func TestTextTimeBeyondBound(t *testing.T) {
	txt := "  8,0    0        1     0.000000000   100  Q   R 0 + 8 [fio]\n" +
		"  8,0    0        2 4611686018.427387904   100  C   R 0 + 8 [0]\n"
	r, err := NewTextReader(strings.NewReader(txt), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err = r.ReadEvent(); err != nil {
			break
		}
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.File != "t.txt" {
		t.Fatalf("got %v, want a SyntaxError at t.txt:2", err)
	}
}
