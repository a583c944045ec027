package arrowfile

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracesched/tracesched/trace"
)

// arrowWriter is what the event and request writers share: the file, the
// batch encoder, the dictionaries, the batch size and the Meta.
type arrowWriter struct {
	cfg     arrowConfig
	stream  string
	fields  []arrow.Field
	file    *arrowFile
	enc     *arrowEnc
	head    []byte       // schema message for the start of the file
	dicts   []*arrowDict // the dictionary columns' dictionaries, by id
	meta    trace.Meta
	started bool // head written
	n       int  // rows in the current batch
	closed  bool
	err     error // sticky: the first error ends the writer
	// record mode (records.go)
	schema     *arrow.Schema
	dictArrays map[int64]arrow.Array
}

func (w *arrowWriter) init(out io.Writer, meta trace.Meta, stream string, opts []Option) error {
	w.cfg = newArrowConfig(opts)
	w.stream = stream
	w.meta = meta
	switch stream {
	case StreamEvents:
		w.fields = arrowEventFields()
	default:
		w.fields = arrowRequestFields()
	}
	md := arrowMetadata(meta, stream)
	head, err := arrowSchemaMessage(arrow.NewSchema(w.fields, &md), w.cfg.mem)
	if err != nil {
		return fmt.Errorf("encoding %s schema: %w", stream, err)
	}
	w.head = head
	if w.cfg.records != nil {
		out = io.Discard
	}
	w.file = newArrowFile(out)
	w.enc = newArrowEnc(w.file, w.cfg.concurrency)
	if fn := w.cfg.records; fn != nil {
		w.enc.sink = func(j *arrowJob) error { return w.records(j, fn) }
	}
	return nil
}

// addDicts registers the dictionaries of the dictionary columns, given in
// schema order, numbering them as arrow-go numbers a schema's dictionaries.
func (w *arrowWriter) addDicts(dicts ...*arrowDict) {
	for i, d := range dicts {
		d.id = int64(i)
	}
	w.dicts = dicts
}

// batch hands the current batch to the encoder: the schema first if not
// yet written, the dictionary values added since the last batch, then the
// record batch of the columns put hands over. The writer then fills the
// buffers of slot w.enc.slot.
func (w *arrowWriter) batch(put func(e *arrowEnc)) error {
	err := w.start()
	if err == nil {
		for _, d := range w.dicts {
			if d.pending() {
				d.put(w.enc)
			}
		}
		put(w.enc)
		w.enc.end(w.n, false, 0, false)
		err = w.enc.submit()
	}
	w.n = 0
	if err != nil {
		w.err = fmt.Errorf("writing %s batch: %w", w.stream, err)
	}
	return w.err
}

// start writes the magic and the schema message, once, before any batch.
func (w *arrowWriter) start() error {
	if w.started {
		return nil
	}
	w.started = true
	return w.file.message(w.head, 0, nil)
}

// close waits for the last batch, ends the stream and writes the footer
// with the final Meta.
func (w *arrowWriter) close() error {
	defer w.releaseRecords()
	if err := w.enc.close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("writing %s batch: %w", w.stream, err)
	}
	if w.err != nil {
		return w.err
	}
	err := w.start()
	if err == nil {
		md := arrowMetadata(w.meta, w.stream)
		var msg []byte
		if msg, err = arrowSchemaMessage(arrow.NewSchema(w.fields, &md), w.cfg.mem); err == nil {
			err = w.file.finish(msg)
		}
	}
	if err != nil {
		w.err = fmt.Errorf("writing %s footer: %w", w.stream, err)
	}
	return w.err
}

var errArrowClosed = errors.New("arrow writer is closed")

// EventWriter writes events to an Arrow IPC file with the events schema (see
// the package documentation), in zstd-compressed record batches of a
// bounded number of rows (WithBatchRows). It needs no seeking: the output
// may be a pipe. An EventWriter is not safe for concurrent use.
type EventWriter struct {
	arrowWriter
	rows int

	time                           arrowFixed[int64]
	sectorU                        arrowFixed[uint64]
	seq, cpu, dev, cat, bytes, pid arrowFixed[uint32]
	errno                          arrowFixed[int16]
	cgroup                         arrowFixed[uint64]
	cgroupPath, comm               arrowStrings
	action, msgSched               *arrowFixedDict
	text                           arrowStrings
	fromDev, wallSec, wallNsec     arrowFixed[uint32]
	fromSector, depth, splitSector arrowFixed[uint64]
	msgPID                         arrowFixed[int32]
	msgSync, msgShared, msgNoIdle  arrowBools
}

