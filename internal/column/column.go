// Package column stores long sequences of integers compactly, for the
// per-bio and per-request tables of a diff side and a replay's workload:
// an append-only column in fixed blocks, each block coded against its own
// frame of reference (its least value) in the fewest whole bytes that hold
// its largest difference. A block of equal values takes no bytes; times
// within a block of a few thousand events, counts, sizes and interned ids
// take one to four.
//
// Zero is kept apart: a block that mixes zeros with other values codes
// zero as 0 and the others against their own least, so a column of
// "unknown (0) or a large value" (an unobserved time, a cgroup id) stays
// narrow. Blocks hold no pointers for the garbage collector to scan.
package column

import (
	"encoding/binary"
	"math"
)

// blockBits: a block holds 1<<blockBits values.
const (
	blockBits = 12
	blockLen  = 1 << blockBits
	blockMask = blockLen - 1
)

// Uints is an append-only column of uint64 values, read by position.
// The zero value is an empty column. Append adds at the end; At reads any
// position below Len.
type Uints struct {
	blocks []block  // every one full (blockLen values) but perhaps the last
	open   []uint64 // the values after them, not yet coded (len < blockLen)
	n      int      // values in blocks
	arena  []byte   // where the next blocks' data go (see alloc)
	// arenaFrom: the first of the blocks whose data are in arena.
	arenaFrom int
}

// block is blockLen values (fewer only for the last block of a sealed
// column), value i coded in data[i*width:] little-endian, width bytes.
type block struct {
	base  uint64 // added to every code but a zero code in a null block
	mask  uint64 // 1<<(8*width)-1
	width uint8  // bytes per value, 0..8
	null  bool   // code 0 is the value 0 (the block mixes 0 with others)
	n     uint16 // values
	data  []byte
}

// Len returns the number of values.
func (c *Uints) Len() int { return c.n + len(c.open) }

// Append adds v at the end.
func (c *Uints) Append(v uint64) {
	if uint(len(c.open)-1) < blockLen-2 { // 0 < len < blockLen-1
		c.open = append(c.open, v)
		return
	}
	c.appendSlow(v)
}

// appendSlow is Append at the start or the end of a block.
func (c *Uints) appendSlow(v uint64) {
	if c.open == nil {
		c.open = make([]uint64, 0, blockLen)
		if k := len(c.blocks) - 1; k >= 0 && c.blocks[k].n < blockLen {
			// Sealed with a short last block: take its values back.
			for i := k << blockBits; i < c.n; i++ {
				c.open = append(c.open, c.At(i))
			}
			c.n -= len(c.open)
			c.blocks = c.blocks[:k]
		}
	}
	c.open = append(c.open, v)
	if len(c.open) == blockLen {
		c.blocks = append(c.blocks, c.code(c.open))
		c.n += blockLen
		c.open = c.open[:0]
	}
}

// Seal codes the values not yet coded and drops the staging buffer: call it
// when the column is complete (an Append after Seal decodes the last
// block again).
func (c *Uints) Seal() {
	if len(c.open) > 0 {
		c.blocks = append(c.blocks, c.code(c.open))
		c.n += len(c.open)
	}
	c.open = nil
	c.trim()
}

// trim moves the data of the blocks in the arena to a new one of their
// size (and the 8 readable bytes), when the arena is mostly unused: the
// last arena of a sealed column is as large as all before it.
func (c *Uints) trim() {
	used := len(c.arena)
	if cap(c.arena)-used <= used/8+8 {
		return
	}
	a := make([]byte, used, used+8)
	copy(a, c.arena)
	off := 0
	for k := c.arenaFrom; k < len(c.blocks); k++ {
		b := &c.blocks[k]
		if n := len(b.data); n > 0 {
			b.data = a[off : off+n : used+8]
			off += n
		}
	}
	c.arena = a
}

// At returns the value at position i (0 <= i < Len). It is small enough
// to inline: every block's data is followed by at least 8 readable bytes
// (see alloc), so one 8-byte load decodes any value.
func (c *Uints) At(i int) uint64 {
	if i >= c.n {
		return c.open[i-c.n]
	}
	b := &c.blocks[i>>blockBits]
	off := (i & blockMask) * int(b.width)
	v := binary.LittleEndian.Uint64(b.data[off:off+8]) & b.mask
	if v == 0 && b.null {
		return 0
	}
	return b.base + v
}

// Values writes the values at positions from, from+1, ... into dst, as
// many as dst holds and the column has, and returns them (dst[:n]). A pass
// over the column in chunks of Values decodes each block's values in one
// tight loop: about half an At's cost a value.
func (c *Uints) Values(from int, dst []uint64) []uint64 { return values(c, from, 0, dst) }

// Values is Uints.Values for times.
func (c *Times) Values(from int, dst []int64) []int64 { return values(&c.u, from, 1<<63, dst) }

