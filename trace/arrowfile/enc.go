package arrowfile

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// The batch encoder. arrow-go v15's ipc.Writer builds a new zstd streaming
// encoder for every batch it compresses (about 33 MB allocated per batch of
// 64 Ki events), which with the garbage collection it caused dominated the
// cost of writing. Dictionary and record batch messages are instead built here: the
// writers hand over each column's buffers as they are (no arrow.Array),
// one zstd encoder per compressing goroutine is kept for the writer's life
// and compresses each buffer with EncodeAll into a buffer reused from batch
// to batch, and the message's flatbuffer metadata is laid out by hand
// (format/Message.fbs and Schema.fbs):
//
//	table Message { version: MetadataVersion (short); header: MessageHeader
//	                (union: type ubyte, table); bodyLength: long; custom_metadata: [KeyValue]; }
//	table RecordBatch { length: long; nodes: [FieldNode]; buffers: [Buffer];
//	                    compression: BodyCompression; variadicBufferCounts: [long]; }
//	table DictionaryBatch { id: long; data: RecordBatch; isDelta: bool; }
//	table BodyCompression { codec: CompressionType (byte, ZSTD = 1); method: byte (BUFFER = 0); }
//	struct FieldNode { length: long; null_count: long; }
//	struct Buffer { offset: long; length: long; }
//
// The body is what arrow-go writes: each buffer in column order, as the
// little-endian int64 length of its uncompressed bytes and their zstd data
// (or -1 and the bytes themselves when compression would not make them
// smaller; Arrow's readers accept both), padded to a multiple of 8. An
// empty buffer (no validity bitmap: no nulls) takes no bytes.
//
// The zstd data is one frame carrying its content size (single segment),
// followed by an empty frame (zstdEmptyFrame, 9 bytes). Every zstd decoder
// decodes concatenated frames; the second one is for fzstd, the codec
// apache-arrow's JavaScript reader is used with: for a lone frame of known
// size it returns a view at byte offset 12 of its own allocation, on which
// Arrow JS cannot build 64-bit typed arrays, while for several frames it
// returns a fresh (aligned) concatenation. Measured with fzstd 0.1.1 and
// apache-arrow 21.2.0 (bench/interop): without it, 42 of 49 buffers of an
// events file came back unaligned and the file could not be read.

// Message header types (flatbuf.MessageHeader).
const (
	arrowHeaderDictionary  = 2
	arrowHeaderRecordBatch = 3
)

// arrowZstdLevel is the writers' zstd level. On a real capture (934,610
// events) SpeedFastest encodes about 25% more events per CPU-second than
// SpeedDefault (arrow-go's level) for files 3% larger (8.63 against 8.36
// bytes per event; requests 23.0 against 22.6 bytes). Frames carry no
// checksum (libzstd's default, as in Arrow C++'s files): it cost 5% of
// compression.
const arrowZstdLevel = zstd.SpeedFastest

// zstdEmptyFrame is a zstd frame of no content (single segment, content
// size 0, one empty raw block), appended to each compressed buffer (see
// above).
var zstdEmptyFrame = [...]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00}

// arrowEnc builds the messages of each batch (a job: the new dictionary
// values, then the record batch) and compresses and writes them. With
// concurrency 1 a job is done in the writer's goroutine when submitted.
// Otherwise it is done in the background (in record mode, handed to sink
// on a goroutine of its own), its buffers shared among conc
// goroutines, while the writer fills the next batch: the writers keep two
// sets of column buffers and alternate (slot), and submit waits for the
// job before the last, whose buffers the writer is about to reuse.
type arrowEnc struct {
	f    *arrowFile
	conc int
	encs []*zstd.Encoder // one per compressing goroutine, created on first use
	jobs [2]arrowJob
	slot int                   // job being built
	busy chan error            // the job in flight reports here; nil when none
	meta []byte                // metadata scratch, used by the goroutine writing
	sink func(*arrowJob) error // record mode: takes each job instead of run
}

// arrowJob is the messages of one batch.
type arrowJob struct {
	msgs  []arrowMsg
	nodes [][2]int64 // length, null count of each column of every message
	raw   [][]byte   // buffers, uncompressed; nil or empty: absent
	out   [][]byte   // compressed buffers, one reused slot per buffer index
}

// arrowMsg is one message of a job: a record batch or a dictionary batch
// whose nodes and buffers end at nodeEnd and bufEnd in the job's.
type arrowMsg struct {
	dict            bool
	delta           bool
	id              int64
	rows            int
	nodeEnd, bufEnd int
}

func newArrowEnc(f *arrowFile, conc int) *arrowEnc {
	return &arrowEnc{f: f, conc: max(conc, 1)}
}

// async reports whether jobs run in the background, the writers then
// alternating between two sets of buffers.
func (e *arrowEnc) async() bool { return e.conc > 1 }

