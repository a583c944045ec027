package parquetfile

import (
	"bytes"
	"context"
	"io"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
)

// reencode reads a Parquet file with arrow-go's Parquet reader and writes
// what it read as an Arrow IPC file (arrow-go's writer), with the Parquet
// file's key-value metadata as the schema's: the Parquet file holds our
// columns if trace/arrowfile's reader reads that file back to what was
// written. It also returns the Parquet reader for more checks.
func reencode(t *testing.T, data []byte) ([]byte, *file.Reader) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	kv := pf.MetaData().KeyValueMetadata()
	var keys, vals []string
	for _, k := range kv.Keys() {
		if k == "ARROW:schema" {
			continue
		}
		keys = append(keys, k)
		vals = append(vals, *kv.FindValue(k))
	}
	md := arrow.NewMetadata(keys, vals)
	out, err := os.CreateTemp(t.TempDir(), "*.arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	iw, err := ipc.NewFileWriter(out, ipc.WithSchema(arrow.NewSchema(tbl.Schema().Fields(), &md)))
	if err != nil {
		t.Fatal(err)
	}
	tr := array.NewTableReader(tbl, 4096)
	defer tr.Release()
	for tr.Next() {
		if err := iw.Write(tr.Record()); err != nil {
			t.Fatal(err)
		}
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b, pf
}

func fixtureEvents(t *testing.T) ([]trace.Event, trace.Meta) {
	path := fixture.Path(t, "fx-bfq-2cg-w100-900")
	return fixture.Events(t, path)
}

// TestEventsRoundTrip writes a real capture's events (repository fixture
// fx-bfq-2cg-w100-900: BFQ messages, two cgroups) to Parquet in row groups
// of 1000 rows and checks, through arrow-go's Parquet reader, every event,
// the metadata, the row groups and the statistics of time_ns and sector.
func TestEventsRoundTrip(t *testing.T) {
	evs, meta := fixtureEvents(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var buf bytes.Buffer
	w, err := NewEventWriter(&buf, trace.Meta{}, WithRowGroupRows(1000), WithAllocator(mem))
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
	mem.AssertSize(t, 0)
	ipcData, pf := reencode(t, buf.Bytes())
	r, err := arrowfile.OpenEvents(bytes.NewReader(ipcData))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		e, err := r.ReadEvent()
		if err == io.EOF {
			if i != len(evs) {
				t.Fatalf("%d events, want %d", i, len(evs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, evs[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, evs[i])
		}
	}
	if !reflect.DeepEqual(r.Meta(), meta) {
		t.Fatalf("meta\n got %+v\nwant %+v", r.Meta(), meta)
	}
	md := pf.MetaData()
	_ = md
	if want := (len(evs) + 999) / 1000; pf.NumRowGroups() != want {
		t.Fatalf("%d row groups, want %d", pf.NumRowGroups(), want)
	}
	timeCol := md.Schema.ColumnIndexByName("time_ns")
	sectorCol := md.Schema.ColumnIndexByName("sector")
	row := 0
	for g := 0; g < pf.NumRowGroups(); g++ {
		rg := pf.MetaData().RowGroup(g)
		n := int(rg.NumRows())
		for _, c := range []int{timeCol, sectorCol} {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
				t.Fatalf("row group %d column %d: encodings %v, want DELTA_BINARY_PACKED", g, c, cc.Encodings())
			}
			set, err := cc.StatsSet()
			if err != nil || !set {
				t.Fatalf("row group %d column %d: no statistics (%v)", g, c, err)
			}
			st, err := cc.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := int64(1<<62), int64(-1<<62)
			for _, e := range evs[row : row+n] {
				v := int64(e.Time)
				if c == sectorCol {
					v = int64(e.Sector)
				}
				lo, hi = min(lo, v), max(hi, v)
			}
			is, ok := st.(*metadata.Int64Statistics)
			if !ok {
				t.Fatalf("row group %d column %d: statistics %T", g, c, st)
			}
			if is.Min() != lo || is.Max() != hi {
				t.Fatalf("row group %d column %d: min/max %d %d, want %d %d", g, c, is.Min(), is.Max(), lo, hi)
			}
		}
		row += n
	}
	checkPageHeaders(t, buf.Bytes())
}

// checkPageHeaders checks every data page of a Parquet file against its
// data: each is a v2 page (see the package documentation) whose header's
// null count is the number of nulls the page's definition levels hold, as
// counted by arrow-go's reader (which decodes the levels, not the
// header). Readers that size their buffers from the header (Polars) fail
// on a wrong count.
func checkPageHeaders(t *testing.T, data []byte) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	nullable := 0
	cols := make([]int, pf.MetaData().Schema.NumColumns())
	for i := range cols {
		cols[i] = i
	}
	for g := 0; g < pf.NumRowGroups(); g++ {
		tbl, err := fr.ReadRowGroups(context.Background(), cols, []int{g})
		if err != nil {
			t.Fatal(err)
		}
		rg := pf.RowGroup(g)
		for c := 0; c < int(tbl.NumCols()); c++ {
			want := 0
			for _, a := range tbl.Column(c).Data().Chunks() {
				want += a.NullN()
			}
			pr, err := rg.GetColumnPageReader(c)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for pr.Next() {
				switch pg := pr.Page().(type) {
				case *file.DataPageV2:
					got += int(pg.NumNulls())
				case *file.DictionaryPage:
				default:
					t.Fatalf("row group %d column %s: page %T, want a v2 data page", g, tbl.Schema().Field(c).Name, pg)
				}
			}
			if err := pr.Err(); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("row group %d column %s: page headers count %d nulls, the levels %d", g, tbl.Schema().Field(c).Name, got, want)
			}
			if want > 0 {
				nullable++
			}
		}
		tbl.Release()
	}
	if nullable == 0 {
		t.Fatal("no column chunk with nulls: the check checked nothing")
	}
}

// TestRequestsRoundTrip does the same for requests rebuilt from the
// fixture, with nulls (times never observed) included: the fixture's
// requests were all seen from queue to completion, so some lose a time,
// in runs and alone, as in a capture that started or ended mid-request,
// and for a whole row group (a column chunk of nulls only).
func TestRequestsRoundTrip(t *testing.T) {
	evs, meta := fixtureEvents(t)
	var rqs []trace.Request
	rb := trace.NewRebuilder(func(q *trace.Request) { rqs = append(rqs, *q) }, nil)
	for i := range evs {
		rb.Add(&evs[i])
	}
	rb.Close()
	for i := range rqs {
		if i%7 == 3 {
			rqs[i].Complete = trace.NoTime
		}
		if i < 140 {
			rqs[i].Queue, rqs[i].Get = trace.NoTime, trace.NoTime
		}
	}
	var buf bytes.Buffer
	w, err := NewRequestWriter(&buf, meta, WithRowGroupRows(100))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rqs {
		if err := w.Write(&rqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ipcData, pf := reencode(t, buf.Bytes())
	if got, want := pf.NumRowGroups(), (len(rqs)+99)/100; got != want {
		t.Fatalf("%d row groups, want %d", got, want)
	}
	r, err := arrowfile.OpenRequests(bytes.NewReader(ipcData))
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
	if !reflect.DeepEqual(r.Meta(), meta) {
		t.Fatalf("meta %+v", r.Meta())
	}
	checkPageHeaders(t, buf.Bytes())
}

// TestEmpty writes files without rows: valid Parquet with the schema and
// the metadata.
func TestEmpty(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewEventWriter(&buf, trace.Meta{Source: "blktrace"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 0 || pf.MetaData().Schema.NumColumns() != len(arrowfile.EventSchema(trace.Meta{}).Fields()) {
		t.Fatalf("%d rows, %d columns", pf.NumRows(), pf.MetaData().Schema.NumColumns())
	}
	if v := pf.MetaData().KeyValueMetadata().FindValue("tracesched.stream"); v == nil || *v != "events" {
		t.Fatalf("tracesched.stream %v", v)
	}
}

// closeRecorder records Close calls.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestCloseLeavesOutputOpen: Close must not close the io.Writer it was
// given (the command commits the file after Close).
func TestCloseLeavesOutputOpen(t *testing.T) {
	var out closeRecorder
	w, err := NewRequestWriter(&out, trace.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.closed || out.Len() == 0 {
		t.Fatalf("closed %v, %d bytes", out.closed, out.Len())
	}
}
