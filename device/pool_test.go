package device

import (
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// PoolSeq lays the captures out as Pool does, and reads the same when read
// again (CalibrateSeq reads its sequence once per pass).
func TestPoolSeq(t *testing.T) {
	rq := func(id uint64, q, d, c trace.Time) trace.Request {
		return trace.Request{ID: id, Queue: q, Get: q, Insert: q, Issue: d, Complete: c}
	}
	a := []trace.Request{rq(7, 100, 120, 200), rq(9, 150, 160, 400)}
	empty := []trace.Request{{ID: 1, Queue: trace.NoTime, Get: trace.NoTime, Insert: trace.NoTime, Issue: trace.NoTime, Complete: trace.NoTime}}
	b := []trace.Request{rq(1, 50, 60, 90)}
	read := func() []trace.Request {
		var out []trace.Request
		for r := range PoolSeq(Pointers(a), Pointers(empty), Pointers(b)) {
			out = append(out, *r)
		}
		return out
	}
	got := read()
	// By hand: a spans 100..400 and is shifted by -100; the capture with
	// no time is skipped; b starts poolGap after a's last (300) and is
	// shifted by 300+poolGap-50.
	want := []trace.Request{rq(1, 0, 20, 100), rq(2, 50, 60, 300), rq(3, 300+poolGap, 310+poolGap, 340+poolGap)}
	if !slices.Equal(got, want) {
		t.Errorf("PoolSeq:\n got %+v\nwant %+v", got, want)
	}
	if again := read(); !slices.Equal(again, got) {
		t.Errorf("read again: %+v", again)
	}
	if p := Pool(a, empty, b); !slices.Equal(p, want) {
		t.Errorf("Pool: %+v", p)
	}
	if a[0].Issue != 120 || b[0].ID != 1 {
		t.Error("PoolSeq modified its input")
	}
}
