package arrowfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/trace"
)

// Reading untrusted files. arrow-go v15's IPC reader trusts its input: a
// malformed footer, message or buffer makes it panic (index out of range in
// flatbuffer accessors, "arrow/ipc: buffer index out of bound", failed
// slice conversions) rather than return an error, and sizes it reads are
// allocated as given, so a few crafted bytes can ask for terabytes. The
// readers here therefore
//
//  1. parse the footer themselves and check that every block lies inside
//     the file, before arrow-go sees it;
//  2. before arrow-go decodes a message, check its flatbuffer: every vector
//     arrow-go allocates from (schema fields, children, key/values) fits in
//     the message, fields nest at most 32 deep; and for a dictionary or
//     record batch, bound its row count (maxArrowBatchRows) and the sizes
//     its compressed buffers claim once decompressed (maxBatchBytes);
//  3. recover from panics at their API boundary (OpenEvents, ReadEvent,
//     OpenRequests, ReadRequest) and report them as errors: past the checks
//     above, a panic means malformed input, never a state worth keeping, and
//     the reader refuses further reads.

// maxBatchBytes bounds the decompressed size of one batch's buffers: 256
// bytes per row (an event row takes about 110) plus 16 MiB for text
// (c.textSlack).
func (c *arrowConfig) maxBatchBytes(rows int64) int64 { return 256*rows + c.textSlack }

// withReadLimits lowers the readers' bounds on a batch's rows and text
// bytes, so that FuzzDecode spends its time on parsing rather than on the
// allocations a mutated row count asks for (which are legal up to the
// default bounds).
func withReadLimits(rows int64, text int64) Option {
	return func(c *arrowConfig) { c.maxRows, c.textSlack = rows, text }
}

// arrowMaxMeta bounds the flatbuffer metadata of one message.
const arrowMaxMeta = 16 << 20

// arrowReader is what the event and request readers share. It feeds
// arrow-go's stream reader (ipc.NewReaderFromMessageReader) the file's
// messages itself, rather than using ipc.FileReader: that lets it check each
// message before arrow-go decodes it, and arrow-go v15's FileReader.Close
// never releases the dictionaries it read (the stream reader's Release
// does), which a checked allocator reports as a leak.
type arrowReader struct {
	cfg    arrowConfig
	stream string
	src    ReadAtSeeker
	size   int64
	msgs   arrowMessages
	ipc    *ipc.Reader
	meta   trace.Meta
	cols   []int // file column of each schema column, -1 if absent
	batch  int   // batches loaded
	at     int64 // file offset of the last batch loaded
	rec    arrow.Record
	row    int // next row of rec
	err    error
	// What each batch must hold, from the stream's schema (arrowFBLayout).
	layout   bool
	nodes    int
	bufs     int
	dictBufs map[int64]int
}

// recoverInto turns a panic into *err, marking the reader failed.
func (r *arrowReader) recoverInto(stage string, err *error) {
	if p := recover(); p != nil {
		where := "footer or schema"
		if r.msgs.at > 0 {
			where = fmt.Sprintf("message at byte %d", r.msgs.at)
		}
		*err = fmt.Errorf("%s %s: malformed arrow data in the %s (%v)", stage, r.stream, where, p)
		if r.err == nil {
			r.err = *err
		}
	}
}

func (r *arrowReader) open(src ReadAtSeeker, stream string, want []arrow.Field, optional func(int) bool, opts []Option) (err error) {
	r.cfg = newArrowConfig(opts)
	r.stream = stream
	r.src = src
	defer r.recoverInto("opening", &err)
	size, err := src.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("opening %s: %w", stream, err)
	}
	r.size = size
	blocks, md, err := r.readFooter()
	if err != nil {
		return fmt.Errorf("opening %s: %w", stream, err)
	}
	if r.meta, err = arrowParseMeta(md, stream); err != nil {
		return fmt.Errorf("opening %s: %w", stream, err)
	}
	r.msgs = arrowMessages{r: r, blocks: blocks}
	rd, err := ipc.NewReaderFromMessageReader(&r.msgs, ipc.WithAllocator(r.cfg.mem))
	if err != nil {
		r.msgs.Release()
		return fmt.Errorf("opening %s: %w", stream, err)
	}
	r.ipc = rd
	schema := rd.Schema()
	r.cols = make([]int, len(want))
	for i, f := range want {
		r.cols[i] = -1
		idx := schema.FieldIndices(f.Name)
		if len(idx) == 0 {
			if optional(i) {
				continue
			}
			return fmt.Errorf("opening %s: no column %q", stream, f.Name)
		}
		got := schema.Field(idx[0])
		if !arrow.TypeEqual(got.Type, f.Type) && !arrowStringColType(f.Type, got.Type) {
			return fmt.Errorf("opening %s: column %q is %s, want %s", stream, f.Name, got.Type, f.Type)
		}
		r.cols[i] = idx[0]
	}
	return nil
}