// NewEventWriter starts an events file on w. meta is recorded in the schema
// at the start of the file; SetMeta replaces it for the footer, which is
// what file readers use. Nothing is written before the first batch is full
// or Close is called.
func NewEventWriter(w io.Writer, meta trace.Meta, opts ...Option) (*EventWriter, error) {
	ew := &EventWriter{}
	if err := ew.init(w, meta, StreamEvents, opts); err != nil {
		return nil, err
	}
	ew.action = newArrowFixedDict(arrowActionDict(), false)
	ew.msgSched = newArrowFixedDict([]string{"bfq", "cfq"}, true)
	ew.addDicts(&ew.action.dict, &ew.msgSched.dict)
	for _, c := range []*arrowFixed[uint32]{&ew.fromDev, &ew.wallSec, &ew.wallNsec} {
		c.nullable = true
	}
	for _, c := range []*arrowFixed[uint64]{&ew.fromSector, &ew.depth, &ew.splitSector} {
		c.nullable = true
	}
	ew.msgPID.nullable = true
	ew.rows = ew.cfg.batchRows
	ew.reset()
	return ew, nil
}

func (w *EventWriter) reset() {
	mem, n, slot := w.cfg.mem, w.rows, w.enc.slot
	w.time.reset(mem, n, slot)
	w.sectorU.reset(mem, n, slot)
	for _, c := range []*arrowFixed[uint32]{&w.seq, &w.cpu, &w.dev, &w.cat, &w.bytes, &w.pid, &w.fromDev, &w.wallSec, &w.wallNsec} {
		c.reset(mem, n, slot)
	}
	w.errno.reset(mem, n, slot)
	for _, c := range []*arrowFixed[uint64]{&w.cgroup, &w.fromSector, &w.depth, &w.splitSector} {
		c.reset(mem, n, slot)
	}
	w.cgroupPath.reset(mem, n, slot)
	w.comm.reset(mem, n, slot)
	w.action.idx.reset(mem, n, slot)
	w.msgSched.idx.reset(mem, n, slot)
	w.text.reset(mem, n, slot)
	w.msgPID.reset(mem, n, slot)
	w.msgSync.reset(mem, n, slot)
	w.msgShared.reset(mem, n, slot)
	w.msgNoIdle.reset(mem, n, slot)
}

// SetMeta replaces the capture metadata written in the file's footer, for
// facts known only at the end (Devices, Origin, Cgroups). Call it before
// Close.
func (w *EventWriter) SetMeta(meta trace.Meta) { w.meta = meta }

// Write appends e. It returns an error for an action outside 0 to 34 (the
// action column cannot encode it), for an event that breaks
// trace.Event.Validate (readers refuse those), or once writing has failed.
func (w *EventWriter) Write(e *trace.Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errArrowClosed
	}
	if e.Action > trace.ActionMessage {
		return fmt.Errorf("writing event at %v: action %d cannot be encoded", e.Time, e.Action)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("writing event at %v: %w", e.Time, err) // the reader would refuse it
	}
	i := w.n
	w.time.v[i] = int64(e.Time)
	w.seq.v[i] = e.Seq
	w.cpu.v[i] = e.CPU
	w.dev.v[i] = uint32(e.Dev)
	w.action.idx.v[i] = int8(e.Action)
	w.cat.v[i] = uint32(e.Cat)
	w.sectorU.v[i] = e.Sector
	w.bytes.v[i] = e.Bytes
	w.pid.v[i] = e.PID
	w.errno.v[i] = e.Error
	w.cgroup.v[i] = e.Cgroup
	if e.CgroupPath != "" {
		w.cgroupPath.set(i, e.CgroupPath)
	}
	if e.Comm != "" {
		w.comm.set(i, e.Comm)
	}
	// Payload columns are valid where the action uses them, and wherever a
	// value is not zero (so that nothing is lost on odd input).
	a := e.Action
	if e.Text != "" || a == trace.ActionMessage || a == trace.ActionProcess {
		w.text.set(i, e.Text)
	}
	if e.FromDev != 0 || a == trace.ActionRemap {
		w.fromDev.set(i, uint32(e.FromDev))
	}
	if e.FromSector != 0 || a == trace.ActionRemap {
		w.fromSector.set(i, e.FromSector)
	}
	if e.Depth != 0 || a == trace.ActionUnplugIO || a == trace.ActionUnplugTimer || a == trace.ActionZoneUnplug {
		w.depth.set(i, e.Depth)
	}
	if e.SplitSector != 0 || a == trace.ActionSplit {
		w.splitSector.set(i, e.SplitSector)
	}
	if e.WallSec != 0 || e.WallNsec != 0 || a == trace.ActionTimestamp {
		w.wallSec.set(i, e.WallSec)
		w.wallNsec.set(i, e.WallNsec)
	}
	if a == trace.ActionMessage {
		m := trace.ParseMessage(e.Text)
		switch m.Sched {
		case "bfq":
			w.msgSched.idx.set(i, 0)
		case "cfq":
			w.msgSched.idx.set(i, 1)
		}
		if m.PID != 0 {
			w.msgPID.set(i, m.PID)
			w.msgSync.set(i, m.Sync)
			w.msgShared.set(i, m.Shared)
			if m.Sched == "cfq" {
				w.msgNoIdle.set(i, m.NoIdle)
			}
		}
	}
	w.n++
	if w.n == w.rows {
		return w.flush()
	}
	return nil
}