// node adds a column (field node) of n rows of which nulls are null to the
// message being built.
func (e *arrowEnc) node(n, nulls int) {
	j := &e.jobs[e.slot]
	j.nodes = append(j.nodes, [2]int64{int64(n), int64(nulls)})
}

// buf adds a buffer to the message being built. b must not change until
// the job is done.
func (e *arrowEnc) buf(b []byte) {
	j := &e.jobs[e.slot]
	j.raw = append(j.raw, b)
}

// end ends the message being built: a record batch of rows rows, or with
// dict a dictionary batch of dictionary id.
func (e *arrowEnc) end(rows int, dict bool, id int64, delta bool) {
	j := &e.jobs[e.slot]
	j.msgs = append(j.msgs, arrowMsg{dict: dict, delta: delta, id: id, rows: rows, nodeEnd: len(j.nodes), bufEnd: len(j.raw)})
}

// submit hands over the job built since the last submit: it is done now,
// or in the background, after waiting for the previous one (whose error,
// if any, it returns). Then the other slot's job is built.
func (e *arrowEnc) submit() error {
	do := e.run
	if e.sink != nil {
		do = e.sink
	}
	if !e.async() {
		err := do(&e.jobs[e.slot])
		e.jobs[e.slot].clear()
		return err
	}
	if err := e.wait(); err != nil {
		return err
	}
	if e.sink == nil {
		if err := e.makeEncoders(e.conc); err != nil {
			return err
		}
	}
	j := &e.jobs[e.slot]
	if e.busy == nil {
		e.busy = make(chan error, 1)
	}
	done := e.busy
	go func() { done <- do(j) }()
	e.slot ^= 1
	return nil
}

// wait waits for the job in flight, if any, and returns its error.
func (e *arrowEnc) wait() error {
	if e.busy == nil || len(e.jobs[e.slot^1].msgs) == 0 {
		return nil
	}
	err := <-e.busy
	e.jobs[e.slot^1].clear()
	return err
}

func (j *arrowJob) clear() {
	j.msgs = j.msgs[:0]
	j.nodes = j.nodes[:0]
	clear(j.raw) // drop references to the column buffers
	j.raw = j.raw[:0]
}

// makeEncoders creates the first n zstd encoders.
func (e *arrowEnc) makeEncoders(n int) error {
	for len(e.encs) < n {
		z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(arrowZstdLevel), zstd.WithEncoderConcurrency(1),
			zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
		if err != nil {
			return err
		}
		e.encs = append(e.encs, z)
	}
	return nil
}

// compress compresses buffer i of j with z into its slot.
func (j *arrowJob) compress(z *zstd.Encoder, i int) {
	raw := j.raw[i]
	dst := j.out[i][:0]
	if len(raw) == 0 {
		j.out[i] = dst
		return
	}
	// Room for the length prefix and the worst case (stored uncompressed),
	// so that neither EncodeAll nor the fallback grows dst.
	if need := 8 + len(raw) + len(raw)/255 + 64 + len(zstdEmptyFrame); cap(dst) < need {
		dst = make([]byte, 0, need)
	}
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = z.EncodeAll(raw, dst)
	dst = append(dst, zstdEmptyFrame[:]...)
	size := uint64(len(raw))
	if len(dst)-8 >= len(raw) {
		dst = append(dst[:8], raw...)
		size = 1<<64 - 1 // -1: stored uncompressed
	}
	binary.LittleEndian.PutUint64(dst, size)
	j.out[i] = dst
}

// run compresses the job's buffers on e.conc goroutines and writes its
// messages.
func (e *arrowEnc) run(j *arrowJob) error {
	for len(j.out) < len(j.raw) {
		j.out = append(j.out, nil)
	}
	workers := min(e.conc, len(j.raw))
	if err := e.makeEncoders(max(workers, 1)); err != nil {
		return err
	}
	if workers <= 1 {
		for i := range j.raw {
			j.compress(e.encs[0], i)
		}
	} else {
		var next atomic.Int64
		work := func(z *zstd.Encoder) {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(j.raw) {
					return
				}
				j.compress(z, i)
			}
		}
		var wg sync.WaitGroup
		for k := 1; k < workers; k++ {
			wg.Go(func() { work(e.encs[k]) })
		}
		work(e.encs[0])
		wg.Wait()
	}
	node, buf := 0, 0
	for _, m := range j.msgs {
		if err := e.write(m, j.nodes[node:m.nodeEnd], j.out[buf:m.bufEnd]); err != nil {
			return err
		}
		node, buf = m.nodeEnd, m.bufEnd
	}
	return nil
}

