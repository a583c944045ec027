package arrowfile

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracesched/tracesched/trace"
)

// RequestWriter writes requests to an Arrow IPC file with the requests
// schema (see the package documentation), in zstd-compressed record batches
// of a bounded number of rows. Rows are written in the order given;
// requests in ID order (creation order) keep neighbouring times close,
// which is what makes the time columns compress. A RequestWriter is not
// safe for concurrent use.
type RequestWriter struct {
	arrowWriter
	rows int

	id, sector, cgroup, fromSector                    arrowFixed[uint64]
	dev, bytes, cat, pid, fromDev                     arrowFixed[uint32]
	bios, backMerges, frontMerges, requeues, firstBio arrowFixed[uint32]
	times                                             [5]arrowFixed[int64] // queue, get, insert, issue, complete
	errno                                             arrowFixed[int16]
	flags                                             arrowFixed[uint16]
	comm                                              arrowStrings
}

// NewRequestWriter starts a requests file on w, as NewEventWriter does for
// events.
func NewRequestWriter(w io.Writer, meta trace.Meta, opts ...Option) (*RequestWriter, error) {
	rw := &RequestWriter{}
	if err := rw.init(w, meta, StreamRequests, opts); err != nil {
		return nil, err
	}
	for i := range rw.times {
		rw.times[i].nullable = true
	}
	rw.rows = rw.cfg.batchRows
	rw.reset()
	return rw, nil
}

func (w *RequestWriter) u64s() []*arrowFixed[uint64] {
	return []*arrowFixed[uint64]{&w.id, &w.sector, &w.cgroup, &w.fromSector}
}

func (w *RequestWriter) u32s() []*arrowFixed[uint32] {
	return []*arrowFixed[uint32]{&w.dev, &w.bytes, &w.cat, &w.pid, &w.fromDev, &w.bios, &w.backMerges, &w.frontMerges, &w.requeues, &w.firstBio}
}

func (w *RequestWriter) reset() {
	mem, n, slot := w.cfg.mem, w.rows, w.enc.slot
	for _, c := range w.u64s() {
		c.reset(mem, n, slot)
	}
	for _, c := range w.u32s() {
		c.reset(mem, n, slot)
	}
	for i := range w.times {
		w.times[i].reset(mem, n, slot)
	}
	w.errno.reset(mem, n, slot)
	w.flags.reset(mem, n, slot)
	w.comm.reset(mem, n, slot)
}

// SetMeta replaces the capture metadata written in the file's footer. Call
// it before Close.
func (w *RequestWriter) SetMeta(meta trace.Meta) { w.meta = meta }

// Write appends r. Times equal to NoTime are written as nulls.
func (w *RequestWriter) Write(r *trace.Request) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errArrowClosed
	}
	i := w.n
	w.id.v[i] = r.ID
	w.dev.v[i] = uint32(r.Dev)
	w.sector.v[i] = r.Sector
	w.bytes.v[i] = r.Bytes
	w.cat.v[i] = uint32(r.Cat)
	w.pid.v[i] = r.PID
	if r.Comm != "" {
		w.comm.set(i, r.Comm)
	}
	w.cgroup.v[i] = r.Cgroup
	for k, t := range [5]trace.Time{r.Queue, r.Get, r.Insert, r.Issue, r.Complete} {
		if t != trace.NoTime {
			w.times[k].set(i, int64(t))
		}
	}
	w.bios.v[i] = r.Bios
	w.backMerges.v[i] = r.BackMerges
	w.frontMerges.v[i] = r.FrontMerges
	w.requeues.v[i] = r.Requeues
	w.firstBio.v[i] = r.FirstBio
	w.fromDev.v[i] = uint32(r.FromDev)
	w.fromSector.v[i] = r.FromSector
	w.errno.v[i] = r.Error
	w.flags.v[i] = uint16(r.Flags)
	w.n++
	if w.n == w.rows {
		return w.flush()
	}
	return nil
}

func (w *RequestWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	n := w.n
	if err := w.batch(func(e *arrowEnc) {
		// In schema order (rqID ... rqFlags).
		w.id.put(e, n)
		w.dev.put(e, n)
		w.sector.put(e, n)
		w.bytes.put(e, n)
		w.cat.put(e, n)
		w.pid.put(e, n)
		w.comm.put(e, n)
		w.cgroup.put(e, n)
		for k := range w.times {
			w.times[k].put(e, n)
		}
		w.bios.put(e, n)
		w.backMerges.put(e, n)
		w.frontMerges.put(e, n)
		w.requeues.put(e, n)
		w.firstBio.put(e, n)
		w.fromDev.put(e, n)
		w.fromSector.put(e, n)
		w.errno.put(e, n)
		w.flags.put(e, n)
	}); err != nil {
		return err
	}
	w.reset()
	return nil
}

