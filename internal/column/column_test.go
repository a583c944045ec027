package column

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// check appends vals to a column and reads every one back, before and
// after Seal.
func check(t *testing.T, name string, vals []uint64) *Uints {
	t.Helper()
	var c Uints
	for _, v := range vals {
		c.Append(v)
	}
	for pass := 0; pass < 2; pass++ {
		if c.Len() != len(vals) {
			t.Fatalf("%s: Len %d, want %d", name, c.Len(), len(vals))
		}
		for i, v := range vals {
			if g := c.At(i); g != v {
				t.Fatalf("%s (sealed %v): At(%d) = %d, want %d", name, pass == 1, i, g, v)
			}
		}
		checkValues(t, name, &c, vals)
		c.Seal()
	}
	return &c
}

// checkValues reads vals back with Values: all at once, in chunks that
// cross the blocks' bounds, and past the end.
func checkValues(t *testing.T, name string, c *Uints, vals []uint64) {
	t.Helper()
	if got := c.Values(0, make([]uint64, len(vals)+5)); !slices.Equal(got, vals) {
		t.Fatalf("%s: Values(0) gives %d values, not the %d appended", name, len(got), len(vals))
	}
	buf := make([]uint64, blockLen/3+1)
	for from := 0; from < len(vals); from += len(buf) {
		if got, want := c.Values(from, buf), vals[from:min(from+len(buf), len(vals))]; !slices.Equal(got, want) {
			t.Fatalf("%s: Values(%d) differs", name, from)
		}
	}
	if got := c.Values(len(vals), buf); len(got) != 0 {
		t.Fatalf("%s: Values at the end gives %d values", name, len(got))
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3*blockLen + 17
	gen := map[string]func(i int) uint64{
		"constant": func(int) uint64 { return 42 },
		"zeros":    func(int) uint64 { return 0 },
		"max":      func(int) uint64 { return math.MaxUint64 },
		"counter":  func(i int) uint64 { return uint64(i) },
		"wide":     func(int) uint64 { return r.Uint64() },
		"zero-or-big": func(i int) uint64 {
			if i%3 == 0 {
				return 0
			}
			return 1<<40 + uint64(r.IntN(1000))
		},
		"zero-or-max": func(i int) uint64 {
			if i%2 == 0 {
				return 0
			}
			return math.MaxUint64 - uint64(r.IntN(3))
		},
		"bytes3": func(int) uint64 { return 1<<30 + uint64(r.IntN(1<<20)) },
	}
	for name, g := range gen {
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = g(i)
		}
		check(t, name, vals)
	}
}

// Widths: a block of equal values takes no bytes, a block of small
// differences one byte per value.
func TestWidth(t *testing.T) {
	vals := make([]uint64, blockLen)
	for i := range vals {
		vals[i] = 1 << 50
	}
	if c := check(t, "equal", vals); c.blocks[0].width != 0 || len(c.blocks[0].data) != 0 {
		t.Errorf("equal values: width %d, %d bytes", c.blocks[0].width, len(c.blocks[0].data))
	}
	for i := range vals {
		vals[i] = 1<<50 + uint64(i%200)
		if i%5 == 0 {
			vals[i] = 0
		}
	}
	if c := check(t, "small", vals); c.blocks[0].width != 1 || len(c.blocks[0].data) != blockLen {
		t.Errorf("differences below 255 with zeros: width %d, %d bytes", c.blocks[0].width, len(c.blocks[0].data))
	}
}

// Append after Seal: the short last block is taken back.
func TestAppendAfterSeal(t *testing.T) {
	var c Uints
	var want []uint64
	for round := range 3 {
		for i := range blockLen/2 + 7 {
			v := uint64(round*1_000_000 + i*i)
			c.Append(v)
			want = append(want, v)
		}
		c.Seal()
	}
	if c.Len() != len(want) {
		t.Fatalf("Len %d, want %d", c.Len(), len(want))
	}
	for i, v := range want {
		if g := c.At(i); g != v {
			t.Fatalf("At(%d) = %d, want %d", i, g, v)
		}
	}
}

// A sealed column holds about its coded bytes: its last arena trimmed.
func TestSealTrims(t *testing.T) {
	var c Uints
	n := 100_000
	for i := range n {
		c.Append(uint64(i%200) << 16) // 3 bytes a value
	}
	c.Seal()
	coded := 3 * n
	if b := c.Bytes(); b > coded+coded/8+4096 {
		t.Errorf("sealed column holds %d bytes for %d coded", b, coded)
	}
	for i := range n {
		if g := c.At(i); g != uint64(i%200)<<16 {
			t.Fatalf("At(%d) = %d after trim", i, g)
		}
	}
	p := c.Permuted([]int32{5, 4, 3})
	if p.At(0) != 5<<16 || p.At(2) != 3<<16 || p.Bytes() > 3*3+8+4096 {
		t.Errorf("Permuted: %d %d, %d bytes", p.At(0), p.At(2), p.Bytes())
	}
}

func TestPermuted(t *testing.T) {
	n := 2*blockLen + 5
	var c Uints
	perm := make([]int32, n)
	for i := range n {
		c.Append(uint64(i * 3))
		perm[i] = int32(n - 1 - i)
	}
	p := c.Permuted(perm[:n-1])
	if p.Len() != n-1 {
		t.Fatalf("Len %d, want %d", p.Len(), n-1)
	}
	for j := range n - 1 {
		if g, w := p.At(j), uint64(3*(n-1-j)); g != w {
			t.Fatalf("At(%d) = %d, want %d", j, g, w)
		}
	}
}

func TestTimes(t *testing.T) {
	vals := []int64{math.MinInt64, -5, 0, 7, math.MaxInt64, math.MinInt64 + 1, 1e18}
	var c Times
	for _, v := range vals {
		c.Append(v)
	}
	c.Seal()
	for i, v := range vals {
		if g := c.At(i); g != v {
			t.Errorf("At(%d) = %d, want %d", i, g, v)
		}
	}
	for _, sealed := range []bool{false, true} {
		var c Times
		n := blockLen + 3
		want := make([]int64, n)
		for i := range n {
			want[i] = vals[i%len(vals)]
			c.Append(want[i])
		}
		if sealed {
			c.Seal()
		}
		if got := c.Values(0, make([]int64, n)); !slices.Equal(got, want) {
			t.Errorf("sealed %v: Values differ from the times appended", sealed)
		}
		if got := c.Values(n-2, make([]int64, 5)); !slices.Equal(got, want[n-2:]) {
			t.Errorf("sealed %v: Values(%d) = %v, want %v", sealed, n-2, got, want[n-2:])
		}
	}
	p := c.Permuted([]int32{6, 0, 3})
	if p.Len() != 3 || p.At(0) != 1e18 || p.At(1) != math.MinInt64 || p.At(2) != 7 {
		t.Errorf("Permuted: %d %d %d", p.At(0), p.At(1), p.At(2))
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 2, 255, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var vals []uint64
		for i := 0; i+8 <= len(data); i += 8 {
			var v uint64
			for k := 0; k < 8; k++ {
				v = v<<8 | uint64(data[i+k])
			}
			// Repeat to fill more than a block.
			for range 1 + int(data[i]) {
				vals = append(vals, v>>(data[i+1]%64))
			}
		}
		check(t, "fuzz", vals)
	})
}
