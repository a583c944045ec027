package column

import "testing"

// BenchmarkAppendRows appends rows of 22 fields, one per column, as a diff
// side's request table does: times that grow, small counts, ids.
func BenchmarkAppendRows(b *testing.B) {
	const fields = 22
	cols := make([]Uints, fields)
	b.ReportAllocs()
	t := uint64(1 << 40)
	for i := 0; b.Loop(); i++ {
		t += 37_000
		for f := range cols {
			switch f % 3 {
			case 0:
				cols[f].Append(t + uint64(f)*1000)
			case 1:
				cols[f].Append(uint64(i & 7))
			default:
				cols[f].Append(uint64(i))
			}
		}
	}
}

// rampColumn returns a sealed column of n values 37,000 apart from 2^40.
func rampColumn(n int) *Uints {
	c := new(Uints)
	for i := range n {
		c.Append(uint64(1<<40 + i*37_000))
	}
	c.Seal()
	return c
}

// BenchmarkAt reads back every value of a sealed column in order.
func BenchmarkAt(b *testing.B) {
	const n = 1 << 20
	c := rampColumn(n)
	b.ResetTimer()
	var s uint64
	for i := 0; b.Loop(); i++ {
		s += c.At(i & (n - 1))
	}
	_ = s
}

// BenchmarkValues reads back every value of a sealed column in order, as
// BenchmarkAt, a chunk of 1024 at a time with Values.
func BenchmarkValues(b *testing.B) {
	const n = 1 << 20
	c := rampColumn(n)
	buf := make([]uint64, 1024)
	b.ResetTimer()
	var s uint64
	for b.Loop() {
		for from := 0; from < n; from += len(buf) {
			for _, v := range c.Values(from, buf) {
				s += v
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
	_ = s
}