// write writes one message whose compressed buffers are bufs.
func (e *arrowEnc) write(m arrowMsg, nodes [][2]int64, bufs [][]byte) error {
	var body int64
	for _, b := range bufs {
		body += (int64(len(b)) + 7) &^ 7
	}
	typ := byte(arrowHeaderRecordBatch)
	if m.dict {
		typ = arrowHeaderDictionary
	}
	e.meta = arrowBatchMeta(e.meta[:0], typ, m.id, m.delta, int64(m.rows), body, nodes, bufs)
	return e.f.message(e.meta, typ, func() (int64, error) {
		start := e.f.pos
		for _, b := range bufs {
			if _, err := e.f.Write(b); err != nil {
				return 0, err
			}
			if err := e.f.pad(8); err != nil {
				return 0, err
			}
		}
		return e.f.pos - start, nil
	})
}

// close waits for the job in flight and releases the encoders.
func (e *arrowEnc) close() error {
	err := e.wait()
	for _, z := range e.encs {
		z.Close()
	}
	e.encs = nil
	return err
}

// arrowBatchMeta appends to b the Message flatbuffer of a record batch
// (typ arrowHeaderRecordBatch) or dictionary batch (arrowHeaderDictionary,
// of dictionary id, a delta or not) of rows rows whose compressed body
// buffers are bufs (each padded to 8 bytes in the body) and whose columns
// are nodes. The layout, forward (children after parents, as flatbuffer
// offsets are unsigned), every long 8-aligned, positions from the start:
//
//	0   root offset: Message table at 16
//	4   Message vtable (12 bytes): version@16 header_type@18 header@4 bodyLength@8
//	16  Message table (20 bytes): vtable, header, bodyLength@24, version, header_type
//	36  dictionary only: DictionaryBatch vtable (10 bytes, padded to 12):
//	    id@8 data@4 isDelta@16; table at 48 (20 bytes): vtable, data, id@56, isDelta
//	p   RecordBatch vtable (12 bytes): length@8 nodes@4 buffers@16 compression@20
//	p+12 RecordBatch table (24 bytes): vtable, nodes, length, buffers, compression
//	p+36 BodyCompression vtable (6 bytes, padded to 8): codec@4; table (8 bytes)
//	p+52 nodes vector: count, 4 bytes pad... elements from p+60 (8-aligned)
//	     buffers vector likewise
//
// with p = 36 (record batch) or 68 (dictionary batch). The length is a
// multiple of 8.
func arrowBatchMeta(b []byte, typ byte, id int64, delta bool, rows, body int64, nodes [][2]int64, bufs [][]byte) []byte {
	p := 36
	if typ == arrowHeaderDictionary {
		p = 68
	}
	t := p + 12                // RecordBatch table
	c := t + 24                // BodyCompression vtable; its table at c+8
	q := c + 16                // nodes vector count at q+4, elements at q+8
	r := q + 8 + 16*len(nodes) // buffers vector count at r+4
	end := r + 8 + 16*len(bufs)
	start := len(b)
	b = append(b, make([]byte, end)...)
	m := b[start:]
	le := binary.LittleEndian
	u16 := func(at, v int) { le.PutUint16(m[at:], uint16(v)) }
	u32 := func(at, v int) { le.PutUint32(m[at:], uint32(v)) }
	i64 := func(at int, v int64) { le.PutUint64(m[at:], uint64(v)) }

	u32(0, 16)
	// Message
	u16(4, 12)
	u16(6, 20)
	u16(8, 16)  // version
	u16(10, 18) // header_type
	u16(12, 4)  // header
	u16(14, 8)  // bodyLength
	u32(16, 12)
	hdr := t
	if typ == arrowHeaderDictionary {
		hdr = 48
	}
	u32(20, hdr-20)
	i64(24, body)
	u16(32, arrowMetadataV5)
	m[34] = typ
	if typ == arrowHeaderDictionary {
		u16(36, 10)
		u16(38, 20)
		u16(40, 8)  // id
		u16(42, 4)  // data
		u16(44, 16) // isDelta
		u32(48, 48-36)
		u32(52, t-52)
		i64(56, id)
		if delta {
			m[64] = 1
		}
	}
	// RecordBatch
	u16(p, 12)
	u16(p+2, 24)
	u16(p+4, 8)  // length
	u16(p+6, 4)  // nodes
	u16(p+8, 16) // buffers
	u16(p+10, 20)
	u32(t, 12)
	u32(t+4, (q+4)-(t+4))
	i64(t+8, rows)
	u32(t+16, (r+4)-(t+16))
	u32(t+20, (c+8)-(t+20))
	// BodyCompression
	u16(c, 6)
	u16(c+2, 8)
	u16(c+4, 4) // codec
	u32(c+8, 8)
	m[c+12] = 1 // ZSTD
	// nodes
	u32(q+4, len(nodes))
	for i, n := range nodes {
		i64(q+8+16*i, n[0])
		i64(q+16+16*i, n[1])
	}
	// buffers
	u32(r+4, len(bufs))
	var off int64
	for i, buf := range bufs {
		i64(r+8+16*i, off)
		i64(r+16+16*i, int64(len(buf)))
		off += (int64(len(buf)) + 7) &^ 7
	}
	return b
}