func (w *EventWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	n := w.n
	if err := w.batch(func(e *arrowEnc) {
		// In schema order (evTime ... evMsgNoIdle).
		w.time.put(e, n)
		w.seq.put(e, n)
		w.cpu.put(e, n)
		w.dev.put(e, n)
		w.action.put(e, n)
		w.cat.put(e, n)
		w.sectorU.put(e, n)
		w.bytes.put(e, n)
		w.pid.put(e, n)
		w.errno.put(e, n)
		w.cgroup.put(e, n)
		w.cgroupPath.put(e, n)
		w.comm.put(e, n)
		w.text.put(e, n)
		w.fromDev.put(e, n)
		w.fromSector.put(e, n)
		w.depth.put(e, n)
		w.splitSector.put(e, n)
		w.wallSec.put(e, n)
		w.wallNsec.put(e, n)
		w.msgSched.put(e, n)
		w.msgPID.put(e, n)
		w.msgSync.put(e, n)
		w.msgShared.put(e, n)
		w.msgNoIdle.put(e, n)
	}); err != nil {
		return err
	}
	w.reset()
	return nil
}

// Close writes the last batch and the footer, and releases the writer's
// buffers. It does not close the underlying writer. Close is idempotent
// and returns the writer's first error.
func (w *EventWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err == nil {
		w.flush()
	}
	err := w.close()
	w.releaseColumns()
	return err
}

func (w *EventWriter) releaseColumns() {
	w.time.release()
	w.sectorU.release()
	for _, c := range []*arrowFixed[uint32]{&w.seq, &w.cpu, &w.dev, &w.cat, &w.bytes, &w.pid, &w.fromDev, &w.wallSec, &w.wallNsec} {
		c.release()
	}
	w.errno.release()
	for _, c := range []*arrowFixed[uint64]{&w.cgroup, &w.fromSector, &w.depth, &w.splitSector} {
		c.release()
	}
	w.cgroupPath.release()
	w.comm.release()
	w.action.release()
	w.msgSched.release()
	w.text.release()
	w.msgPID.release()
	w.msgSync.release()
	w.msgShared.release()
	w.msgNoIdle.release()
}

// EventFileReader reads an events file written by EventWriter (or any Arrow
// IPC file with the events schema: columns are found by name, msg_* ones
// may be absent). It implements EventReader. Events come back in file
// order; their strings are copies, valid after the reader is closed. An
// EventFileReader is not safe for concurrent use.
type EventFileReader struct {
	arrowReader
	actions                  []trace.Action // action of each action dictionary entry
	actionDict               arrow.ArrayData
	time                     []int64
	seq, cpu, dev, cat       []uint32
	bytes, pid               []uint32
	sector, cgroup           []uint64
	errno                    []int16
	action                   *array.Dictionary
	actionIdx                []int8 // nil when the file's indices are not int8
	cgroupPath, comm         arrowStringCol
	text                     *array.String
	fromDev, wallSec, wallNs *array.Uint32
	fromSector, depth, split *array.Uint64
}

// OpenEvents opens an events file. It reads the footer and checks the
// schema and the "tracesched.stream" metadata; Meta returns the capture
// metadata from the footer. r must stay open until Close.
func OpenEvents(r ReadAtSeeker, opts ...Option) (*EventFileReader, error) {
	er := &EventFileReader{}
	optional := func(i int) bool { return i >= evMsgSched }
	if err := er.open(r, StreamEvents, arrowEventFields(), optional, opts); err != nil {
		er.close()
		return nil, er.named(err)
	}
	return er, nil
}

// Meta returns the capture metadata recorded in the file's footer.
func (r *EventFileReader) Meta() trace.Meta { return r.meta }

// Close releases the reader's memory. It does not close the underlying file.
func (r *EventFileReader) Close() error { return r.close() }

