package arrowfile

import (
	"encoding/binary"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Column builders of the Arrow writers. Rather than arrow-go's generic
// builders (a capacity check and a validity bit per append), each column
// owns allocator buffers sized for a whole batch and the writer stores
// values in place: row i of a batch is v[i]. Nullable columns start each
// batch zeroed with all rows null, and a row becomes valid when set, so
// columns that most rows leave null cost nothing per row. At the end of a
// batch each column hands its buffers to the batch encoder (put, see
// enc.go) as they are, and the buffers are reused for the next batch.

type arrowNum interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// arrowBuf is a reusable allocator buffer per slot: writers whose batches
// are compressed in the background alternate between two (see arrowEnc).
type arrowBuf struct{ b [2]*memory.Buffer }

// bytes returns slot's buffer resized to n bytes, zeroed if zero is set.
func (a *arrowBuf) bytes(mem memory.Allocator, slot, n int, zero bool) []byte {
	if a.b[slot] == nil {
		a.b[slot] = memory.NewResizableBuffer(mem)
	}
	a.b[slot].Resize(n)
	p := a.b[slot].Bytes()
	if zero {
		clear(p)
	}
	return p
}

// fresh reports whether slot's buffer is not n bytes long.
func (a *arrowBuf) fresh(slot, n int) bool { return a.b[slot] == nil || a.b[slot].Len() != n }

func (a *arrowBuf) release() {
	for i, b := range a.b {
		if b != nil {
			b.Release()
			a.b[i] = nil
		}
	}
}

// arrowBits returns the bytes of a bitmap of n bits.
func arrowBits(n int) int { return (n + 7) / 8 }

// arrowPutBits hands a validity bitmap to the encoder: none without nulls.
func arrowPutBits(e *arrowEnc, n, nvalid int, bits []byte) {
	e.node(n, n-nvalid)
	if nvalid < n {
		e.buf(bits[:arrowBits(n)])
	} else {
		e.buf(nil)
	}
}

// arrowFixed is a fixed-width column.
type arrowFixed[T arrowNum] struct {
	nullable bool
	vals     arrowBuf
	valid    arrowBuf
	v        []T    // values of the batch
	raw      []byte // the same, as bytes
	bits     []byte // validity bitmap, nullable columns only
	nvalid   int    // rows set, nullable columns only
	slot     int
	dirty    [2]bool // slot's buffers hold values set since zeroed
}

// reset starts a batch of rows rows in slot's buffers.
func (c *arrowFixed[T]) reset(mem memory.Allocator, rows, slot int) {
	var zero T
	size := rows * int(unsafe.Sizeof(zero))
	// A nullable column's buffers need zeroing only if rows were set the
	// last time they were used: a column left null stays zero.
	if c.nvalid > 0 {
		c.dirty[c.slot] = true
	}
	c.slot, c.nvalid = slot, 0
	clean := c.nullable && (c.vals.fresh(slot, size) || c.dirty[slot])
	c.raw = c.vals.bytes(mem, slot, size, clean)
	c.v = arrow.GetData[T](c.raw)
	if c.nullable {
		c.bits = c.valid.bytes(mem, slot, arrowBits(rows), clean || c.valid.fresh(slot, arrowBits(rows)))
		c.dirty[slot] = false
	}
}

// set stores a valid value in row i, which must not have been set before.
func (c *arrowFixed[T]) set(i int, x T) {
	c.v[i] = x
	if c.nullable {
		c.bits[i>>3] |= 1 << (i & 7)
		c.nvalid++
	}
}

// put hands the first n rows to the batch encoder.
func (c *arrowFixed[T]) put(e *arrowEnc, n int) {
	var zero T
	nvalid := n
	if c.nullable {
		nvalid = c.nvalid
	}
	arrowPutBits(e, n, nvalid, c.bits)
	e.buf(c.raw[:n*int(unsafe.Sizeof(zero))])
}

func (c *arrowFixed[T]) release() { c.vals.release(); c.valid.release() }

// arrowBools is a nullable boolean column.
type arrowBools struct {
	vals, valid arrowBuf
	v, bits     []byte
	nvalid      int
}

func (c *arrowBools) reset(mem memory.Allocator, rows, slot int) {
	n := arrowBits(rows)
	c.v = c.vals.bytes(mem, slot, n, true)
	c.bits = c.valid.bytes(mem, slot, n, true)
	c.nvalid = 0
}

func (c *arrowBools) set(i int, x bool) {
	if x {
		bitutil.SetBit(c.v, i)
	}
	bitutil.SetBit(c.bits, i)
	c.nvalid++
}

func (c *arrowBools) put(e *arrowEnc, n int) {
	arrowPutBits(e, n, c.nvalid, c.bits)
	e.buf(c.v[:arrowBits(n)])
}

func (c *arrowBools) release() { c.vals.release(); c.valid.release() }

// arrowStrings is a nullable utf8 column: rows not set are null (with an
// empty value).
type arrowStrings struct {
	offs, valid arrowBuf
	o           []int32
	raw         []byte // o as bytes
	bits        []byte
	buf         []byte    // value bytes of the batch
	bufs        [2][]byte // each slot's value bytes, kept for their capacity
	slot        int
	last        int // rows whose offsets are filled in
	nvalid      int
}

func (c *arrowStrings) reset(mem memory.Allocator, rows, slot int) {
	c.bufs[c.slot] = c.buf
	c.slot = slot
	c.raw = c.offs.bytes(mem, slot, 4*(rows+1), false)
	c.o = arrow.GetData[int32](c.raw)
	c.o[0] = 0
	c.bits = c.valid.bytes(mem, slot, arrowBits(rows), true)
	c.buf = c.bufs[slot][:0]
	c.last = 0
	c.nvalid = 0
}

// fill extends the offsets of rows up to i (exclusive) as empty.
func (c *arrowStrings) fill(i int) {
	end := int32(len(c.buf))
	for ; c.last < i; c.last++ {
		c.o[c.last+1] = end
	}
}

func (c *arrowStrings) set(i int, s string) {
	c.fill(i)
	c.buf = append(c.buf, s...)
	c.o[i+1] = int32(len(c.buf))
	c.last = i + 1
	bitutil.SetBit(c.bits, i)
	c.nvalid++
}

func (c *arrowStrings) put(e *arrowEnc, n int) {
	c.fill(n)
	arrowPutBits(e, n, c.nvalid, c.bits)
	e.buf(c.raw[:4*(n+1)])
	e.buf(c.buf)
}

func (c *arrowStrings) release() { c.offs.release(); c.valid.release() }

// arrowDict is the dictionary of a dictionary-encoded column, fixed for the
// file (arrowFixedDict) and sent once, before the first record batch. The
// IPC file format has no room for more: pyarrow, Polars and DuckDB refuse
// delta or replacement dictionaries in a file, so columns whose values are
// learnt as the file is written (comm, cgroup_path) are plain utf8.
type arrowDict struct {
	id     int64 // dictionary id, as arrow-go numbers them: dictionary fields in schema order from 0
	values []string
	sent   int // values already handed to the encoder
	offs   [2][]byte
	data   [2][]byte
}

// pending reports whether the dictionary has values not yet written.
func (d *arrowDict) pending() bool { return d.sent < len(d.values) }

// put adds the values added since the last call to the job being built as
// a dictionary batch, a delta unless it is the first.
func (d *arrowDict) put(e *arrowEnc) {
	vals := d.values[d.sent:]
	offs, data := d.offs[e.slot][:0], d.data[e.slot][:0]
	offs = binary.LittleEndian.AppendUint32(offs, 0)
	for _, v := range vals {
		data = append(data, v...)
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(data)))
	}
	d.offs[e.slot], d.data[e.slot] = offs, data
	e.node(len(vals), 0)
	e.buf(nil)
	e.buf(offs)
	e.buf(data)
	e.end(len(vals), true, d.id, d.sent > 0)
	d.sent = len(d.values)
}

// arrowFixedDict is a dictionary column with a dictionary fixed for the
// file; the writer stores indices in idx directly.
type arrowFixedDict struct {
	idx  arrowFixed[int8]
	dict arrowDict
}

func newArrowFixedDict(values []string, nullable bool) *arrowFixedDict {
	return &arrowFixedDict{idx: arrowFixed[int8]{nullable: nullable}, dict: arrowDict{values: values}}
}

func (c *arrowFixedDict) put(e *arrowEnc, n int) { c.idx.put(e, n) }

func (c *arrowFixedDict) release() { c.idx.release() }
