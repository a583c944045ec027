package olddiff

import (
	"cmp"
	"slices"
)

// radixSort sorts a by t, stably, with a least-significant-digit radix sort
// on 16-bit digits of t-min(t): O(n) per pass, as many passes as the range
// of t needs (at most 4). Short slices go to a comparison sort. buf, if at
// least len(a) long, is used as scratch.
func radixSort(a []keyed, buf []keyed) {
	n := len(a)
	if n < 2 {
		return
	}
	if n < 4096 {
		slices.SortStableFunc(a, func(x, y keyed) int { return cmp.Compare(x.t, y.t) })
		return
	}
	lo, hi := a[0].t, a[0].t
	for _, e := range a {
		lo = min(lo, e.t)
		hi = max(hi, e.t)
	}
	span := uint64(hi - lo)
	if span == 0 {
		return
	}
	if len(buf) < n {
		buf = make([]keyed, n)
	}
	buf = buf[:n]
	src, dst := a, buf
	var count [1 << 16]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += 16 {
		clear(count[:])
		for _, e := range src {
			count[(uint64(e.t-lo)>>shift)&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, e := range src {
			d := (uint64(e.t-lo) >> shift) & 0xffff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}
