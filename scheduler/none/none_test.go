package none

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

type host struct{}

func (host) ArmTimer(int, trace.Time)               {}
func (host) CancelTimer(int)                        {}
func (host) Kick()                                  {}
func (host) Log(trace.Time, uint32, uint64, string) {}
func (host) InDriver() int                          { return 0 }
func (host) Queue() replay.Queue                    { return replay.Queue{Depth: 1, NrRequests: 128, MaxSectors: 2560} }

// TestFIFOAndMergeWindow: requests leave in insertion order; only the last
// 8 waiting requests are merge candidates.
func TestFIFOAndMergeWindow(t *testing.T) {
	s, err := New(host{}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rqs []*replay.Request
	for i := 0; i < 12; i++ {
		r := &replay.Request{ID: uint64(i + 1), Sector: uint64(1000 - 10*i), Bytes: 4096, Cat: trace.CatRead}
		rqs = append(rqs, r)
		s.Insert(0, r)
	}
	if s.AllowMerge(rqs[0], &replay.Bio{}) || !s.AllowMerge(rqs[4], &replay.Bio{}) || !s.AllowMerge(rqs[11], &replay.Bio{}) {
		t.Fatal("merge window is not the last 8 requests")
	}
	if got := s.RequestMerge(0, &replay.Bio{Sector: 1000 - 10*5 - 8, Bytes: 4096}); got != rqs[5] {
		t.Fatalf("front merge candidate %v, want request 6", got)
	}
	if got := s.RequestMerge(0, &replay.Bio{Sector: 1000 - 8, Bytes: 4096}); got != nil {
		t.Fatal("front merge outside the window")
	}
	s.RequestsMerged(0, rqs[6], rqs[7])
	var order []uint64
	for s.HasWork(0) {
		order = append(order, s.Dispatch(0).ID)
	}
	want := []uint64{1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if _, err := New(host{}, replay.Options{Set: map[string]string{"fifo_batch": "1"}}); err == nil {
		t.Fatal("none accepted a tunable")
	}
}