// readFooter parses the file's footer: the schema's metadata, and the
// messages to read: a schema message built from the footer's schema, then
// the dictionary and record batches the footer lists, each checked to lie
// inside the file.
func (r *arrowReader) readFooter() (blocks []arrowBlock, md arrow.Metadata, err error) {
	const tail = 10 // footer length and magic
	if r.size < 16+tail {
		return nil, md, fmt.Errorf("not an arrow file: %d bytes", r.size)
	}
	var t [tail]byte
	if _, err := r.src.ReadAt(t[:], r.size-tail); err != nil {
		return nil, md, fmt.Errorf("reading footer: %w", err)
	}
	var head [16]byte
	if _, err := r.src.ReadAt(head[:], 0); err != nil {
		return nil, md, fmt.Errorf("reading header: %w", err)
	}
	if !bytes.Equal(t[4:], arrowMagic) || !bytes.Equal(head[:6], arrowMagic) {
		return nil, md, errors.New("not an arrow file: no ARROW1 magic")
	}
	n := int64(binary.LittleEndian.Uint32(t[:4]))
	start := r.size - tail - n
	if n < 8 || n > arrowMaxMeta || start < 16 {
		return nil, md, fmt.Errorf("bad footer length %d in a file of %d bytes", n, r.size)
	}
	b := make([]byte, n)
	if _, err := r.src.ReadAt(b, start); err != nil {
		return nil, md, fmt.Errorf("reading footer: %w", err)
	}
	tab, ok := arrowFBRoot(b)
	if !ok || arrowFBCheckTable(b, tab) != nil {
		return nil, md, errors.New("malformed footer")
	}
	sch, ok, err := arrowFBRef(b, tab, 1)
	if err != nil || !ok {
		return nil, md, errors.New("malformed footer: no schema")
	}
	if md, err = arrowFBSchemaMeta(b, sch); err != nil {
		return nil, md, fmt.Errorf("footer schema: %w", err)
	}
	// The schema comes from the footer, not from a Schema message at offset
	// 8: the file format repeats the schema there, but not every writer
	// writes that message (apache-arrow's JavaScript file writer starts the
	// file with the dictionary batches), and the footer's is the one file
	// readers use.
	blocks = append(blocks, arrowBlock{offset: -1, schema: arrowFooterSchemaMessage(b, sch)})
	// Then the dictionaries and the record batches in footer order, as file
	// readers take them: every dictionary before the first record batch
	// (where a file grows a dictionary by deltas, indices stay valid as
	// deltas only append).
	for _, field := range []int{2, 3} { // dictionaries, recordBatches
		kind := map[int]string{2: "dictionary", 3: "record batch"}[field]
		v, cnt, ok, err := arrowFBVector(b, tab, field, 24)
		if err != nil {
			return nil, md, fmt.Errorf("malformed footer: %w", err)
		}
		if !ok {
			continue
		}
		for i := 0; i < cnt; i++ {
			q := b[v+24*i:]
			blk := arrowBlock{offset: int64(binary.LittleEndian.Uint64(q)), meta: int32(binary.LittleEndian.Uint32(q[8:])), body: int64(binary.LittleEndian.Uint64(q[16:]))}
			if blk.offset < 8 || blk.meta < 8 || blk.meta > arrowMaxMeta || blk.body < 0 ||
				blk.offset > start || blk.body > start-blk.offset-int64(blk.meta) {
				return nil, md, fmt.Errorf("%s block %d (offset %d, metadata %d, body %d) outside the file", kind, i, blk.offset, blk.meta, blk.body)
			}
			blocks = append(blocks, blk)
		}
	}
	return blocks, md, nil
}

// arrowMessages is the ipc.MessageReader over a file's blocks. It owns the
// message it last returned and releases it on the next call.
type arrowMessages struct {
	r      *arrowReader
	blocks []arrowBlock
	next   int
	at     int64 // file offset of the message last returned
	msg    *ipc.Message
	dec    *zstd.Decoder // for inflate, created on first use
}

func (m *arrowMessages) Retain() {}

