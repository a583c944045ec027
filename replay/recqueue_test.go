package replay

import (
	"math/rand/v2"
	"testing"
)

// TestRecQueueFIFO pushes, pops and clears at random, across many blocks
// and back to empty, and checks the queue against a slice of what it
// should hold.
func TestRecQueueFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]Record, 10*recBlock)
	var q recQueue
	var want []*Record
	next := 0
	for step := 0; step < 200_000; step++ {
		switch k := rng.IntN(100); {
		case k == 0:
			if n := q.clear(); n != len(want) {
				t.Fatalf("step %d: clear dropped %d, want %d", step, n, len(want))
			}
			want = want[:0]
		case k < 55 || len(want) == 0:
			r := &recs[next%len(recs)]
			next++
			q.push(r)
			want = append(want, r)
		default:
			q.pop()
			want = want[1:]
		}
		if q.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), len(want))
		}
		var w *Record
		if len(want) > 0 {
			w = want[0]
		}
		if got := q.front(); got != w {
			t.Fatalf("step %d: front %p, want %p", step, got, w)
		}
	}
	for len(want) > 0 {
		if q.front() != want[0] {
			t.Fatalf("draining: front %p, want %p", q.front(), want[0])
		}
		q.pop()
		want = want[1:]
	}
	if q.len() != 0 || q.front() != nil {
		t.Fatalf("drained queue: len %d, front %p", q.len(), q.front())
	}
}

// BenchmarkRecQueue is a process's queue of records read ahead for it in
// one replay: 1 M records pushed to a new queue while the process waits,
// then popped as they arrive. (The one growing slice it replaces took
// about 5 times as long, 110-160 ns a record, and allocated 45 MB.)
func BenchmarkRecQueue(b *testing.B) {
	const n = 1 << 20
	r := &Record{}
	b.ReportAllocs()
	for b.Loop() {
		var q recQueue
		for range n {
			q.push(r)
		}
		for range n {
			q.pop()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}
