package diff

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestTakeRequestOrder hands a Side requests 1..n in completion-like
// orders and checks that the finished Side has each at its ID's place,
// with its fields, and that a jittered order fills the table in ID order
// (nothing left for Finish to permute).
func TestTakeRequestOrder(t *testing.T) {
	const n = 200_000
	jitter := func(rng *rand.Rand, ids []uint64, by int) {
		for i := range ids { // each a few places late or early
			if j := i + rng.IntN(by); j < len(ids) {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	cases := map[string]struct {
		order   func(ids []uint64)
		inOrder bool // the table is filled in ID order
	}{
		"in order": {func([]uint64) {}, true},
		"jittered": {func(ids []uint64) { jitter(rand.New(rand.NewPCG(1, 1)), ids, 40) }, true},
		// Request 7 completes last of all: past the ring's bound, the
		// ring is given up on.
		"one stuck": {func(ids []uint64) {
			copy(ids[6:], ids[7:])
			ids[len(ids)-1] = 7
		}, false},
		"reversed": {func(ids []uint64) { slices.Reverse(ids) }, false},
	}
	for name, c := range cases {
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = uint64(i + 1)
		}
		c.order(ids)
		s := &Side{}
		for _, id := range ids {
			r := trace.Request{ID: id, Sector: id * 8, Bytes: 4096, PID: uint32(id % 7), Queue: trace.Time(id), Complete: trace.Time(id + 100)}
			s.takeRequest(&r)
		}
		s.flushHeld()
		if got := s.NumRequests(); got != n {
			t.Fatalf("%s: %d requests, want %d", name, got, n)
		}
		s.reqs.seal()
		if perm := s.requestOrder(); (perm == nil) != c.inOrder {
			t.Errorf("%s: table in ID order %v, want %v", name, perm == nil, c.inOrder)
		}
		s.finish()
		for i := range n {
			r := s.RequestAt(i)
			id := uint64(i + 1)
			if r.ID != id || r.Sector != id*8 || r.PID != uint32(id%7) || r.Complete != trace.Time(id+100) {
				t.Fatalf("%s: request at %d is %+v, want ID %d", name, i, r, id)
			}
		}
	}
}

// TestIntern checks that values are numbered from 0 in order of first use
// however they alternate (the ids returned last are kept beside the map).
func TestIntern(t *testing.T) {
	var in intern[string]
	seq := []string{"fio", "fio", "kworker", "fio", "jbd2", "kworker", "jbd2", "fio", "", "jbd2", ""}
	want := []uint64{0, 0, 1, 0, 2, 1, 2, 0, 3, 2, 3}
	for i, v := range seq {
		if got := in.id(v); got != want[i] {
			t.Fatalf("id(%q) at %d = %d, want %d", v, i, got, want[i])
		}
	}
	if !slices.Equal(in.vals, []string{"fio", "kworker", "jbd2", ""}) {
		t.Fatalf("values %q", in.vals)
	}
}
