package blktrace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/tracesched/tracesched/trace"
)

// TestOpenForms opens one fixture set by directory, by basename, by each of
// its files, and expects the same events.
func TestOpenForms(t *testing.T) {
	fx := fixtureNames[1]
	dir := fixtureFile(t, fx, "")
	dir = filepath.Dir(dir)
	want, _ := openAll(t, dir)
	for _, name := range []string{filepath.Join(dir, fx), filepath.Join(dir, fx+".blktrace.0.zst"), filepath.Join(dir, fx+".blktrace.1.zst")} {
		got, in := openAll(t, name)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: events differ from the directory's", name)
		}
		if d := in.Diagnostics(); len(d.Files) != 2 {
			t.Errorf("%s: files %v", name, d.Files)
		}
	}
	if _, err := Open(filepath.Join(dir, "nonexistent")); err == nil {
		t.Error("nonexistent input opened")
	}
}

// TestOpenGapsAndMismatch builds a set with files .0, .2 (a copy of the
// fixture's .1, whose records say cpu 1) and .3 (empty): .1 is missing.
func TestOpenGapsAndMismatch(t *testing.T) {
	fx := fixtureNames[0]
	tmp := t.TempDir()
	c0 := zstdFile(t, fixtureFile(t, fx, ".blktrace.0.zst"))
	c1 := zstdFile(t, fixtureFile(t, fx, ".blktrace.1.zst"))
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sdx.blktrace.0", c0)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(c1)
	zw.Close()
	write("sdx.blktrace.2.gz", gz.Bytes())
	write("sdx.blktrace.3", nil)
	write("other.txt", []byte("not part of the set"))

	evs, in := openAll(t, filepath.Join(tmp, "sdx.blktrace.3"))
	d := in.Diagnostics()
	r1evs, _ := readStream(t, c1, "c1")
	n1 := len(r1evs)
	if !slices.Equal(d.MissingCPUFiles, []int{1}) || len(d.Files) != 3 || d.CPUMismatch != uint64(n1) || d.Format != "blktrace+gzip" {
		t.Errorf("diagnostics %+v (file .2 holds %d records)", d, n1)
	}
	want, _ := openAll(t, fixtureFile(t, fx, ".blktrace.0.zst"))
	if !reflect.DeepEqual(evs, want) {
		t.Error("events differ from the fixture's")
	}
	// A directory with two sets is ambiguous.
	write("sdy.blktrace.0", c0)
	if _, err := Open(tmp); err == nil || !strings.Contains(err.Error(), "sdx, sdy") {
		t.Errorf("two sets: %v", err)
	}
}

// TestOpenDump writes a fixture as one combined, gzip-compressed stream with
// the notes first and absolute (blkparse -d style) and reads it back.
func TestOpenDump(t *testing.T) {
	fx := fixtureNames[0]
	evs, in := openAll(t, filepath.Dir(fixtureFile(t, fx, "")))
	origin := in.Meta().Origin
	var notes, rest []trace.Event
	for _, ev := range evs {
		if ev.Action == trace.ActionProcess || ev.Action == trace.ActionTimestamp {
			notes = append(notes, ev)
		} else {
			rest = append(rest, ev)
		}
	}
	// Notes keep their absolute times, everything else is rebased to 0.
	stream := encodeAll(notes, encOpts{origin: origin})
	stream = append(stream, encodeAll(rest, encOpts{})...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(stream)
	zw.Close()
	p := filepath.Join(t.TempDir(), "dump.bin.gz")
	os.WriteFile(p, gz.Bytes(), 0o644)
	got, din := openAll(t, p)
	if d := din.Diagnostics(); d.Format != "blkparse-dump+gzip" {
		t.Errorf("format %q", d.Format)
	}
	// The reader cannot know the dump's genesis: notes later than it are
	// clamped to the origin.
	want := slices.Clone(notes)
	for i := range want {
		want[i].Time = min(want[i].Time, 0)
	}
	want = append(want, rest...)
	// With every note at the front, comms are known earlier than in the
	// per-CPU merge (where a pid's note may follow its first events on
	// another CPU at the same time): compare the rest.
	for i := range got {
		got[i].Comm = ""
	}
	for i := range want {
		want[i].Comm = ""
	}
	if !reflect.DeepEqual(got, want) {
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	if m := din.Meta(); m.Origin != 0 || m.WallSec != in.Meta().WallSec {
		t.Errorf("meta %+v", m)
	}
}

type sliceReader struct{ evs []trace.Event }

func (s *sliceReader) ReadEvent() (trace.Event, error) {
	if len(s.evs) == 0 {
		return trace.Event{}, errEOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func TestMergeReader(t *testing.T) {
	mk := func(cpu uint32, times ...trace.Time) *sliceReader {
		r := &sliceReader{}
		for i, tm := range times {
			r.evs = append(r.evs, trace.Event{Time: tm, CPU: cpu, Seq: uint32(i + 1), Action: trace.ActionQueue})
		}
		return r
	}
	m := NewMergeReader(mk(0, 1, 5, 5, 9), mk(1), mk(2, 0, 5, 10), mk(3, 5))
	var got []string
	for _, ev := range readAll(t, m) {
		got = append(got, fmt.Sprintf("%d@%d.%d", ev.Time, ev.CPU, ev.Seq))
	}
	want := "0@2.1 1@0.1 5@0.2 5@0.3 5@2.2 5@3.1 9@0.4 10@2.3"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
