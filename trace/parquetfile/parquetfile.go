// Package parquetfile writes tracesched's events and requests as Parquet
// files, for the tools that query Parquet (DuckDB, Polars, pandas, Spark,
// ClickHouse...): the same columns, in the same order and of the same Arrow
// types, and the same metadata as the Arrow files of package
// trace/arrowfile, whose writers build the columns (their record mode).
//
// Layout:
//
//   - zstd (level 1: fastest) on every column;
//   - row groups of at most DefaultRowGroupRows rows (WithRowGroupRows), so
//     the writer's memory is two row groups' columns (events) or one
//     (requests) whatever the capture's length, and readers can skip row
//     groups by their statistics;
//   - one data page per column chunk up to DataPageBytes, in the v2 data
//     page format (levels stored uncompressed ahead of the values), which
//     DuckDB, Polars, pyarrow and Spark read. Both choices are for speed
//     with arrow-go v15's writer: it makes a new zstd encoder for every
//     page it compresses (allocating and clearing about 16 MiB), and its v1
//     pages grow the definition-level buffer by a few bytes at a time, a
//     copy of the whole buffer per run of levels;
//   - min/max statistics on the time columns (time_ns; queue_ns to
//     complete_ns), the sector columns (sector, from_sector, split_sector)
//     and on id, dev, pid and cgroup, and on every nullable column (a v2
//     page header's null count comes from them); none on the others;
//   - Parquet dictionary encoding on the dictionary columns (action,
//     msg_sched), DELTA_BINARY_PACKED on the event times, sectors and
//     sequence numbers and the request ids and sectors (see deltaColumns),
//     plain encoding elsewhere, the strings included;
//   - the schema's metadata (tracesched.schema_version, tracesched.stream,
//     tracesched.source, ...: see trace/arrowfile) as the file's key-value
//     metadata, written at Close, so that SetMeta can supply what is known
//     only at the end of the input; and the Arrow schema (ARROW:schema), so
//     Arrow-based readers get back the unsigned types, the dictionaries and
//     the unit=ns field metadata.
//
// Times are int64 nanoseconds since the capture's origin
// (tracesched.origin_ns), as in the Arrow files: not Parquet timestamps.
package parquetfile

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
)

// DefaultRowGroupRows is the default number of rows per row group: 512 Ki
// (Polars writes 256 Ki, pyarrow 1 Mi), about 56 MiB of event columns in
// memory.
const DefaultRowGroupRows = 512 << 10

// DataPageBytes is the size at which a column chunk's data page is cut:
// one page per chunk for the fixed-width columns of a default row group.
const DataPageBytes = 8 << 20

// Option configures a writer.
type Option func(*config)

type config struct {
	rowGroupRows int
	mem          memory.Allocator
}

// WithRowGroupRows sets the rows per row group (values below 1 select
// DefaultRowGroupRows; at most 4 Mi).
func WithRowGroupRows(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.rowGroupRows = min(n, 4<<20)
		}
	}
}

// WithAllocator sets the allocator for the column buffers and the Parquet
// encoder.
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// statsColumns are the columns with min/max statistics.
var statsColumns = []string{
	"time_ns", "queue_ns", "get_ns", "insert_ns", "issue_ns", "complete_ns",
	"sector", "from_sector", "split_sector", "id", "dev", "pid", "cgroup",
}

// deltaColumns are the columns written with DELTA_BINARY_PACKED: the event
// times, sequence numbers and sectors, and the request ids and sectors,
// which grow or stay near their neighbours. It packs their differences in
// a few bits, so zstd has far less to compress: a third smaller events
// files, and about 15 % less CPU for the whole convert than plain encoding
// (g-bfq-large-nomsg x 11). Only columns without nulls: arrow-go v15's
// delta encoder dereferences a nil bit writer when a column chunk's first
// batch holds nulls only (the requests' times can).
var deltaColumns = []string{"time_ns", "seq", "sector", "id"}

// dictColumns are the columns written with Parquet dictionary encoding:
// the Arrow dictionary columns, whose indices are written as they are. The
// string columns (comm, cgroup_path, text) are plain: dictionary-encoding
// them hashes every value, which cost a sixth of the whole convert, while
// zstd takes most of the repeats out of plain strings anyway (events files
// 1 % larger).
var dictColumns = []string{"action", "msg_sched"}

// writer is what the event and request writers share.
type writer struct {
	fw     *pqarrow.FileWriter
	stream string
	meta   trace.Meta
	schema func(trace.Meta) *arrow.Schema
	rows   records // the record writer building the columns
	closed bool
	err    error
}

func newConfig(opts []Option) config {
	c := config{rowGroupRows: DefaultRowGroupRows}
	for _, o := range opts {
		o(&c)
	}
	if c.mem == nil {
		c.mem = memory.NewGoAllocator()
	}
	return c
}

// recordOptions are the options of the record writer that builds the
// columns: batches of one row group; with background, each handed over on
// a goroutine of its own, so that the columns of a row group are built
// while the previous one is encoded (two row groups in memory).
func (c config) recordOptions(background bool) []arrowfile.Option {
	conc := 1
	if background {
		conc = 2
	}
	return []arrowfile.Option{arrowfile.WithBatchRows(c.rowGroupRows), arrowfile.WithAllocator(c.mem),
		arrowfile.WithCompressConcurrency(conc)}
}