func (m *arrowMessages) Release() {
	m.releaseMsg()
	if m.dec != nil {
		m.dec.Close()
		m.dec = nil
	}
}

func (m *arrowMessages) releaseMsg() {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// Message reads, checks and returns the next message; io.EOF after the last.
func (m *arrowMessages) Message() (*ipc.Message, error) {
	m.releaseMsg()
	if m.next >= len(m.blocks) {
		return nil, io.EOF
	}
	blk := m.blocks[m.next]
	m.next++
	m.at = blk.offset
	var b []byte
	if blk.schema != nil {
		b = blk.schema
	} else {
		b = make([]byte, blk.meta)
		if _, err := m.r.src.ReadAt(b, blk.offset); err != nil {
			return nil, fmt.Errorf("message at offset %d: %w", blk.offset, err)
		}
		if binary.LittleEndian.Uint32(b) == 0xffffffff {
			b = b[8:]
		} else {
			b = b[4:]
		}
	}
	body, rb, err := m.r.checkMessageRB(b, blk)
	if err != nil {
		return nil, fmt.Errorf("message at offset %d: %w", blk.offset, err)
	}
	mem := m.r.cfg.mem
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(body))
	if body > 0 { // a schema (from the footer) has none
		if _, err := m.r.src.ReadAt(buf.Bytes(), blk.offset+int64(blk.meta)); err != nil {
			buf.Release()
			return nil, fmt.Errorf("message at offset %d: %w", blk.offset, err)
		}
	}
	if rb != 0 {
		plain, err := m.inflate(b, rb, buf.Bytes())
		buf.Release()
		if err != nil {
			return nil, fmt.Errorf("message at offset %d: %w", blk.offset, err)
		}
		buf = plain
	}
	meta := memory.NewResizableBuffer(mem)
	meta.Resize(len(b))
	copy(meta.Bytes(), b)
	m.msg = ipc.NewMessage(meta, buf)
	meta.Release()
	buf.Release()
	return m.msg, nil
}

// inflate decompresses the buffers of a compressed batch (RecordBatch table
// at rb in the message b, body raw) into a new body, and rewrites b in
// place to describe it uncompressed: new buffer offsets and lengths, and no
// compression field. arrow-go then never decompresses: its v15 decoder
// creates a concurrent zstd stream decoder per batch, which deadlocks on
// some corrupt input (klauspost/compress v1.20.4, found by FuzzDecode).
// Each buffer must decompress to exactly the size its prefix declares
// (checked against the batch bound by checkMessage).
func (m *arrowMessages) inflate(b []byte, rb int, raw []byte) (*memory.Buffer, error) {
	if m.dec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(m.r.cfg.maxBatchBytes(m.r.cfg.maxRows))))
		if err != nil {
			return nil, err
		}
		m.dec = d
	}
	bufs, n, _, err := arrowFBVector(b, rb, 2, 16)
	if err != nil {
		return nil, err
	}
	type span struct{ off, ln, size int64 }
	spans := make([]span, n)
	var total int64
	le := binary.LittleEndian
	for i := range spans {
		q := b[bufs+16*i:]
		sp := span{off: int64(le.Uint64(q)), ln: int64(le.Uint64(q[8:]))}
		if sp.ln >= 8 {
			sp.size = int64(le.Uint64(raw[sp.off:]))
			if sp.size == -1 {
				sp.size = sp.ln - 8
			}
		} else if sp.ln != 0 {
			return nil, fmt.Errorf("compressed buffer %d of %d bytes", i, sp.ln)
		}
		spans[i] = sp
		total += (sp.size + 7) &^ 7
	}
	// Decompress first and allocate the body after, so that only sizes
	// backed by real compressed data are allocated.
	plain := make([][]byte, n)
	for i, sp := range spans {
		if sp.ln == 0 {
			continue
		}
		src := raw[sp.off+8 : sp.off+sp.ln]
		if int64(le.Uint64(raw[sp.off:])) == -1 {
			plain[i] = src
			continue
		}
		got, err := m.dec.DecodeAll(src, nil)
		if err == nil && int64(len(got)) != sp.size {
			err = fmt.Errorf("decompressed to %d bytes, want %d", len(got), sp.size)
		}
		if err != nil {
			return nil, fmt.Errorf("buffer %d: %w", i, err)
		}
		plain[i] = got
	}
	out := memory.NewResizableBuffer(m.r.cfg.mem)
	out.Resize(int(total))
	dst := out.Bytes()
	var at int64
	for i, sp := range spans {
		copy(dst[at:], plain[i])
		clear(dst[at+sp.size : at+((sp.size+7)&^7)])
		q := b[bufs+16*i:]
		le.PutUint64(q, uint64(at))
		le.PutUint64(q[8:], uint64(sp.size))
		at += (sp.size + 7) &^ 7
	}
	// Drop the compression field (RecordBatch field 3) from the vtable,
	// unless another table of the message shares that vtable.
	vt, _ := arrowFBVtable(b, rb)
	if msg, ok := arrowFBRoot(b); ok {
		if mvt, _ := arrowFBVtable(b, msg); mvt == vt {
			out.Release()
			return nil, errors.New("record batch shares its vtable with the message")
		}
	}
	if int(le.Uint16(b[vt:])) > 4+2*3 {
		le.PutUint16(b[vt+4+2*3:], 0)
	}
	if msg, ok := arrowFBRoot(b); ok {
		if off, _ := arrowFBField(b, msg, 3); off != 0 && msg+off+8 <= len(b) {
			le.PutUint64(b[msg+off:], uint64(total))
		}
	}
	return out, nil
}