// Close writes the last batch and the footer, and releases the writer's
// buffers. It does not close the underlying writer. Close is idempotent
// and returns the writer's first error.
func (w *RequestWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err == nil {
		w.flush()
	}
	err := w.close()
	for _, c := range w.u64s() {
		c.release()
	}
	for _, c := range w.u32s() {
		c.release()
	}
	for i := range w.times {
		w.times[i].release()
	}
	w.errno.release()
	w.flags.release()
	w.comm.release()
	return err
}

// RequestFileReader reads a requests file written by RequestWriter (or any
// Arrow IPC file with the requests schema; columns are found by name).
// Requests come back in file order. A RequestFileReader is not safe for
// concurrent use.
type RequestFileReader struct {
	arrowReader
	id, sector, cgroup, fromSector     []uint64
	dev, bytes, cat, pid, fromDev      []uint32
	bios, back, front, requeues, first []uint32
	errno                              []int16
	flags                              []uint16
	times                              [5]*array.Int64
	comm                               arrowStringCol
}

// OpenRequests opens a requests file, as OpenEvents does for events.
func OpenRequests(r ReadAtSeeker, opts ...Option) (*RequestFileReader, error) {
	rr := &RequestFileReader{}
	if err := rr.open(r, StreamRequests, arrowRequestFields(), func(int) bool { return false }, opts); err != nil {
		rr.close()
		return nil, rr.named(err)
	}
	return rr, nil
}

// Meta returns the capture metadata recorded in the file's footer.
func (r *RequestFileReader) Meta() trace.Meta { return r.meta }

// Close releases the reader's memory. It does not close the underlying file.
func (r *RequestFileReader) Close() error { return r.close() }

func (r *RequestFileReader) load() error {
	u64 := func(i int) []uint64 { return r.column(i).(*array.Uint64).Uint64Values() }
	u32 := func(i int) []uint32 { return r.column(i).(*array.Uint32).Uint32Values() }
	r.id, r.sector, r.cgroup, r.fromSector = u64(rqID), u64(rqSector), u64(rqCgroup), u64(rqFromSector)
	r.dev, r.bytes, r.cat, r.pid, r.fromDev = u32(rqDev), u32(rqBytes), u32(rqCat), u32(rqPID), u32(rqFromDev)
	r.bios, r.back, r.front, r.requeues, r.first = u32(rqBios), u32(rqBackMerges), u32(rqFrontMerges), u32(rqRequeues), u32(rqFirstBio)
	r.errno = r.column(rqError).(*array.Int16).Int16Values()
	r.flags = r.column(rqFlags).(*array.Uint16).Uint16Values()
	for k := range r.times {
		r.times[k] = r.column(rqQueue + k).(*array.Int64)
	}
	if err := r.comm.load(r.column(rqComm)); err != nil {
		return fmt.Errorf("comm: %w", err)
	}
	return nil
}

// ReadRequest returns the next request, or io.EOF after the last. Null
// times read as NoTime. After an error other than io.EOF the reader stays
// failed.
func (r *RequestFileReader) ReadRequest() (trace.Request, error) {
	q, err := r.readRequest()
	return q, r.named(err)
}

func (r *RequestFileReader) readRequest() (q trace.Request, err error) {
	if r.err != nil {
		return trace.Request{}, r.err
	}
	defer r.recoverInto("reading", &err)
	if r.rec == nil || r.row >= int(r.rec.NumRows()) {
		if err := r.nextBatch(); err != nil {
			if err != io.EOF {
				r.err = err
			}
			return trace.Request{}, err
		}
		if err := r.load(); err != nil {
			r.err = fmt.Errorf("reading %s: %w", r.where(), err)
			return trace.Request{}, r.err
		}
	}
	i := r.row
	r.row++
	q = trace.Request{
		ID: r.id[i], Dev: trace.Dev(r.dev[i]), Sector: r.sector[i], Bytes: r.bytes[i], Cat: trace.Category(r.cat[i]),
		PID: r.pid[i], Cgroup: r.cgroup[i],
		Bios: r.bios[i], BackMerges: r.back[i], FrontMerges: r.front[i], Requeues: r.requeues[i], FirstBio: r.first[i],
		FromDev: trace.Dev(r.fromDev[i]), FromSector: r.fromSector[i], Error: r.errno[i], Flags: trace.RequestFlags(r.flags[i]),
	}
	var t [5]trace.Time
	for k, a := range r.times {
		t[k] = trace.NoTime
		if a.IsValid(i) {
			t[k] = trace.Time(a.Value(i))
		}
	}
	q.Queue, q.Get, q.Insert, q.Issue, q.Complete = t[0], t[1], t[2], t[3], t[4]
	if q.Comm, err = r.comm.value(i); err != nil {
		r.err = fmt.Errorf("reading %s row %d: %w", r.where(), i, err)
		return trace.Request{}, r.err
	}
	return q, nil
}
