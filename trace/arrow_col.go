package trace

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Column builders of the Arrow writers. Rather than arrow-go's generic
// builders (a capacity check and a validity bit per append), each column
// owns allocator buffers sized for a whole batch and the writer stores
// values in place: row i of a batch is v[i]. Nullable columns start each
// batch zeroed with all rows null, and a row becomes valid when set, so
// columns that most rows leave null cost nothing per row. The buffers are
// reused from batch to batch: after the IPC writer has encoded a batch,
// the column holds the only reference again.

type arrowNum interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// arrowBuf is one reusable allocator buffer.
type arrowBuf struct{ b *memory.Buffer }

// bytes returns the buffer resized to n bytes, zeroed if zero is set.
func (a *arrowBuf) bytes(mem memory.Allocator, n int, zero bool) []byte {
	if a.b == nil {
		a.b = memory.NewResizableBuffer(mem)
	}
	a.b.Resize(n)
	p := a.b.Bytes()
	if zero {
		clear(p)
	}
	return p
}

func (a *arrowBuf) release() {
	if a.b != nil {
		a.b.Release()
		a.b = nil
	}
}

// arrowFixed is a fixed-width column.
type arrowFixed[T arrowNum] struct {
	typ      arrow.DataType
	nullable bool
	vals     arrowBuf
	valid    arrowBuf
	v        []T    // values of the batch
	bits     []byte // validity bitmap, nullable columns only
}

func (c *arrowFixed[T]) reset(mem memory.Allocator, rows int) {
	width := c.typ.(arrow.FixedWidthDataType).BitWidth() / 8
	c.v = arrow.GetData[T](c.vals.bytes(mem, rows*width, c.nullable))
	if c.nullable {
		c.bits = c.valid.bytes(mem, int(bitutil.BytesForBits(int64(rows))), true)
	}
}

// set stores a valid value in row i.
func (c *arrowFixed[T]) set(i int, x T) {
	c.v[i] = x
	if c.nullable {
		bitutil.SetBit(c.bits, i)
	}
}

// data returns the first n rows as array data, with a dictionary if dict
// is not nil.
func (c *arrowFixed[T]) data(n int, typ arrow.DataType, dict arrow.ArrayData) arrow.ArrayData {
	bufs := []*memory.Buffer{nil, c.vals.b}
	nulls := 0
	if c.nullable {
		nulls = n - bitutil.CountSetBits(c.bits, 0, n)
		if nulls > 0 {
			bufs[0] = c.valid.b
		}
	}
	if typ == nil {
		typ = c.typ
	}
	if dict != nil {
		return array.NewDataWithDictionary(typ, n, bufs, nulls, 0, dict.(*array.Data))
	}
	return array.NewData(typ, n, bufs, nil, nulls, 0)
}

func (c *arrowFixed[T]) release() { c.vals.release(); c.valid.release() }

// arrowBools is a nullable boolean column.
type arrowBools struct {
	vals, valid arrowBuf
	v, bits     []byte
}

func (c *arrowBools) reset(mem memory.Allocator, rows int) {
	n := int(bitutil.BytesForBits(int64(rows)))
	c.v = c.vals.bytes(mem, n, true)
	c.bits = c.valid.bytes(mem, n, true)
}

func (c *arrowBools) set(i int, x bool) {
	if x {
		bitutil.SetBit(c.v, i)
	}
	bitutil.SetBit(c.bits, i)
}

func (c *arrowBools) data(n int) arrow.ArrayData {
	bufs := []*memory.Buffer{nil, c.vals.b}
	nulls := n - bitutil.CountSetBits(c.bits, 0, n)
	if nulls > 0 {
		bufs[0] = c.valid.b
	}
	return array.NewData(arrow.FixedWidthTypes.Boolean, n, bufs, nil, nulls, 0)
}

func (c *arrowBools) release() { c.vals.release(); c.valid.release() }

// arrowStrings is a nullable utf8 column for rare values: rows not set are
// null (with an empty value).
type arrowStrings struct {
	offs, valid, vals arrowBuf
	o                 []int32
	bits              []byte
	buf               []byte // value bytes of the batch, copied into vals at data
	last              int    // rows whose offsets are filled in
}

