package record

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// fixtureStream returns the raw trace_pipe bytes of fixtures/fx-ftrace-bin.
func fixtureStream(t *testing.T) []byte {
	t.Helper()
	p := filepath.Join(shared.Fixture(t, "fx-ftrace-bin"), "fx-ftrace-bin.pipe.bin.zst")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := io.ReadAll(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func split(t *testing.T, stream []byte, chunk int, noCg bool, lost []byte) (*splitter, string) {
	t.Helper()
	dir := t.TempDir()
	// fixtures/fx-ftrace-bin/capture.txt: /dev/loop0 7:0, 2 CPUs
	sp, err := newSplitter(dir, []traceDev{{name: "loop0", devt: 7 << 20}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	sp.noCgroup = noCg
	sp.comm = func(pid uint32) string { return "p" }
	half := len(stream) / 2
	// cut at a record boundary for the lost marker: find one by parsing
	feed := stream
	if lost != nil {
		off := 0
		for off < half {
			off += hdrLen + bitLen + int(binary.LittleEndian.Uint16(stream[off+hdrLen+46:]))
		}
		feed = append(append(append([]byte(nil), stream[:off]...), lost...), stream[off:]...)
	}
	for i := 0; i < len(feed); i += chunk {
		if _, err := sp.Write(feed[i:min(len(feed), i+chunk)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.finish(); err != nil {
		t.Fatal(err)
	}
	if err := sp.close(); err != nil {
		t.Fatal(err)
	}
	return sp, filepath.Join(dir, "loop0")
}

// The fixture's counts (fixtures/README.md): Q G I D C P U 1,072 each, m
// 19,612, 27,116 records; every record of device 7:0.
func TestSplitterFixtureCounts(t *testing.T) {
	stream := fixtureStream(t)
	for _, chunk := range []int{4095, 1 << 20, 61} { // trace_pipe hands out at most a page per read
		sp, base := split(t, stream, chunk, false, nil)
		if sp.records != 27116 || sp.junk != 0 || sp.resyncs != 0 || sp.hdrMismatch != 0 {
			t.Fatalf("chunk %d: %d records, %d junk bytes, %d resyncs, %d header mismatches; want 27116, 0, 0, 0", chunk, sp.records, sp.junk, sp.resyncs, sp.hdrMismatch)
		}
		c := sp.order[0].counts
		for _, a := range []string{"Q", "G", "I", "D", "C", "P", "U"} {
			if c.actions[a] != 1072 {
				t.Errorf("chunk %d: %s = %d, want 1072", chunk, a, c.actions[a])
			}
		}
		// fio: 272 reads + 800 writes (fixtures/README.md)
		if c.completions["read"] != 272 || c.completions["write"] != 800 {
			t.Errorf("completions %v, want read 272 write 800", c.completions)
		}
		// cgroup fxcg id 61 did the reads; the root group the writes
		if c.byCgroup[61]["D"] != 272 || c.byCgroup[1]["D"] != 800 {
			t.Errorf("D by cgroup: 61 -> %d, 1 -> %d; want 272, 800", c.byCgroup[61]["D"], c.byCgroup[1]["D"])
		}
		// The written set reads back as blktrace per-CPU files: the same events,
		// plus the synthesized notes, sequence numbers without gaps.
		in, err := blktrace.Open(base)
		if err != nil {
			t.Fatal(err)
		}
		byAct := map[trace.Action]int{}
		for {
			ev, err := in.ReadEvent()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			byAct[ev.Action]++
			if ev.Action == trace.ActionComplete && ev.Comm == "" {
				t.Fatalf("event without comm: %+v", ev)
			}
		}
		in.Close()
		diag := in.Diagnostics()
		if byAct[trace.ActionQueue] != 1072 || byAct[trace.ActionMessage] != 19612 || diag.DroppedEvents != 0 || diag.CPUMismatch != 0 {
			t.Errorf("read back: Q %d, m %d, dropped %d, cpu mismatches %d; want 1072, 19612, 0, 0", byAct[trace.ActionQueue], byAct[trace.ActionMessage], diag.DroppedEvents, diag.CPUMismatch)
		}
		if byAct[trace.ActionTimestamp] != 1 {
			t.Errorf("%d TIMESTAMP notes, want 1", byAct[trace.ActionTimestamp])
		}
	}
}

// In-band loss markers are counted and skipped; the records around them
// are all kept.
func TestSplitterLostMarker(t *testing.T) {
	stream := fixtureStream(t)
	sp, _ := split(t, stream, 4095, false, []byte("CPU:1 [LOST 42 EVENTS]\n"))
	if sp.lostMarkers != 1 || sp.lostEvents != 42 || sp.records != 27116 || sp.junk != 0 {
		t.Fatalf("markers %d events %d records %d junk %d; want 1 42 27116 0", sp.lostMarkers, sp.lostEvents, sp.records, sp.junk)
	}
}

// --no-cgroup strips the flag and the 8-byte id from every record.
func TestSplitterNoCgroup(t *testing.T) {
	_, base := split(t, fixtureStream(t), 1<<16, true, nil)
	for _, cpu := range []string{"0", "1"} {
		b, err := os.ReadFile(base + ".blktrace." + cpu)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < len(b); {
			if binary.LittleEndian.Uint32(b[p:]) != magicV7 {
				t.Fatalf("cpu %s: bad magic at %d", cpu, p)
			}
			if a := binary.LittleEndian.Uint32(b[p+28:]); a&cgFlag != 0 {
				t.Fatalf("cpu %s: record at %d keeps the cgroup flag (action %#x)", cpu, p, a)
			}
			p += bitLen + int(binary.LittleEndian.Uint16(b[p+46:]))
		}
	}
}
