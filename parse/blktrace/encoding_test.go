package blktrace

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/trace"
)

// swapV7 rewrites a little-endian v7 stream in big-endian order the way a
// big-endian host would have written it: the 11 header fields, the cgroup
// id and the TIMESTAMP payload are swapped; the unplug, split and remap
// payloads are big-endian already and stay.
func swapV7(tb testing.TB, le []byte) []byte {
	out := make([]byte, 0, len(le))
	for off := 0; off < len(le); {
		h := le[off:]
		if len(h) < 48 {
			tb.Fatalf("truncated at %d", off)
		}
		L := binary.LittleEndian
		B := binary.BigEndian
		var r [48]byte
		B.PutUint32(r[0:], L.Uint32(h[0:]))
		B.PutUint32(r[4:], L.Uint32(h[4:]))
		B.PutUint64(r[8:], L.Uint64(h[8:]))
		B.PutUint64(r[16:], L.Uint64(h[16:]))
		for i := 24; i < 44; i += 4 {
			B.PutUint32(r[i:], L.Uint32(h[i:]))
		}
		B.PutUint16(r[44:], L.Uint16(h[44:]))
		B.PutUint16(r[46:], L.Uint16(h[46:]))
		action := L.Uint32(h[28:])
		pdu := bytes.Clone(h[48 : 48+int(L.Uint16(h[46:]))])
		p := pdu
		if action&actCgroup != 0 {
			B.PutUint64(p, L.Uint64(p))
			p = p[8:]
		}
		if action>>16&uint32(trace.CatNotify) != 0 && action&0xff == tnTimestamp {
			B.PutUint32(p, L.Uint32(p))
			B.PutUint32(p[4:], L.Uint32(p[4:]))
		}
		out = append(out, r[:]...)
		out = append(out, pdu...)
		off += 48 + len(pdu)
	}
	return out
}

func readStream(tb testing.TB, b []byte, name string) ([]trace.Event, *Reader) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(b), name)
	if err != nil {
		tb.Fatal(err)
	}
	return readAll(tb, r), r
}

// TestByteOrderAndVersions reads each fixture CPU file as stored, byte-swapped
// to big-endian, and re-encoded as v8 records in both orders, and expects the
// same events every time.
func TestByteOrderAndVersions(t *testing.T) {
	for _, fx := range fixtureNames {
		for _, cpu := range []string{"0", "1"} {
			t.Run(fx+"/"+cpu, func(t *testing.T) {
				raw := zstdFile(t, fixtureFile(t, fx, ".blktrace."+cpu+".zst"))
				want, r := readStream(t, raw, "le")
				if len(want) == 0 {
					t.Fatal("no events")
				}
				if src := r.Meta().Source; src != "blktrace" {
					t.Errorf("source %q", src)
				}
				origin := r.Meta().Origin
				be := swapV7(t, raw)
				if bytes.Equal(be, raw) {
					t.Fatal("swap did nothing")
				}
				if got, _ := readStream(t, be, "be"); !reflect.DeepEqual(got, want) {
					t.Errorf("big-endian: events differ")
				}
				// The generator round-trips the original too.
				if enc := encodeAll(want, encOpts{origin: origin}); !bytes.Equal(stripNotifyGarbage(t, raw), enc) {
					t.Errorf("re-encoding the v7 stream differs from the original")
				}
				for _, bigEndian := range []bool{false, true} {
					v8 := encodeAll(want, encOpts{v8: true, be: bigEndian, origin: origin})
					got, r8 := readStream(t, v8, "v8")
					if !reflect.DeepEqual(got, want) {
						t.Errorf("v8 be=%v: events differ", bigEndian)
					}
					if r8.Meta().Origin != origin {
						t.Errorf("v8 origin %d, want %d", r8.Meta().Origin, origin)
					}
				}
			})
		}
	}
}

// stripNotifyGarbage zeroes the sequence, sector, bytes and error fields of
// the notify records of a v7 LE stream (the reader ignores them).
func stripNotifyGarbage(tb testing.TB, le []byte) []byte {
	out := bytes.Clone(le)
	for off := 0; off+48 <= len(out); {
		h := out[off:]
		if binary.LittleEndian.Uint32(h[28:])>>16&uint32(trace.CatNotify) != 0 {
			copy(h[4:8], make([]byte, 4))
			copy(h[16:28], make([]byte, 12))
			copy(h[44:46], make([]byte, 2))
		}
		off += 48 + int(binary.LittleEndian.Uint16(h[46:]))
	}
	return out
}

