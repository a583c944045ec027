package arrowfile

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracesched/tracesched/trace"
)

// Record mode. The writers can hand each full batch to a function as an
// arrow.Record instead of encoding it into a file: the same columns, built
// by the same code (payload validity, derived msg_* columns, fixed
// dictionaries), for other containers such as Parquet (trace/parquetfile).
// The record's arrays are views of the writer's column buffers, which the
// writer reuses for a later batch: the record is valid only during the
// call, which must not retain it.
//
// With WithCompressConcurrency(n), n > 1, each record is handed over on a
// goroutine of its own while the writer's caller fills the next batch, so
// that building the columns and consuming them use two cores: the writer
// then holds two batches in memory, calls fn for one batch at a time, in
// order, and returns an error of fn from a later Write or from Close.

// RecordFunc receives one batch. Its error ends the writer, as a write
// error would.
type RecordFunc func(rec arrow.Record) error

// NewEventRecords returns an EventWriter that hands each batch of events to
// fn rather than writing a file. Schema returns the records' schema.
// WithCompressConcurrency above 1 calls fn in the background (see above).
// SetMeta and Close behave as for a file; Close hands over the last,
// partial batch and waits for fn to return.
func NewEventRecords(fn RecordFunc, opts ...Option) (*EventWriter, error) {
	return NewEventWriter(nil, trace.Meta{}, append(opts, withRecords(fn))...)
}

// NewRequestRecords is NewEventRecords for requests.
func NewRequestRecords(fn RecordFunc, opts ...Option) (*RequestWriter, error) {
	return NewRequestWriter(nil, trace.Meta{}, append(opts, withRecords(fn))...)
}

// Schema returns the events schema without metadata: the schema of the
// records of NewEventRecords.
func (w *EventWriter) Schema() *arrow.Schema { return w.recSchema() }

// Schema returns the requests schema without metadata.
func (w *RequestWriter) Schema() *arrow.Schema { return w.recSchema() }

func withRecords(fn RecordFunc) Option {
	return func(c *arrowConfig) { c.records = fn }
}

// recSchema returns the writer's fields as a schema without metadata,
// created once.
func (w *arrowWriter) recSchema() *arrow.Schema {
	if w.schema == nil {
		w.schema = arrow.NewSchema(w.fields, nil)
	}
	return w.schema
}

// records turns a job (dictionary batches, then one record batch, see
// arrowEnc) into an arrow.Record of the writer's schema and hands it to fn.
// Dictionary batches are fixed for the file: their values are kept from
// the first job.
func (w *arrowWriter) records(j *arrowJob, fn RecordFunc) error {
	schema := w.recSchema()
	node, buf := 0, 0
	for _, m := range j.msgs {
		if m.dict {
			if j.nodes[node][1] != 0 || m.bufEnd-buf != 3 {
				return fmt.Errorf("dictionary %d: unexpected layout", m.id)
			}
			d := array.NewData(arrow.BinaryTypes.String, int(j.nodes[node][0]),
				[]*memory.Buffer{nil, bufCopy(j.raw[buf+1]), bufCopy(j.raw[buf+2])}, nil, 0, 0)
			if w.dictArrays == nil {
				w.dictArrays = map[int64]arrow.Array{}
			}
			if old := w.dictArrays[m.id]; old != nil {
				old.Release()
			}
			w.dictArrays[m.id] = array.MakeFromData(d)
			d.Release()
			node, buf = m.nodeEnd, m.bufEnd
			continue
		}
		if err := w.record(j, node, buf, m, schema, fn); err != nil {
			return err
		}
		node, buf = m.nodeEnd, m.bufEnd
	}
	return nil
}

// record builds the record batch message m of job j, whose nodes and
// buffers start at node and buf, and hands it to fn.
func (w *arrowWriter) record(j *arrowJob, node, buf int, m arrowMsg, schema *arrow.Schema, fn RecordFunc) error {
	cols := make([]arrow.Array, len(w.fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	dictID := int64(0)
	for i, f := range w.fields {
		n, nulls := int(j.nodes[node][0]), int(j.nodes[node][1])
		node++
		nb := 2 // validity, values (or indices)
		if f.Type.ID() == arrow.STRING {
			nb = 3 // validity, offsets, data
		}
		bufs := make([]*memory.Buffer, nb)
		for k := range bufs {
			if b := j.raw[buf+k]; len(b) > 0 {
				bufs[k] = memory.NewBufferBytes(b)
			}
		}
		buf += nb
		var d arrow.ArrayData
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			dict := w.dictArrays[dictID]
			if dict == nil {
				return fmt.Errorf("column %s: no dictionary %d", f.Name, dictID)
			}
			dictID++
			d = array.NewDataWithDictionary(dt, n, bufs, nulls, 0, dict.Data().(*array.Data))
		} else {
			d = array.NewData(f.Type, n, bufs, nil, nulls, 0)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	if node != m.nodeEnd || buf != m.bufEnd {
		return fmt.Errorf("record batch: %d columns' buffers do not match the schema", len(w.fields))
	}
	rec := array.NewRecord(schema, cols, int64(m.rows))
	err := fn(rec)
	rec.Release()
	return err
}

// bufCopy returns a buffer holding a copy of b (dictionaries outlive the
// job's buffers).
func bufCopy(b []byte) *memory.Buffer { return memory.NewBufferBytes(append([]byte(nil), b...)) }

// releaseRecords releases the dictionaries kept for record mode.
func (w *arrowWriter) releaseRecords() {
	for id, a := range w.dictArrays {
		a.Release()
		delete(w.dictArrays, id)
	}
}