func (c *arrowStrings) reset(mem memory.Allocator, rows int) {
	c.o = arrow.GetData[int32](c.offs.bytes(mem, 4*(rows+1), false))
	c.o[0] = 0
	c.bits = c.valid.bytes(mem, int(bitutil.BytesForBits(int64(rows))), true)
	c.buf = c.buf[:0]
	c.last = 0
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
}

func (c *arrowStrings) data(mem memory.Allocator, n int) arrow.ArrayData {
	c.fill(n)
	copy(c.vals.bytes(mem, len(c.buf), false), c.buf)
	bufs := []*memory.Buffer{nil, c.offs.b, c.vals.b}
	nulls := n - bitutil.CountSetBits(c.bits, 0, n)
	if nulls > 0 {
		bufs[0] = c.valid.b
	}
	return array.NewData(arrow.BinaryTypes.String, n, bufs, nil, nulls, 0)
}

func (c *arrowStrings) release() { c.offs.release(); c.valid.release(); c.vals.release() }

// arrowDictStrings is a nullable dictionary-encoded string column whose
// dictionary grows over the whole file: each batch's dictionary extends the
// previous one, which the IPC writer sends as a delta. Entry 0 is the empty
// string and is never referenced by a valid row: it keeps the first
// dictionary non-empty, as arrow-go only emits deltas after a non-empty one.
type arrowDictStrings struct {
	idx      arrowFixed[int32]
	index    map[string]int32
	values   []string
	dict     arrow.Array // dictionary of values[:dictLen]
	last     string      // one-entry cache in front of index
	lastIdx  int32
	hasLast  bool
	arrowTyp arrow.DataType
}

func newArrowDictStrings() *arrowDictStrings {
	return &arrowDictStrings{
		idx:      arrowFixed[int32]{typ: arrow.PrimitiveTypes.Int32, nullable: true},
		index:    map[string]int32{"": 0},
		values:   []string{""},
		arrowTyp: arrowStringDict,
	}
}

func (c *arrowDictStrings) reset(mem memory.Allocator, rows int) { c.idx.reset(mem, rows) }

// set stores s in row i; "" leaves the row null.
func (c *arrowDictStrings) set(i int, s string) {
	if s == "" {
		return
	}
	if !c.hasLast || s != c.last {
		k, ok := c.index[s]
		if !ok {
			k = int32(len(c.values))
			c.values = append(c.values, s)
			c.index[s] = k
		}
		c.last, c.lastIdx, c.hasLast = s, k, true
	}
	c.idx.set(i, c.lastIdx)
}

func (c *arrowDictStrings) data(mem memory.Allocator, n int) arrow.ArrayData {
	if c.dict == nil || c.dict.Len() != len(c.values) {
		b := array.NewStringBuilder(mem)
		b.AppendValues(c.values, nil)
		d := b.NewArray()
		b.Release()
		if c.dict != nil {
			c.dict.Release()
		}
		c.dict = d
	}
	return c.idx.data(n, c.arrowTyp, c.dict.Data())
}

func (c *arrowDictStrings) release() {
	c.idx.release()
	if c.dict != nil {
		c.dict.Release()
		c.dict = nil
	}
}

// arrowFixedDict is a dictionary column with a dictionary fixed for the file.
type arrowFixedDict struct {
	idx  arrowFixed[int8]
	dict arrow.Array
}

func newArrowFixedDict(mem memory.Allocator, values []string, nullable bool) *arrowFixedDict {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	return &arrowFixedDict{idx: arrowFixed[int8]{typ: arrow.PrimitiveTypes.Int8, nullable: nullable}, dict: b.NewArray()}
}

func (c *arrowFixedDict) data(n int) arrow.ArrayData {
	return c.idx.data(n, arrowSmallDict, c.dict.Data())
}

func (c *arrowFixedDict) release() {
	c.idx.release()
	if c.dict != nil {
		c.dict.Release()
		c.dict = nil
	}
}
