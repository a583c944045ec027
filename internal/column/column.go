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
	blocks []block
	open   []uint64 // the last block's values, not yet coded (len < blockLen)
	n      int
}

// block is blockLen values (fewer only for the last block of a sealed
// column), value i coded in data[i*width:] little-endian, width bytes.
type block struct {
	base  uint64 // added to every code but a zero code in a null block
	mask  uint64 // 1<<(8*width)-1
	width uint8  // bytes per value, 0..8
	null  bool   // code 0 is the value 0 (the block mixes 0 with others)
	data  []byte
}

// Len returns the number of values.
func (c *Uints) Len() int { return c.n }

// Append adds v at the end.
func (c *Uints) Append(v uint64) {
	if c.open == nil {
		c.open = make([]uint64, 0, blockLen)
	}
	c.open = append(c.open, v)
	c.n++
	if len(c.open) == blockLen {
		c.blocks = append(c.blocks, code(c.open))
		c.open = c.open[:0]
	}
}

// Seal codes the values not yet coded and drops the staging buffer: call it
// when the column is complete. Append after Seal starts a new staging buffer
// and is still correct, but leaves a short block behind.
func (c *Uints) Seal() {
	if len(c.open) > 0 {
		c.blocks = append(c.blocks, code(c.open))
	}
	c.open = nil
}

// At returns the value at position i (0 <= i < Len).
func (c *Uints) At(i int) uint64 {
	k := i >> blockBits
	if k < len(c.blocks) {
		return c.blocks[k].at(i & blockMask)
	}
	return c.open[i&blockMask]
}

func (b *block) at(j int) uint64 {
	off := j * int(b.width)
	var v uint64
	if off+8 <= len(b.data) {
		v = binary.LittleEndian.Uint64(b.data[off:]) & b.mask
	} else {
		for k := int(b.width) - 1; k >= 0; k-- {
			v = v<<8 | uint64(b.data[off+k])
		}
	}
	if v == 0 && b.null {
		return 0
	}
	return b.base + v
}

// Permuted returns a new sealed column whose value j is c's value
// perm[j].
func (c *Uints) Permuted(perm []int32) Uints {
	var out Uints
	for _, i := range perm {
		out.Append(c.At(int(i)))
	}
	out.Seal()
	return out
}

// Bytes returns the memory the column holds, in bytes (coded blocks and
// the staging buffer).
func (c *Uints) Bytes() int {
	n := cap(c.open)*8 + cap(c.blocks)*40
	for i := range c.blocks {
		n += cap(c.blocks[i].data)
	}
	return n
}

// code codes vals (1..blockLen values) into a block.
func code(vals []uint64) block {
	lo, hi := uint64(math.MaxUint64), uint64(0)
	zero := false
	for _, v := range vals {
		if v == 0 {
			zero = true
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	b := block{}
	switch {
	case lo > hi: // all zeros
		return b
	case !zero:
		b.base = lo
	default:
		// 0 codes the value 0; v codes as v-base >= 1.
		b.base, b.null = lo-1, true
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
	if w == 0 {
		return b
	}
	b.data = make([]byte, w*len(vals))
	var buf [8]byte
	for i, v := range vals {
		c := uint64(0)
		if v != 0 || !b.null {
			c = v - b.base
		}
		binary.LittleEndian.PutUint64(buf[:], c)
		copy(b.data[i*w:], buf[:w])
	}
	return b
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
