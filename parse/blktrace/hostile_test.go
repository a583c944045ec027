package blktrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

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

// Issue 14 item 4: print_trace_line (kernel/trace/trace.c) writes
// "CPU:%d [LOST %lu EVENTS]\n" in-band before the next record when the
// ring buffer dropped events, in bin mode too; the reader stopped with
// "bad magic 0x544e4556". The lines are skipped and their counts reported
// as dropped events, and every record is still read.
func TestFtraceBinLostLines(t *testing.T) {
	b := zstdFile(t, fixtureFile(t, "fx-ftrace-bin", ".pipe.bin.zst"))
	rec := func(off int) int { return 16 + 48 + int(binary.LittleEndian.Uint16(b[off+16+46:])) }
	// After the 2nd record, and after the 5th (two lines in a row there).
	off2 := rec(0)
	off2 += rec(off2)
	off5 := off2
	for i := 0; i < 3; i++ {
		off5 += rec(off5)
	}
	var m []byte
	m = append(m, b[:off2]...)
	m = append(m, "CPU:0 [LOST 7 EVENTS]\n"...)
	m = append(m, b[off2:off5]...)
	m = append(m, "CPU:3 [LOST 12 EVENTS]\nCPU:1 [LOST 1 EVENTS]\n"...)
	m = append(m, b[off5:]...)
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.bin")
	lossy := filepath.Join(dir, "lossy.bin")
	os.WriteFile(orig, b, 0o644)
	os.WriteFile(lossy, m, 0o644)
	want, _ := openAll(t, orig)
	got, in := openAll(t, lossy)
	if len(got) != len(want) {
		t.Fatalf("%d events with loss lines, %d without", len(got), len(want))
	}
	if d := in.Diagnostics().DroppedEvents; d != 20 {
		t.Errorf("dropped events %d, want 7+12+1", d)
	}
	// A line that is not a loss line names its offset.
	bad := append(append(append([]byte{}, b[:off2]...), "CPU:0 [LOST many EVENTS]\n"...), b[off2:]...)
	os.WriteFile(lossy, bad, 0o644)
	in2, err := Open(lossy)
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close()
	for err == nil {
		_, err = in2.ReadEvent()
	}
	fe := asFormatError(err)
	if fe == nil || fe.Offset != int64(off2) || !strings.Contains(fe.Error(), "loss line") {
		t.Errorf("got %v, want a FormatError at offset %#x about the loss line", err, off2)
	}
}

// Issue 14 item 10: a NUL or an ESC in the first 512 bytes of a text
// capture made it read as binary, and a UTF-8 BOM was refused. Both now
// read as text: the BOM is skipped, a process name with an ESC is kept
// (printing sanitises it), and a line with a NUL that does not parse says
// where it is.
func TestTextWithStrayBytes(t *testing.T) {
	txt := zstdFile(t, fixtureFile(t, "fx-mqdl-rw-nocg", ".blkparse.txt.zst"))
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	want, _ := openAll(t, write("plain.txt", txt))

	got, _ := openAll(t, write("bom.txt", append([]byte{0xef, 0xbb, 0xbf}, txt...)))
	if len(got) != len(want) {
		t.Errorf("with a BOM: %d events, want %d", len(got), len(want))
	}
	r, err := NewTextReader(bytes.NewReader(append([]byte{0xef, 0xbb, 0xbf}, txt...)), "bom.txt")
	if err != nil {
		t.Fatalf("NewTextReader with a BOM: %v", err)
	}
	if ev, err := r.ReadEvent(); err != nil || ev.Action != want[0].Action || ev.Time != want[0].Time {
		t.Errorf("NewTextReader with a BOM: first event %v, %v; want %v", ev, err, want[0])
	}

	// An ESC inside the first line's process name: "[fio]" -> "[f\x1bio]".
	nl := bytes.IndexByte(txt, '\n')
	first := string(txt[:nl])
	i := strings.LastIndex(first, "[")
	if i < 0 {
		t.Fatalf("first line %q has no [comm]", first)
	}
	esc := append(append(append([]byte{}, txt[:i+2]...), 0x1b), txt[i+2:]...)
	got, _ = openAll(t, write("esc.txt", esc))
	if len(got) != len(want) {
		t.Errorf("with an ESC: %d events, want %d", len(got), len(want))
	}

	// A NUL in the middle of the 3rd line: text, and the line is refused at
	// its position.
	off := 0
	for k := 0; k < 2; k++ {
		off += bytes.IndexByte(txt[off:], '\n') + 1
	}
	nul := append(append(append([]byte{}, txt[:off+20]...), 0), txt[off+20:]...)
	in, err := Open(write("nul.txt", nul))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for err == nil {
		_, err = in.ReadEvent()
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 {
		t.Errorf("with a NUL on line 3: %v, want a SyntaxError on line 3 (text, not binary)", err)
	}
}

// zstdBytes compresses b.
func zstdBytes(tb testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// readErr reads path to its end and returns the error that ended it.
func readErr(tb testing.TB, path string) error {
	in, err := Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	for {
		if _, err := in.ReadEvent(); err != nil {
			return err
		}
	}
}

// Issue 14 item 6: a truncated .txt.zst printed "unexpected EOF" with no
// file; a valid zstd file with a window over the reader's limit printed
// "window size exceeded" with no hint. Both now name the file and where,
// and say what to do.
func TestCompressedReadErrorsSayWhere(t *testing.T) {
	dir := t.TempDir()
	txtz, err := os.ReadFile(fixtureFile(t, "fx-mqdl-rw-nocg", ".blkparse.txt.zst"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.txt.zst")
	os.WriteFile(cut, txtz[:len(txtz)/2], 0o644)
	err = readErr(t, cut)
	var se *SyntaxError
	if !errors.As(err, &se) || se.File != cut || se.Line < 2 || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated .txt.zst: %v, want a SyntaxError naming %s, its line, and truncation", err, cut)
	}

	binz, err := os.ReadFile(fixtureFile(t, "fx-mqdl-rw-nocg", ".blktrace.0.zst"))
	if err != nil {
		t.Fatal(err)
	}
	cutb := filepath.Join(dir, "cutb.blktrace.0.zst")
	os.WriteFile(cutb, binz[:len(binz)*2/3], 0o644)
	fe := asFormatError(readErr(t, cutb))
	if fe == nil || fe.File != cutb || fe.Offset == 0 || !errors.Is(fe, io.ErrUnexpectedEOF) {
		t.Errorf("truncated .blktrace.0.zst: %v, want a FormatError naming the file and an offset", fe)
	}

	// A 2 GiB window declared in the frame header (zstd --long=31).
	long := zstdBytes(t, zstdFile(t, fixtureFile(t, "fx-mqdl-rw-nocg", ".blkparse.txt.zst")))
	if long[4]&0x20 != 0 {
		t.Skip("single-segment frame: no window descriptor to set")
	}
	long[5] = 21 << 3 // windowLog 31
	lp := filepath.Join(dir, "long.txt.zst")
	os.WriteFile(lp, long, 0o644)
	err = readErr(t, lp)
	if !errors.As(err, &se) || se.File != lp || !errors.Is(err, zstd.ErrWindowSizeExceeded) || !strings.Contains(err.Error(), "--long=30") {
		t.Errorf("long-window zstd: %v, want the file, the limit and how to recompress", err)
	}
}
