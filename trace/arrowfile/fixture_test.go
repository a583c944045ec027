package arrowfile_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
)

// readFixture reads every event of a repository fixture with blktrace.Open.
func readFixture(t *testing.T, name string) ([]trace.Event, trace.Meta, int64) {
	t.Helper()
	dir := shared.Fixture(t, name)
	in, err := blktrace.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var evs []trace.Event
	for {
		e, err := in.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	// Raw capture size: the per-CPU blktrace files, decompressed.
	var raw int64
	files, _ := filepath.Glob(filepath.Join(dir, name+".blktrace.*.zst"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := zstd.NewReader(nil)
		out, err := d.DecodeAll(b, nil)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		raw += int64(len(out))
	}
	return evs, in.Meta(), raw
}

// TestArrowFixtureRoundTrip encodes a real capture and its rebuilt requests
// and checks that decoding gives them back unchanged, with the Meta known
// only at the end of the input.
func TestArrowFixtureRoundTrip(t *testing.T) {
	const name = "fx-bfq-2cg-w100-900"
	evs, meta, raw := readFixture(t, name)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	var buf bytes.Buffer
	w, err := arrowfile.NewEventWriter(&buf, trace.Meta{Source: meta.Source}, arrowfile.WithAllocator(mem), arrowfile.WithBatchRows(4096))
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.SetMeta(meta)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	eventBytes := buf.Len()
	r, err := arrowfile.OpenEvents(bytes.NewReader(buf.Bytes()), arrowfile.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		e, err := r.ReadEvent()
		if err == io.EOF {
			if i != len(evs) {
				t.Fatalf("read %d events, wrote %d", i, len(evs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e != evs[i] {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, evs[i])
		}
	}
	if !reflect.DeepEqual(r.Meta(), meta) {
		t.Fatalf("meta\n got %+v\nwant %+v", r.Meta(), meta)
	}
	r.Close()

	// Requests rebuilt from the capture.
	var rqs []trace.Request
	rb := trace.NewRebuilder(func(q *trace.Request) { rqs = append(rqs, *q) }, nil)
	for i := range evs {
		rb.Add(&evs[i])
	}
	rb.Close()
	buf.Reset()
	rw, err := arrowfile.NewRequestWriter(&buf, meta, arrowfile.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rqs {
		if err := rw.Write(&rqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	rr, err := arrowfile.OpenRequests(bytes.NewReader(buf.Bytes()), arrowfile.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		q, err := rr.ReadRequest()
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
			t.Fatalf("request %d:\n got %+v\nwant %+v", i, q, rqs[i])
		}
	}
	rr.Close()
	t.Logf("%s: raw blktrace %d bytes for %d events (%.1f B/event); events file %d bytes (%.2f B/event); %d requests in %d bytes (%.2f B/request, raw %.1f B/request)",
		name, raw, len(evs), float64(raw)/float64(len(evs)), eventBytes, float64(eventBytes)/float64(len(evs)),
		len(rqs), buf.Len(), float64(buf.Len())/float64(len(rqs)), float64(raw)/float64(len(rqs)))
}

// TestArrowWriteJSFiles writes events.arrow and requests.arrow from a fixture
// into $TRACESCHED_ARROWJS_OUT for bench/arrowjs/check.sh; it skips when the
// variable is unset.
func TestArrowWriteJSFiles(t *testing.T) {
	out := os.Getenv("TRACESCHED_ARROWJS_OUT")
	if out == "" {
		t.Skip("TRACESCHED_ARROWJS_OUT not set (see bench/arrowjs/check.sh)")
	}
	evs, meta, _ := readFixture(t, "fx-bfq-2cg-w100-900")
	ef, err := os.Create(filepath.Join(out, "events.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	w, _ := arrowfile.NewEventWriter(ef, trace.Meta{Source: meta.Source}, arrowfile.WithBatchRows(4096))
	var rqs []trace.Request
	rb := trace.NewRebuilder(func(q *trace.Request) { rqs = append(rqs, *q) }, nil)
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
		rb.Add(&evs[i])
	}
	rb.Close()
	w.SetMeta(meta)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rf, err := os.Create(filepath.Join(out, "requests.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	rw, _ := arrowfile.NewRequestWriter(rf, meta)
	for i := range rqs {
		if err := rw.Write(&rqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkEncodeCapture encodes the events of the blktrace capture named by
// $TRACESCHED_BENCH_CAPTURE (a path without the .blktrace.N suffix) and the
// requests rebuilt from them; it skips when the variable is unset. Metrics
// are per CPU-second as well as per wall-clock second.
func BenchmarkEncodeCapture(b *testing.B) {
	path := os.Getenv("TRACESCHED_BENCH_CAPTURE")
	if path == "" {
		b.Skip("TRACESCHED_BENCH_CAPTURE not set")
	}
	evs, rqs, meta := fixture.Capture(b, path)
	for _, conc := range []int{1, 2} {
		opt := arrowfile.WithCompressConcurrency(conc)
		b.Run(fmt.Sprintf("events/conc=%d", conc), func(b *testing.B) {
			fixture.BenchWrite(b, evs, "events", func(w io.Writer) (*arrowfile.EventWriter, error) {
				return arrowfile.NewEventWriter(w, meta, opt)
			})
		})
		b.Run(fmt.Sprintf("requests/conc=%d", conc), func(b *testing.B) {
			fixture.BenchWrite(b, rqs, "requests", func(w io.Writer) (*arrowfile.RequestWriter, error) {
				return arrowfile.NewRequestWriter(w, meta, opt)
			})
		})
	}
}
