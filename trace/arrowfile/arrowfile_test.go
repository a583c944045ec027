package arrowfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracesched/tracesched/trace"
)

func arrowTestMeta() trace.Meta {
	return trace.Meta{
		Source: "blktrace", Kernel: "6.18.44", Devices: []trace.Dev{trace.MkDev(8, 0), trace.MkDev(259, 1)},
		Origin: 1234567890123, WallSec: 1732950000, WallNsec: 123456789,
		Cgroups: map[uint64]string{1181: "/sys/fs/cgroup/w100", 1201: "/sys/fs/cgroup/w900"},
		Extra:   map[string]string{"scheduler": "bfq", "slice_idle": "8ms"},
	}
}

func encodeEventsForTest(t testing.TB, evs []trace.Event, meta trace.Meta, opts ...Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewEventWriter(&buf, trace.Meta{Source: meta.Source}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	w.SetMeta(meta) // known only at the end, as for a streamed capture
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decodeEventsForTest(t testing.TB, data []byte, opts ...Option) ([]trace.Event, trace.Meta) {
	t.Helper()
	r, err := OpenEvents(bytes.NewReader(data), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []trace.Event
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("event %d: %v", len(out), err)
		}
		out = append(out, e)
	}
	return out, r.Meta()
}

func TestArrowEventsRoundTrip(t *testing.T) {
	evs := arrowGenEvents(5000, 1)
	seen := map[trace.Action]bool{}
	for _, e := range evs {
		seen[e.Action] = true
	}
	for a := trace.ActionQueue; a <= trace.ActionMessage; a++ {
		if (a <= trace.ActionZoneUnplug || a >= trace.ActionProcess) && !seen[a] {
			t.Fatalf("generator misses action %v", a)
		}
	}
	all := evs
	for _, rows := range []int{1, 777, 1 << 16} {
		evs := all
		if rows == 1 {
			evs = all[:60] // a batch per row costs a zstd encoder per row
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		meta := arrowTestMeta()
		data := encodeEventsForTest(t, evs, meta, WithAllocator(mem), WithBatchRows(rows))
		got, gotMeta := decodeEventsForTest(t, data, WithAllocator(mem))
		if len(got) != len(evs) {
			t.Fatalf("rows %d: read %d events, wrote %d", rows, len(got), len(evs))
		}
		for i := range evs {
			if !reflect.DeepEqual(got[i], evs[i]) {
				t.Fatalf("rows %d: event %d:\n got %+v\nwant %+v", rows, i, got[i], evs[i])
			}
		}
		if !reflect.DeepEqual(gotMeta, meta) {
			t.Fatalf("rows %d: meta\n got %+v\nwant %+v", rows, gotMeta, meta)
		}
		mem.AssertSize(t, 0)
		t.Logf("batch rows %d: %d events in %d bytes (%.2f bytes/event)", rows, len(evs), len(data), float64(len(data))/float64(len(evs)))
	}
}

func TestArrowEventsEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data := encodeEventsForTest(t, nil, trace.Meta{Source: "blktrace"}, WithAllocator(mem))
	got, meta := decodeEventsForTest(t, data, WithAllocator(mem))
	if len(got) != 0 || meta.Source != "blktrace" || meta.Cgroups != nil || meta.Extra != nil {
		t.Fatalf("got %d events, meta %+v", len(got), meta)
	}
}

func TestArrowEventsRejectsBadAction(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	w, _ := NewEventWriter(io.Discard, trace.Meta{}, WithAllocator(mem))
	if err := w.Write(&trace.Event{Action: 200}); err == nil {
		t.Fatal("action 200 accepted")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&trace.Event{Action: trace.ActionQueue}); err == nil {
		t.Fatal("write after close accepted")
	}
}

func TestArrowRequestsRoundTrip(t *testing.T) {
	all := arrowGenRequests(3000, 1)
	for _, rows := range []int{1, 1000, 1 << 16} {
		rqs := all
		if rows == 1 {
			rqs = all[:60]
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var buf bytes.Buffer
		w, err := NewRequestWriter(&buf, trace.Meta{}, WithAllocator(mem), WithBatchRows(rows), WithCompressConcurrency(2))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rqs {
			if err := w.Write(&rqs[i]); err != nil {
				t.Fatal(err)
			}
		}
		meta := arrowTestMeta()
		w.SetMeta(meta)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := OpenRequests(bytes.NewReader(buf.Bytes()), WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			q, err := r.ReadRequest()
			if err == io.EOF {
				if i != len(rqs) {
					t.Fatalf("read %d requests, wrote %d", i, len(rqs))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if q != rqs[i] {
				t.Fatalf("rows %d: request %d:\n got %+v\nwant %+v", rows, i, q, rqs[i])
			}
		}
		if !reflect.DeepEqual(r.Meta(), meta) {
			t.Fatalf("meta %+v", r.Meta())
		}
		r.Close()
		mem.AssertSize(t, 0)
		t.Logf("batch rows %d: %d requests in %d bytes (%.2f bytes/request)", rows, len(rqs), buf.Len(), float64(buf.Len())/float64(len(rqs)))
	}
}

// TestArrowStreamKind checks that an events file is not read as requests and
// vice versa.
func TestArrowStreamKind(t *testing.T) {
	data := encodeEventsForTest(t, arrowGenEvents(10, 1), trace.Meta{})
	if _, err := OpenRequests(bytes.NewReader(data)); err == nil {
		t.Fatal("events file opened as requests")
	}
	var buf bytes.Buffer
	w, _ := NewRequestWriter(&buf, trace.Meta{})
	w.Close()
	if _, err := OpenEvents(bytes.NewReader(buf.Bytes())); err == nil {
		t.Fatal("requests file opened as events")
	}
}

// TestArrowFileIsStandard reads our files with arrow-go's own IPC readers:
// the file reader sees the final Meta in the footer schema, every record
// batch and the dictionaries; the stream reader (after the
// 8-byte magic) sees the schema written at the start.
func TestArrowFileIsStandard(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	evs := arrowGenEvents(3000, 2)
	meta := arrowTestMeta()
	data := encodeEventsForTest(t, evs, meta, WithAllocator(mem), WithBatchRows(500))

	// arrow-go v15's FileReader.Close does not release the dictionaries it
	// read, so it gets its own unchecked allocator.
	fr, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	if v, _ := fr.Schema().Metadata().GetValue("tracesched.devices"); v != "8,0;259,1" {
		t.Fatalf("footer devices %q", v)
	}
	if v, _ := fr.Schema().Metadata().GetValue("tracesched.cgroups"); v != `{"1181":"/sys/fs/cgroup/w100","1201":"/sys/fs/cgroup/w900"}` {
		t.Fatalf("footer cgroups %q", v)
	}
	if fr.NumRecords() != 6 {
		t.Fatalf("%d record batches, want 6", fr.NumRecords())
	}
	rows := 0
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		comm := rec.Column(evComm).(*array.String)
		for j := 0; j < comm.Len(); j++ {
			want := evs[rows+j].Comm
			got := ""
			if comm.IsValid(j) {
				got = comm.Value(j)
			}
			if got != want {
				t.Fatalf("batch %d row %d comm %q, want %q", i, j, got, want)
			}
		}
		if a := rec.Column(evAction).(*array.Dictionary); a.Dictionary().(*array.String).Value(a.GetValueIndex(0)) != evs[rows].Action.Letter() {
			t.Fatalf("batch %d action", i)
		}
		rows += int(rec.NumRows())
	}
	if rows != len(evs) {
		t.Fatalf("%d rows", rows)
	}

	sr, err := ipc.NewReader(bytes.NewReader(data[8:]), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Release()
	if v, _ := sr.Schema().Metadata().GetValue("tracesched.devices"); v != "" {
		t.Fatalf("header devices %q, want the Meta given at creation", v)
	}
	rows = 0
	for sr.Next() {
		rows += int(sr.Record().NumRows())
	}
	if sr.Err() != nil || rows != len(evs) {
		t.Fatalf("stream reader: %d rows, %v", rows, sr.Err())
	}
}

// TestArrowMessageColumns checks the derived msg_* columns.
func TestArrowMessageColumns(t *testing.T) {
	evs := []trace.Event{
		{Action: trace.ActionMessage, Text: "bfq1234S insert_request"},
		{Action: trace.ActionMessage, Text: "bfqSHARED-A dispatch"},
		{Action: trace.ActionMessage, Text: "cfq77AN slice"},
		{Action: trace.ActionMessage, Text: "bfq schedule dispatch"},
		{Action: trace.ActionMessage, Text: "hello"},
		{Action: trace.ActionQueue},
	}
	data := encodeEventsForTest(t, evs, trace.Meta{})
	fr, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	rec, err := fr.Record(0)
	if err != nil {
		t.Fatal(err)
	}
	str := func(a arrow.Array, i int) string {
		if a.IsNull(i) {
			return "null"
		}
		return a.ValueStr(i)
	}
	var got []string
	for i := range evs {
		s := ""
		for _, c := range []int{evMsgSched, evMsgPID, evMsgSync, evMsgShared, evMsgNoIdle} {
			s += str(rec.Column(c), i) + " "
		}
		got = append(got, s)
	}
	want := []string{
		"bfq 1234 true false null ",
		"bfq -1 false true null ",
		"cfq 77 false false true ",
		"bfq null null null null ",
		"null null null null null ",
		"null null null null null ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("msg columns\n got %q\nwant %q", got, want)
	}
}

// TestArrowDecodeErrors checks that damaged files give errors, not panics.
func TestArrowDecodeErrors(t *testing.T) {
	data := encodeEventsForTest(t, arrowGenEvents(2000, 3), arrowTestMeta(), WithBatchRows(300))
	for _, cut := range []int{0, 7, 100, len(data) / 2, len(data) - 11, len(data) - 1} {
		if _, err := OpenEvents(bytes.NewReader(data[:cut])); err == nil {
			t.Errorf("file cut at %d opened", cut)
		}
	}
	// Flip bytes through the body: opening or reading must fail or succeed
	// without panicking.
	for off := 8; off < len(data); off += 509 {
		bad := bytes.Clone(data)
		bad[off] ^= 0x5a
		r, err := OpenEvents(bytes.NewReader(bad))
		if err != nil {
			continue
		}
		for {
			if _, err := r.ReadEvent(); err != nil {
				break
			}
		}
		r.Close()
	}
	_, err := OpenEvents(bytes.NewReader(bytes.Repeat([]byte("ARROW1"), 10)))
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("garbage: %v", err)
	}
}

// TestArrowConcurrentRoundTrip writes with batches compressed in the
// background (WithCompressConcurrency above 1), small batches so that the
// two buffer sets alternate many times and the growing dictionaries send
// many deltas, and reads everything back.
func TestArrowConcurrentRoundTrip(t *testing.T) {
	evs := arrowGenEvents(5000, 4)
	for _, conc := range []int{2, 3} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		meta := arrowTestMeta()
		data := encodeEventsForTest(t, evs, meta, WithAllocator(mem), WithBatchRows(97), WithCompressConcurrency(conc))
		got, gotMeta := decodeEventsForTest(t, data, WithAllocator(mem))
		if !reflect.DeepEqual(got, evs) {
			t.Fatalf("conc %d: events differ", conc)
		}
		if !reflect.DeepEqual(gotMeta, meta) {
			t.Fatalf("conc %d: meta %+v", conc, gotMeta)
		}
		// arrow-go's own file reader agrees on the row count.
		fr, err := ipc.NewFileReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for i := 0; i < fr.NumRecords(); i++ {
			rec, err := fr.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rows += int(rec.NumRows())
		}
		fr.Close()
		if rows != len(evs) {
			t.Fatalf("conc %d: arrow-go read %d rows", conc, rows)
		}
		mem.AssertSize(t, 0)
	}
}

// arrowFailWriter fails once more than n bytes have been written.
type arrowFailWriter struct{ n int }

var errArrowTestWrite = errors.New("disk full")

func (w *arrowFailWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errArrowTestWrite
	}
	w.n -= len(p)
	return len(p), nil
}

// TestArrowWriteFailure checks that an error of the underlying writer is
// returned, by Write or at the latest by Close, in both compression modes.
func TestArrowWriteFailure(t *testing.T) {
	evs := arrowGenEvents(3000, 5)
	for _, conc := range []int{1, 2} {
		for _, limit := range []int{0, 100, 5000, 20000} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w, err := NewEventWriter(&arrowFailWriter{n: limit}, trace.Meta{}, WithAllocator(mem), WithBatchRows(300), WithCompressConcurrency(conc))
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			for i := range evs {
				if werr = w.Write(&evs[i]); werr != nil {
					break
				}
			}
			cerr := w.Close()
			if !errors.Is(cerr, errArrowTestWrite) || (werr != nil && !errors.Is(werr, errArrowTestWrite)) {
				t.Fatalf("conc %d limit %d: Write %v, Close %v", conc, limit, werr, cerr)
			}
			mem.AssertSize(t, 0)
		}
	}
}