func (w *writer) open(out io.Writer, schema *arrow.Schema, cfg config) error {
	props := []parquet.WriterProperty{
		parquet.WithAllocator(cfg.mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(int64(cfg.rowGroupRows)),
		parquet.WithDataPageVersion(parquet.DataPageV2),
		parquet.WithDataPageSize(DataPageBytes),
		parquet.WithDictionaryDefault(false),
		parquet.WithStats(false),
		parquet.WithCreatedBy("tracesched"),
	}
	for _, c := range dictColumns {
		if len(schema.FieldIndices(c)) > 0 {
			props = append(props, parquet.WithDictionaryFor(c, true))
		}
	}
	for _, c := range statsColumns {
		if len(schema.FieldIndices(c)) > 0 {
			props = append(props, parquet.WithStatsFor(c, true))
		}
	}
	for _, c := range deltaColumns {
		if i := schema.FieldIndices(c); len(i) > 0 && !schema.Field(i[0]).Nullable {
			props = append(props, parquet.WithEncodingFor(c, parquet.Encodings.DeltaBinaryPacked))
		}
	}
	// A v2 page header's null count comes from the page's statistics: with
	// them off arrow-go v15 writes 0, and readers that trust the header
	// (Polars) misread the page. So every nullable column has them.
	for _, f := range schema.Fields() {
		if f.Nullable {
			props = append(props, parquet.WithStatsFor(f.Name, true))
		}
	}
	// Hide out's Close, if any: the Parquet writer closes what it writes to.
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{out}, parquet.NewWriterProperties(props...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(cfg.mem)))
	if err != nil {
		return fmt.Errorf("starting %s parquet file: %w", w.stream, err)
	}
	w.fw = fw
	return nil
}

// write writes one batch of rows as a row group. It runs on the record
// writer's background goroutine, one batch at a time. A panic in arrow-go's
// writer (it has had nil dereferences on unusual column contents) becomes
// the row group's error rather than ending the program.
func (w *writer) write(rec arrow.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("writing %s row group of %d rows: parquet writer failed: %v", w.stream, rec.NumRows(), p)
		}
	}()
	if err := w.fw.Write(rec); err != nil {
		return fmt.Errorf("writing %s row group: %w", w.stream, err)
	}
	return nil
}

// finish adds the metadata and writes the footer.
func (w *writer) finish() error {
	md := w.schema(w.meta).Metadata()
	for i, k := range md.Keys() {
		if err := w.fw.AppendKeyValueMetadata(k, md.Values()[i]); err != nil {
			return fmt.Errorf("writing %s parquet metadata: %w", w.stream, err)
		}
	}
	if err := w.fw.Close(); err != nil {
		return fmt.Errorf("writing %s parquet footer: %w", w.stream, err)
	}
	return nil
}

// records is what the writers need of their arrowfile record writer.
type records interface {
	Schema() *arrow.Schema
	Close() error
}

// start opens the Parquet file on out for rows' schema; rows hands the
// row groups to w.write and is closed by Close.
func (w *writer) start(out io.Writer, rows records, cfg config) error {
	if err := w.open(out, rows.Schema(), cfg); err != nil {
		rows.Close()
		return err
	}
	w.rows = rows
	return nil
}

// SetMeta replaces the capture metadata written at Close.
func (w *writer) SetMeta(meta trace.Meta) { w.meta = meta }

// Close writes the last row group, the metadata and the footer. It does
// not close the output.
func (w *writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err = w.rows.Close(); w.err == nil {
		w.err = w.finish()
	}
	return w.err
}

// EventWriter writes events to a Parquet file with the events schema of
// trace/arrowfile. It needs no seeking. Each full row group is encoded on
// a goroutine of its own while the next is filled, so an error writing
// one is returned by a later Write or by Close. Not safe for concurrent
// use.
type EventWriter struct {
	writer
	events *arrowfile.EventWriter
}

// NewEventWriter starts an events file on out. meta is written at Close
// unless SetMeta replaces it. Nothing is written before the first row
// group is full or Close is called.
func NewEventWriter(out io.Writer, meta trace.Meta, opts ...Option) (*EventWriter, error) {
	cfg := newConfig(opts)
	w := &EventWriter{writer: writer{stream: arrowfile.StreamEvents, meta: meta, schema: arrowfile.EventSchema}}
	rows, err := arrowfile.NewEventRecords(w.write, cfg.recordOptions(true)...)
	if err != nil {
		return nil, err
	}
	if err := w.start(out, rows, cfg); err != nil {
		return nil, err
	}
	w.events = rows
	return w, nil
}

// Write appends e; see arrowfile.EventWriter.Write for what it refuses.
func (w *EventWriter) Write(e *trace.Event) error { return w.events.Write(e) }

// RequestWriter writes requests to a Parquet file with the requests schema
// of trace/arrowfile, in the order written. A full row group is encoded by
// the Write call that fills it (requests are a seventh of a capture's
// rows: a second row group in memory would not pay).
type RequestWriter struct {
	writer
	requests *arrowfile.RequestWriter
}

// NewRequestWriter starts a requests file on out, as NewEventWriter does.
func NewRequestWriter(out io.Writer, meta trace.Meta, opts ...Option) (*RequestWriter, error) {
	cfg := newConfig(opts)
	w := &RequestWriter{writer: writer{stream: arrowfile.StreamRequests, meta: meta, schema: arrowfile.RequestSchema}}
	rows, err := arrowfile.NewRequestRecords(w.write, cfg.recordOptions(false)...)
	if err != nil {
		return nil, err
	}
	if err := w.start(out, rows, cfg); err != nil {
		return nil, err
	}
	w.requests = rows
	return w, nil
}

// Write appends r. Times equal to trace.NoTime are written as nulls.
func (w *RequestWriter) Write(r *trace.Request) error { return w.requests.Write(r) }
