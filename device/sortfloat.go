package device

import (
	"math"
	"slices"
)

// radixMin is the shortest slice sortFloats sorts by radix; shorter ones
// go to slices.Sort.
const radixMin = 1 << 12

// sortFloats sorts xs in increasing order, as slices.Sort does: an LSD
// radix sort of the values' IEEE 754 bits (mapped so that unsigned order
// is numeric order), 11 bits a pass, passes skipped where every value
// shares the digit. Equal values have equal bits, so the result is the
// same slice slices.Sort makes; a slice holding a NaN or a negative zero
// (whose place among equal values slices.Sort leaves open), and one nearly
// sorted already, is given to slices.Sort itself.
func sortFloats(xs []float64) {
	n := len(xs)
	if n < radixMin || nearlySorted(xs) {
		slices.Sort(xs)
		return
	}
	keys := make([]uint64, n)
	for i, x := range xs {
		u := math.Float64bits(x)
		if x != x || u == 1<<63 {
			slices.Sort(xs)
			return
		}
		if u>>63 != 0 {
			u = ^u
		} else {
			u |= 1 << 63
		}
		keys[i] = u
	}
	radixU64(keys)
	for i, u := range keys {
		if u>>63 != 0 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		xs[i] = math.Float64frombits(u)
	}
}

// nearlySorted reports whether fewer than one value in 16 is below the
// one before it (completion times in issue order): slices.Sort's pattern-
// defeating quicksort beats a radix sort there.
func nearlySorted(xs []float64) bool {
	descents := 0
	for i := 1; i < len(xs); i++ {
		if xs[i] < xs[i-1] {
			descents++
		}
	}
	return descents < len(xs)/16
}

// radixU64 sorts keys in increasing order (LSD radix, 11-bit digits).
func radixU64(keys []uint64) {
	const bits = 11
	const size = 1 << bits
	n := len(keys)
	var counts [6][size]int
	for _, k := range keys {
		for p := range 6 {
			counts[p][(k>>(p*bits))&(size-1)]++
		}
	}
	buf := make([]uint64, n)
	src, dst := keys, buf
	for p := range 6 {
		c := &counts[p]
		if c[(src[0]>>(p*bits))&(size-1)] == n {
			continue // every key has this digit
		}
		sum := 0
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		shift := uint(p * bits)
		for _, k := range src {
			d := (k >> shift) & (size - 1)
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// radixPairs sorts keys in increasing order, stably, moving vals with them
// (LSD radix, 11-bit digits).
func radixPairs(keys []uint64, vals []int32) {
	const bits = 11
	const size = 1 << bits
	n := len(keys)
	if n == 0 {
		return
	}
	var counts [6][size]int
	for _, k := range keys {
		for p := range 6 {
			counts[p][(k>>(p*bits))&(size-1)]++
		}
	}
	kbuf := make([]uint64, n)
	vbuf := make([]int32, n)
	ks, kd, vs, vd := keys, kbuf, vals, vbuf
	for p := range 6 {
		c := &counts[p]
		if c[(ks[0]>>(p*bits))&(size-1)] == n {
			continue
		}
		sum := 0
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		shift := uint(p * bits)
		for i, k := range ks {
			d := (k >> shift) & (size - 1)
			kd[c[d]] = k
			vd[c[d]] = vs[i]
			c[d]++
		}
		ks, kd, vs, vd = kd, ks, vd, vs
	}
	if &ks[0] != &keys[0] {
		copy(keys, ks)
		copy(vals, vs)
	}
}