// load points the typed column views at the current batch.
func (r *EventFileReader) load() error {
	col := func(i int) arrow.Array { return r.column(i) }
	r.time = col(evTime).(*array.Int64).Int64Values()
	r.seq = col(evSeq).(*array.Uint32).Uint32Values()
	r.cpu = col(evCPU).(*array.Uint32).Uint32Values()
	r.dev = col(evDev).(*array.Uint32).Uint32Values()
	r.cat = col(evCat).(*array.Uint32).Uint32Values()
	r.sector = col(evSector).(*array.Uint64).Uint64Values()
	r.bytes = col(evBytes).(*array.Uint32).Uint32Values()
	r.pid = col(evPID).(*array.Uint32).Uint32Values()
	r.errno = col(evError).(*array.Int16).Int16Values()
	r.cgroup = col(evCgroup).(*array.Uint64).Uint64Values()
	r.action = col(evAction).(*array.Dictionary)
	r.actionIdx = nil
	if idx, ok := r.action.Indices().(*array.Int8); ok {
		r.actionIdx = idx.Int8Values()
	}
	if d := r.action.Dictionary(); d.Data() != r.actionDict {
		vals, err := arrowStringValues(d)
		if err != nil {
			return fmt.Errorf("action: %w", err)
		}
		r.actions = r.actions[:0]
		for _, v := range vals {
			a, ok := arrowParseActionLetter(v)
			if !ok {
				return fmt.Errorf("action: unknown action %q in dictionary", v)
			}
			r.actions = append(r.actions, a)
		}
		r.actionDict = d.Data()
	}
	var err error
	if err = r.cgroupPath.load(col(evCgroupPath)); err != nil {
		return fmt.Errorf("cgroup_path: %w", err)
	}
	if err = r.comm.load(col(evComm)); err != nil {
		return fmt.Errorf("comm: %w", err)
	}
	r.text = col(evText).(*array.String)
	r.fromDev = col(evFromDev).(*array.Uint32)
	r.fromSector = col(evFromSector).(*array.Uint64)
	r.depth = col(evDepth).(*array.Uint64)
	r.split = col(evSplitSector).(*array.Uint64)
	r.wallSec = col(evWallSec).(*array.Uint32)
	r.wallNs = col(evWallNsec).(*array.Uint32)
	return nil
}

// ReadEvent returns the next event, or io.EOF after the last. After an
// error other than io.EOF the reader stays failed. An event that breaks
// trace.Event.Validate is an error. Errors name the batch, its byte offset
// and the row (and the file, WithName).
func (r *EventFileReader) ReadEvent() (trace.Event, error) {
	e, err := r.readEvent()
	return e, r.named(err)
}

func (r *EventFileReader) readEvent() (e trace.Event, err error) {
	if r.err != nil {
		return trace.Event{}, r.err
	}
	defer r.recoverInto("reading", &err)
	if r.rec == nil || r.row >= int(r.rec.NumRows()) {
		if err := r.nextBatch(); err != nil {
			if err != io.EOF {
				r.err = err
			}
			return trace.Event{}, err
		}
		if err := r.load(); err != nil {
			r.err = fmt.Errorf("reading %s: %w", r.where(), err)
			return trace.Event{}, r.err
		}
	}
	i := r.row
	r.row++
	var k int
	if r.actionIdx != nil {
		k = int(r.actionIdx[i])
	} else {
		k = r.action.GetValueIndex(i) // another writer's index type
	}
	if r.action.IsNull(i) || k < 0 || k >= len(r.actions) {
		r.err = fmt.Errorf("reading %s row %d: bad action index %d", r.where(), i, k)
		return trace.Event{}, r.err
	}
	e = trace.Event{
		Time: trace.Time(r.time[i]), Seq: r.seq[i], CPU: r.cpu[i], Dev: trace.Dev(r.dev[i]), Action: r.actions[k],
		Cat: trace.Category(r.cat[i]), Sector: r.sector[i], Bytes: r.bytes[i], PID: r.pid[i], Error: r.errno[i],
		Cgroup: r.cgroup[i],
	}
	if e.CgroupPath, err = r.cgroupPath.value(i); err == nil {
		e.Comm, err = r.comm.value(i)
	}
	if err != nil {
		r.err = fmt.Errorf("reading %s row %d: %w", r.where(), i, err)
		return trace.Event{}, r.err
	}
	if r.text.IsValid(i) {
		if s := r.text.Value(i); s != "" {
			e.Text = string([]byte(s)) // copy: Value aliases the record's memory
		}
	}
	if r.fromDev.IsValid(i) {
		e.FromDev = trace.Dev(r.fromDev.Value(i))
	}
	if r.fromSector.IsValid(i) {
		e.FromSector = r.fromSector.Value(i)
	}
	if r.depth.IsValid(i) {
		e.Depth = r.depth.Value(i)
	}
	if r.split.IsValid(i) {
		e.SplitSector = r.split.Value(i)
	}
	if r.wallSec.IsValid(i) {
		e.WallSec = r.wallSec.Value(i)
	}
	if r.wallNs.IsValid(i) {
		e.WallNsec = r.wallNs.Value(i)
	}
	if err := e.Validate(); err != nil {
		r.err = fmt.Errorf("reading %s row %d: %w", r.where(), i, err)
		return trace.Event{}, r.err
	}
	return e, nil
}