// checkMessageRB checks a message's flatbuffer and bounds what decoding it
// will allocate. It returns the body length the message declares and the
// position of the message's RecordBatch table when it is a compressed
// dictionary or record batch (0 otherwise).
func (r *arrowReader) checkMessageRB(b []byte, blk arrowBlock) (body int64, crb int, err error) {
	var needNodes, needBufs int
	msg, ok := arrowFBRoot(b)
	if !ok || arrowFBCheckTable(b, msg) != nil {
		return 0, 0, errors.New("malformed message")
	}
	if off, ok := arrowFBField(b, msg, 3); ok && off != 0 && msg+off+8 <= len(b) {
		body = int64(binary.LittleEndian.Uint64(b[msg+off:]))
	}
	if body < 0 {
		return 0, 0, fmt.Errorf("negative body length %d", body)
	}
	p, ok := arrowFBField(b, msg, 1)
	if !ok || p == 0 {
		return 0, 0, errors.New("message without header type")
	}
	typ := ipc.MessageType(b[msg+p])
	rb, ok, err := arrowFBRef(b, msg, 2)
	if err != nil || !ok {
		return 0, 0, errors.New("message without header")
	}
	switch typ {
	case ipc.MessageSchema:
		if blk.schema == nil {
			return 0, 0, errors.New("schema message in a record or dictionary block")
		}
		if _, err := arrowFBSchemaMeta(b, rb); err != nil {
			return 0, 0, err
		}
		r.nodes, r.bufs, r.dictBufs, err = arrowFBLayout(b, rb)
		r.layout = err == nil
		return 0, 0, err
	case ipc.MessageRecordBatch:
		needNodes, needBufs = r.nodes, r.bufs
	case ipc.MessageDictionaryBatch:
		// table DictionaryBatch { id: long; data: RecordBatch; isDelta: bool; }
		if err := arrowFBCheckTable(b, rb); err != nil {
			return 0, 0, err
		}
		var id int64
		if off, _ := arrowFBField(b, rb, 0); off != 0 && rb+off+8 <= len(b) {
			id = int64(binary.LittleEndian.Uint64(b[rb+off:]))
		}
		k, ok := r.dictBufs[id]
		if !ok {
			return 0, 0, fmt.Errorf("dictionary batch of unknown dictionary %d", id)
		}
		needNodes, needBufs = 1, k
		if rb, ok, err = arrowFBRef(b, rb, 1); err != nil || !ok {
			return 0, 0, errors.New("dictionary batch without data")
		}
	default:
		return 0, 0, fmt.Errorf("unexpected message type %d", typ)
	}
	if blk.schema != nil || !r.layout {
		return 0, 0, errors.New("footer schema is not a schema")
	}
	if body > blk.body {
		return 0, 0, fmt.Errorf("body of %d bytes in a block of %d", body, blk.body)
	}
	// table RecordBatch { length: long; nodes: [FieldNode]; buffers: [Buffer];
	//                     compression: BodyCompression; variadicBufferCounts: [long]; }
	if err := arrowFBCheckTable(b, rb); err != nil {
		return 0, 0, err
	}
	var rows int64
	if off, ok := arrowFBField(b, rb, 0); ok && off != 0 && rb+off+8 <= len(b) {
		rows = int64(binary.LittleEndian.Uint64(b[rb+off:]))
	}
	if rows < 0 || rows > r.cfg.maxRows {
		return 0, 0, fmt.Errorf("batch of %d rows (at most %d)", rows, r.cfg.maxRows)
	}
	_, nn, _, err := arrowFBVector(b, rb, 1, 16)
	if err != nil {
		return 0, 0, err
	}
	if _, _, _, err := arrowFBVector(b, rb, 4, 8); err != nil {
		return 0, 0, err
	}
	bufs, n, _, err := arrowFBVector(b, rb, 2, 16)
	if err != nil {
		return 0, 0, err
	}
	if nn < needNodes || n < needBufs {
		return 0, 0, fmt.Errorf("batch of %d columns and %d buffers, want %d and %d", nn, n, needNodes, needBufs)
	}
	off, _ := arrowFBField(b, rb, 3)
	compressed := off != 0
	var total int64
	limit := r.cfg.maxBatchBytes(rows)
	start := blk.offset + int64(blk.meta)
	var pre [8]byte
	for i := 0; i < n; i++ {
		q := b[bufs+16*i:]
		off, ln := int64(binary.LittleEndian.Uint64(q)), int64(binary.LittleEndian.Uint64(q[8:]))
		if off < 0 || ln < 0 || off > body || ln > body-off {
			return 0, 0, fmt.Errorf("buffer %d outside the body", i)
		}
		if !compressed || ln < 8 {
			continue
		}
		if _, err := r.src.ReadAt(pre[:], start+off); err != nil {
			return 0, 0, err
		}
		u := int64(binary.LittleEndian.Uint64(pre[:]))
		if u == -1 {
			continue
		}
		if u < 0 || u > limit-total {
			return 0, 0, fmt.Errorf("buffers decompress to more than %d bytes for %d rows", limit, rows)
		}
		total += u
	}
	if compressed {
		crb = rb
	}
	return body, crb, nil
}