// values is Values with each coded value XORed with flip (Times' sign
// flip).
func values[T uint64 | int64](c *Uints, from int, flip uint64, dst []T) []T {
	n := max(min(len(dst), c.Len()-from), 0)
	dst = dst[:n]
	for o := 0; o < n; {
		i := from + o
		if i >= c.n { // the staging values past the coded blocks
			for j, v := range c.open[i-c.n : i-c.n+n-o] {
				dst[o+j] = T(v ^ flip)
			}
			break
		}
		b := &c.blocks[i>>blockBits]
		j0 := i & blockMask
		j1 := min(int(b.n), j0+n-o)
		out := dst[o : o+j1-j0]
		switch {
		case b.width == 0:
			v := T(b.base ^ flip) // all equal; an all-zeros block has base 0
			for j := range out {
				out[j] = v
			}
		case b.null:
			w, base, mask := int(b.width), b.base, b.mask
			d := b.data[j0*w : cap(b.data)]
			for j := range out {
				v := binary.LittleEndian.Uint64(d[j*w:j*w+8]) & mask
				if v != 0 {
					v += base
				}
				out[j] = T(v ^ flip)
			}
		default:
			w, base, mask := int(b.width), b.base, b.mask
			d := b.data[j0*w : cap(b.data)]
			for j := range out {
				out[j] = T((base + binary.LittleEndian.Uint64(d[j*w:j*w+8])&mask) ^ flip)
			}
		}
		o += j1 - j0
	}
	return dst
}

// arenaMin and arenaMax bound the size of the byte arenas blocks are
// allocated from: they double from arenaMin, so a short column holds
// little.
const (
	arenaMin = 16 << 10
	arenaMax = 1 << 20
)

// padding: the readable bytes after every block's data.
var padding [8]byte

// alloc returns n bytes for a block, with at least 8 more readable bytes
// after them (within the slice's capacity), from the column's arena.
func (c *Uints) alloc(n int) []byte {
	if n == 0 {
		return padding[:0:8]
	}
	if cap(c.arena)-len(c.arena) < n+8 {
		size := min(max(2*cap(c.arena), arenaMin), arenaMax)
		c.arena = make([]byte, 0, max(size, n+8))
		c.arenaFrom = len(c.blocks)
	}
	start := len(c.arena)
	c.arena = c.arena[:start+n]
	return c.arena[start : start+n : cap(c.arena)]
}

// Permuted returns a new sealed column whose value j is c's value
// perm[j].
func (c *Uints) Permuted(perm []int32) Uints {
	out := Uints{n: len(perm)}
	vals := make([]uint64, blockLen)
	for len(perm) > 0 {
		k := min(len(perm), blockLen)
		for j, i := range perm[:k] {
			vals[j] = c.At(int(i))
		}
		out.blocks = append(out.blocks, out.code(vals[:k]))
		perm = perm[k:]
	}
	out.trim()
	return out
}

// Bytes returns the memory the column holds, in bytes (coded blocks and
// the staging buffer).
func (c *Uints) Bytes() int {
	n := cap(c.open)*8 + cap(c.blocks)*48 + cap(c.arena) - len(c.arena)
	for i := range c.blocks {
		n += len(c.blocks[i].data)
	}
	return n
}

// code codes vals (1..blockLen values) into a block.
func (c *Uints) code(vals []uint64) block {
	if allEqual(vals) { // many a column's blocks: no bytes, one compare a value
		return block{base: vals[0], n: uint16(len(vals)), data: c.alloc(0)}
	}
	// Branch-free reductions: the least value (0 when there are zeros),
	// the least value less one (a zero wraps to the top, so this is the
	// least nonzero value less one), and the greatest (0: all zeros).
	mn, lo1, hi := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(0)
	for _, v := range vals {
		mn = min(mn, v)
		lo1 = min(lo1, v-1)
		hi = max(hi, v)
	}
	b := block{n: uint16(len(vals))}
	switch {
	case hi == 0: // all zeros
		b.data = c.alloc(0)
		return b
	case mn != 0:
		b.base = mn
	default:
		// 0 codes the value 0; v codes as v-base >= 1.
		b.base, b.null = lo1, true
	}
	span := hi - b.base
	w := 0
	for s := span; s != 0; s >>= 8 {
		w++
	}
	b.width = uint8(w)
	if w == 8 {
		b.mask = math.MaxUint64
	} else {
		b.mask = 1<<(8*w) - 1
	}
	b.data = c.alloc(w * len(vals))
	if w == 0 {
		return b
	}
	// Each value is written as 8 bytes, its bytes past w overwritten by
	// the next values; the last one's reach into the 8 readable bytes
	// after the data (alloc), not yet anyone's.
	d := b.data[:cap(b.data)]
	base, o := b.base, 0
	if b.null {
		for _, v := range vals {
			code := v - base
			if v == 0 {
				code = 0
			}
			binary.LittleEndian.PutUint64(d[o:o+8], code)
			o += w
		}
	} else {
		for _, v := range vals {
			binary.LittleEndian.PutUint64(d[o:o+8], v-base)
			o += w
		}
	}
	return b
}

// allEqual reports whether every value of vals (at least one) is the
// first.
func allEqual(vals []uint64) bool {
	v0 := vals[0]
	for _, v := range vals {
		if v != v0 {
			return false
		}
	}
	return true
}

// Times is a column of signed 64-bit values (times in ns, where
// math.MinInt64 is the "not observed" mark, so it codes as the zero kept
// apart).
type Times struct{ u Uints }

// Len returns the number of values.
func (c *Times) Len() int { return c.u.Len() }

// Append adds t at the end.
func (c *Times) Append(t int64) { c.u.Append(uint64(t) ^ 1<<63) }

// At returns the value at position i.
func (c *Times) At(i int) int64 { return int64(c.u.At(i) ^ 1<<63) }

// Seal is Uints.Seal.
func (c *Times) Seal() { c.u.Seal() }

// Permuted is Uints.Permuted.
func (c *Times) Permuted(perm []int32) Times { return Times{c.u.Permuted(perm)} }

// Bytes is Uints.Bytes.
func (c *Times) Bytes() int { return c.u.Bytes() }