// TestV8Extensions checks what only v8 records carry: 64-bit actions with
// categories above bit 31, and the zone plug/unplug actions.
func TestV8Extensions(t *testing.T) {
	evs := []trace.Event{
		{Time: 0, Seq: 1, CPU: 2, Dev: trace.MkDev(259, 1), Action: trace.ActionQueue, Cat: trace.CatWrite | trace.CatQueue | 1<<16, Sector: 4096, Bytes: 65536, PID: 77, Cgroup: 0x1_0000_0042},
		{Time: 10, Seq: 2, CPU: 2, Dev: trace.MkDev(259, 1), Action: trace.ActionZonePlug, Cat: trace.CatWrite | trace.CatQueue, Sector: 4096, Bytes: 65536, PID: 77},
		{Time: 20, Seq: 3, CPU: 2, Dev: trace.MkDev(259, 1), Action: trace.ActionZoneUnplug, Cat: trace.CatWrite | trace.CatQueue, PID: 77, Depth: 3},
		{Time: 30, Seq: 4, CPU: 2, Dev: trace.MkDev(259, 1), Action: trace.ActionComplete, Cat: trace.CatWrite | trace.CatComplete | 1<<17, Sector: 4096, Bytes: 65536, Error: -5},
		{Time: 40, CPU: 2, Dev: trace.MkDev(259, 1), Action: trace.ActionMessage, Cat: trace.CatNotify, PID: 77, Cgroup: 1, Text: "zone 3 unplugged"},
	}
	for _, be := range []bool{false, true} {
		got, _ := readStream(t, encodeAll(evs, encOpts{v8: true, be: be, origin: 5e9}), "gen-v8")
		if !reflect.DeepEqual(got, evs) {
			t.Errorf("be=%v:\n got %+v\nwant %+v", be, got, evs)
		}
	}
}

// TestFtraceBin wraps a fixture's events the way the ftrace blk tracer's
// bin output does (16-byte header, sequence 0, no PROCESS/TIMESTAMP notes,
// garbage in message records) and reads them back.
func TestFtraceBin(t *testing.T) {
	fx := fixtureNames[0]
	all, in := openAll(t, fixtureFile(t, fx, ".blktrace.1.zst"))
	origin := in.Meta().Origin
	var want []trace.Event
	for _, ev := range all {
		if ev.Action == trace.ActionProcess || ev.Action == trace.ActionTimestamp {
			continue
		}
		ev.Seq, ev.Comm = 0, ""
		want = append(want, ev)
	}
	stream := encodeAll(want, encOpts{ftrace: true, noSeq: true, garbage: true, origin: origin})
	got, r := readStream(t, stream, "trace_pipe.bin")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events differ")
	}
	if m := r.Meta(); m.Source != "ftrace-bin" || m.Origin != origin {
		t.Errorf("meta %+v", m)
	}
	if r.Dropped() != 0 {
		t.Errorf("dropped %d in a stream without sequence numbers", r.Dropped())
	}
	// The same stream zstd-compressed, through Open.
	var zb bytes.Buffer
	zw, _ := zstd.NewWriter(&zb)
	zw.Write(stream)
	zw.Close()
	p := filepath.Join(t.TempDir(), "trace_pipe.bin.zst")
	if err := os.WriteFile(p, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got2, in2 := openAll(t, p)
	if d := in2.Diagnostics(); d.Format != "ftrace-bin+zstd" || !reflect.DeepEqual(got2, want) {
		t.Errorf("via Open: format %q, events equal %v", d.Format, reflect.DeepEqual(got2, want))
	}
	// A 6.19-style mis-synthesized record: header and record disagree.
	bad := bytes.Clone(stream)
	binary.LittleEndian.PutUint32(bad[16+32:], 0x12345) // record pid
	err := firstErr(bad)
	if fe := asFormatError(err); fe == nil || fe.Offset != 0 {
		t.Errorf("mis-synthesized record: got %v", err)
	}
}

// firstErr reads a binary stream to its end and returns the first error
// other than io.EOF.
func firstErr(b []byte) error {
	r, err := NewReader(bytes.NewReader(b), "x")
	if err != nil {
		return err
	}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ev.Validate(); err != nil {
			panic(err)
		}
	}
}

// TestSequenceGaps drops records from a fixture file and expects the reader
// to count exactly the I/O records removed.
func TestSequenceGaps(t *testing.T) {
	evs, in := openAll(t, fixtureFile(t, fixtureNames[2], ".blktrace.0.zst"))
	origin := in.Meta().Origin
	var kept []trace.Event
	removed := 0
	for i, ev := range evs {
		if i%97 == 50 && !ev.Action.IsNotify() {
			removed++
			continue
		}
		kept = append(kept, ev)
	}
	_, r := readStream(t, encodeAll(kept, encOpts{origin: origin}), "gaps")
	if r.Dropped() != uint64(removed) || removed == 0 {
		t.Errorf("dropped %d, removed %d", r.Dropped(), removed)
	}
}