// nextBatch loads the next batch with rows, releasing the current one. It
// returns io.EOF after the last.
func (r *arrowReader) nextBatch() error {
	r.rec = nil
	for r.ipc.Next() {
		rec := r.ipc.Record() // valid until the next call to Next
		r.batch++
		r.at = r.msgs.at
		for c := 0; c < int(rec.NumCols()); c++ {
			if int64(rec.Column(c).Len()) != rec.NumRows() {
				return fmt.Errorf("reading %s: column %d has %d rows, want %d", r.where(), c, rec.Column(c).Len(), rec.NumRows())
			}
		}
		if rec.NumRows() > 0 {
			r.rec, r.row = rec, 0
			return nil
		}
	}
	if err := r.ipc.Err(); err != nil {
		return fmt.Errorf("reading %s batch %d at byte %d: %w", r.stream, r.batch, r.msgs.at, err)
	}
	return io.EOF
}

// where names the batch last loaded and its place in the file.
func (r *arrowReader) where() string {
	return fmt.Sprintf("%s batch %d at byte %d", r.stream, r.batch-1, r.at)
}

// named prefixes err with the reader's file name (WithName), if any; io.EOF
// stays as is.
func (r *arrowReader) named(err error) error {
	if err == nil || err == io.EOF || r.cfg.name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", r.cfg.name, err)
}

func (r *arrowReader) close() error {
	r.rec = nil
	if r.ipc != nil {
		r.ipc.Release() // releases the record, the dictionaries and arrowMessages
		r.ipc = nil
	}
	return nil
}

// column returns the batch's array for schema column i, or nil if the file
// has no such column.
func (r *arrowReader) column(i int) arrow.Array {
	if r.cols[i] < 0 {
		return nil
	}
	return r.rec.Column(r.cols[i])
}

// arrowStringValues copies the values of a string array (a dictionary).
func arrowStringValues(a arrow.Array) ([]string, error) {
	s, ok := a.(*array.String)
	if !ok {
		return nil, fmt.Errorf("dictionary of %s, want utf8", a.DataType())
	}
	out := make([]string, s.Len())
	for i := range out {
		if s.IsValid(i) {
			out[i] = string([]byte(s.Value(i))) // copy: Value aliases the record's memory
		}
	}
	return out, nil
}

// arrowDictValues caches the copied values of a dictionary column's
// dictionary across batches that share it.
type arrowDictValues struct {
	data   arrow.ArrayData
	values []string
}