// footerDictionaries returns the number of dictionary batches a file's
// footer lists.
func footerDictionaries(t *testing.T, data []byte) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
	b := data[len(data)-10-n : len(data)-10]
	tab, ok := arrowFBRoot(b)
	if !ok {
		t.Fatal("malformed footer")
	}
	_, cnt, _, err := arrowFBVector(b, tab, 2, 24)
	if err != nil {
		t.Fatal(err)
	}
	return cnt
}

// TestArrowDictionariesOncePerFile checks what pyarrow's, Polars' and
// DuckDB's file readers need: each dictionary is written once (no delta
// or replacement batches), however many batches and distinct process
// names and cgroup paths the file holds. Events have two dictionary
// columns (action, msg_sched); requests none.
func TestArrowDictionariesOncePerFile(t *testing.T) {
	evs := arrowGenEvents(3000, 2)
	for i := range evs {
		evs[i].Comm = fmt.Sprintf("proc-%d", i) // a new value in every batch
		evs[i].CgroupPath = fmt.Sprintf("/cg/%d", i%700)
	}
	data := encodeEventsForTest(t, evs, arrowTestMeta(), WithBatchRows(500))
	if n := footerDictionaries(t, data); n != 2 {
		t.Fatalf("events file lists %d dictionary batches, want 2 (action, msg_sched)", n)
	}
	r, err := OpenEvents(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range evs {
		e, err := r.ReadEvent()
		if err != nil {
			t.Fatal(err)
		}
		if e.Comm != evs[i].Comm || e.CgroupPath != evs[i].CgroupPath {
			t.Fatalf("row %d: comm %q cgroup_path %q, want %q %q", i, e.Comm, e.CgroupPath, evs[i].Comm, evs[i].CgroupPath)
		}
	}
	var buf bytes.Buffer
	w, err := NewRequestWriter(&buf, arrowTestMeta(), WithBatchRows(8))
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range arrowGenRequests(40, 3) {
		q.Comm = fmt.Sprintf("proc-%d", i)
		if err := w.Write(&q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := footerDictionaries(t, buf.Bytes()); n != 0 {
		t.Fatalf("requests file lists %d dictionary batches, want 0", n)
	}
}
