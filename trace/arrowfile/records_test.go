package arrowfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestRecordsRoundTrip writes events and requests in record mode, hands
// the records to arrow-go's own IPC file writer, and reads that file back
// with OpenEvents and OpenRequests: every row must come back as written,
// so the records hold the same columns as our files. With concurrency 2
// the records are handed over in the background while the next batch is
// filled from the writer's other set of buffers: they must be the same.
func TestRecordsRoundTrip(t *testing.T) {
	for _, conc := range []int{1, 2} {
		t.Run(fmt.Sprintf("conc=%d", conc), func(t *testing.T) { testRecordsRoundTrip(t, conc) })
	}
}

func testRecordsRoundTrip(t *testing.T, conc int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	meta := arrowTestMeta()
	md := arrowMetadata(meta, StreamEvents)
	evs := arrowGenEvents(3000, 5)
	buf := newSeekBuf(t)
	var fw *ipc.FileWriter
	batches := 0
	w, err := NewEventRecords(func(rec arrow.Record) error {
		batches++
		if fw == nil {
			var err error
			if fw, err = ipc.NewFileWriter(buf, ipc.WithSchema(arrow.NewSchema(rec.Schema().Fields(), &md)), ipc.WithAllocator(mem)); err != nil {
				return err
			}
		}
		return fw.Write(rec)
	}, WithAllocator(mem), WithBatchRows(700), WithCompressConcurrency(conc))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Schema().Equal(arrow.NewSchema(arrowEventFields(), nil)) {
		t.Fatalf("schema %v", w.Schema())
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if batches != 5 {
		t.Fatalf("%d batches, want 5", batches)
	}
	got, gotMeta := decodeEventsForTest(t, buf.bytes(t))
	if len(got) != len(evs) {
		t.Fatalf("%d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if !reflect.DeepEqual(got[i], evs[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], evs[i])
		}
	}
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Fatalf("meta %+v", gotMeta)
	}

	rqs := arrowGenRequests(500, 5)
	buf = newSeekBuf(t)
	fw = nil
	rmd := arrowMetadata(meta, StreamRequests)
	rw, err := NewRequestRecords(func(rec arrow.Record) error {
		if fw == nil {
			var err error
			if fw, err = ipc.NewFileWriter(buf, ipc.WithSchema(arrow.NewSchema(rec.Schema().Fields(), &rmd)), ipc.WithAllocator(mem)); err != nil {
				return err
			}
		}
		return fw.Write(rec)
	}, WithAllocator(mem), WithBatchRows(128), WithCompressConcurrency(conc))
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
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRequests(bytes.NewReader(buf.bytes(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		q, err := r.ReadRequest()
		if err == io.EOF {
			if i != len(rqs) {
				t.Fatalf("%d requests, want %d", i, len(rqs))
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
}

// TestRecordsBackgroundError: an error of the function a record is handed
// to in the background ends the writer; a later Write or Close returns it,
// and the function is not called again.
func TestRecordsBackgroundError(t *testing.T) {
	boom := errors.New("disk on fire")
	calls := 0
	w, err := NewEventRecords(func(rec arrow.Record) error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	}, WithBatchRows(100), WithCompressConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	evs := arrowGenEvents(1000, 3)
	var got error
	for i := range evs {
		if got = w.Write(&evs[i]); got != nil {
			break
		}
	}
	if cerr := w.Close(); got == nil {
		got = cerr
	}
	if !errors.Is(got, boom) {
		t.Fatalf("error %v, want %v", got, boom)
	}
	if calls != 2 {
		t.Fatalf("fn called %d times, want 2", calls)
	}
}

// seekBuf is a temporary file: arrow-go's IPC file writer wants to seek.
type seekBuf struct{ *os.File }

func newSeekBuf(t *testing.T) seekBuf {
	f, err := os.CreateTemp(t.TempDir(), "rec*.arrow")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return seekBuf{f}
}

func (b seekBuf) bytes(t *testing.T) []byte {
	data, err := os.ReadFile(b.Name())
	if err != nil {
		t.Fatal(err)
	}
	return data
}