// get returns the values of d's dictionary and d's indices as int64s.
func (c *arrowDictValues) get(d *array.Dictionary) ([]string, error) {
	dict := d.Dictionary()
	if c.data != dict.Data() || len(c.values) != dict.Len() {
		v, err := arrowStringValues(dict)
		if err != nil {
			return nil, err
		}
		c.data, c.values = dict.Data(), v
	}
	return c.values, nil
}

// arrowDictLookup returns the string at row i of a dictionary column, "" if
// null, checking the index.
func arrowDictLookup(d *array.Dictionary, values []string, i int) (string, error) {
	if d.IsNull(i) {
		return "", nil
	}
	k := d.GetValueIndex(i)
	if k < 0 || k >= len(values) {
		return "", fmt.Errorf("dictionary index %d out of range (%d values)", k, len(values))
	}
	return values[k], nil
}

// arrowStringColType reports whether a column of type got can be read as
// want by arrowStringCol: want is utf8 and got is utf8 or a dictionary of
// utf8 (comm and cgroup_path were dictionary-encoded, with delta
// dictionaries, in files written before they became plain; other writers
// may dictionary-encode any string column).
//
// Likewise a dictionary column (action) may come with another integer index
// type than ours: arrow-go's Parquet reader, for one, returns int32 indices.
func arrowStringColType(want, got arrow.DataType) bool {
	d, ok := got.(*arrow.DictionaryType)
	if !ok || d.ValueType.ID() != arrow.STRING || !arrow.IsInteger(d.IndexType.ID()) {
		return false
	}
	w, isDict := want.(*arrow.DictionaryType)
	return want.ID() == arrow.STRING || (isDict && w.ValueType.ID() == arrow.STRING)
}

// arrowInternMax bounds the distinct values an arrowStringCol keeps
// interned; past it, values are copied row by row.
const arrowInternMax = 1 << 14

// arrowStringCol reads a nullable string column stored as utf8 or as a
// dictionary of utf8 (arrowStringColType), returning copies independent of
// the batch. Values repeat (process names, cgroup paths), so it returns one
// copy per distinct value, up to arrowInternMax of them.
type arrowStringCol struct {
	plain  *array.String
	dict   *array.Dictionary
	dictV  arrowDictValues
	values []string
	intern map[string]string
}

// load points the column at a batch's array.
func (c *arrowStringCol) load(a arrow.Array) error {
	c.plain, c.dict = nil, nil
	switch a := a.(type) {
	case *array.String:
		c.plain = a
		return nil
	case *array.Dictionary:
		v, err := c.dictV.get(a)
		if err != nil {
			return err
		}
		c.dict, c.values = a, v
		return nil
	}
	return fmt.Errorf("column is %s, want utf8", a.DataType())
}

// value returns row i, "" if null.
func (c *arrowStringCol) value(i int) (string, error) {
	if c.dict != nil {
		return arrowDictLookup(c.dict, c.values, i)
	}
	if c.plain.IsNull(i) {
		return "", nil
	}
	v := c.plain.Value(i) // aliases the batch's memory
	if s, ok := c.intern[v]; ok {
		return s, nil
	}
	s := string([]byte(v))
	if c.intern == nil {
		c.intern = make(map[string]string)
	}
	if len(c.intern) < arrowInternMax {
		c.intern[s] = s
	}
	return s, nil
}

// arrowFooterSchemaMessage returns the flatbuffer of a Schema message whose
// schema is the Schema table at sch in the footer flatbuffer footer: a
// Message table (version V5, header type Schema, header, no body) followed
// by a copy of the footer, whose references, relative, stay valid:
//
//	0   root offset: Message table at 16
//	4   vtable (10 bytes, padded to 12): version@8 header_type@10 header@4
//	16  Message table: vtable, header (-> 32+sch), version, header_type
//	32  the footer (8-aligned, as flatbuffers lay it out)
func arrowFooterSchemaMessage(footer []byte, sch int) []byte {
	const at = 32
	m := make([]byte, at+len(footer))
	le := binary.LittleEndian
	le.PutUint32(m[0:], 16)
	le.PutUint16(m[4:], 10)  // vtable size
	le.PutUint16(m[6:], 12)  // table size
	le.PutUint16(m[8:], 8)   // version
	le.PutUint16(m[10:], 10) // header_type
	le.PutUint16(m[12:], 4)  // header
	le.PutUint32(m[16:], 12) // soffset to the vtable
	le.PutUint32(m[20:], uint32(at+sch-20))
	le.PutUint16(m[24:], arrowMetadataV5)
	m[26] = byte(ipc.MessageSchema)
	copy(m[at:], footer)
	return m
}
