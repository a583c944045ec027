package replay

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// fifoSched is a minimal elevator for the engine's internal tests: it
// dispatches in insertion order and offers no merges.
type fifoSched struct{ q []*Request }

func (s *fifoSched) Name() string                                  { return "fifo" }
func (s *fifoSched) AllowMerge(*Request, *Bio) bool                { return true }
func (s *fifoSched) RequestMerge(trace.Time, *Bio) *Request        { return nil }
func (s *fifoSched) RequestMerged(trace.Time, *Request, Merge)     {}
func (s *fifoSched) RequestsMerged(trace.Time, *Request, *Request) {}
func (s *fifoSched) Insert(_ trace.Time, rq *Request)              { s.q = append(s.q, rq) }
func (s *fifoSched) HasWork(trace.Time) bool                       { return len(s.q) > 0 }
func (s *fifoSched) Completed(trace.Time, *Request)                {}
func (s *fifoSched) Timer(trace.Time, int)                         {}
func (s *fifoSched) Dispatch(trace.Time) *Request {
	rq := s.q[0]
	s.q = s.q[1:]
	return rq
}

// latencyDevice completes every request lat after its issue.
type latencyDevice struct{ lat trace.Time }

func (d latencyDevice) Issue(now trace.Time, _ *Request) trace.Time { return now + d.lat }
func (d latencyDevice) Done(trace.Time, *Request)                   {}

// TestMergeHashListBounded: a replay whose requests never meet a merge
// lookup (one process, one bio at a time: nothing is held when the next
// bio arrives) lists each Request struct for the merge hashes once, so
// the list stays as short as the engine's pool of requests instead of
// growing by one entry per request.
func TestMergeHashListBounded(t *testing.T) {
	const n = 2000
	recs := make([]Record, n)
	at := trace.Time(1000)
	for i := range recs {
		recs[i] = Record{PID: 7, Comm: "psync", Sector: uint64(i) * 8000, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: at, Issue: at, Done: at + 50_000}
		at += 60_000
	}
	w, err := NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(w, Config{
		NewScheduler: func(Host) (Scheduler, error) { return &fifoSched{}, nil },
		Device:       latencyDevice{lat: 50_000},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n {
		t.Fatalf("%d requests replayed, want %d", res.Requests, n)
	}
	if len(e.toHash) > len(e.pool) {
		t.Errorf("%d requests listed for the merge hashes after %d requests, more than the %d Request structs",
			len(e.toHash), n, len(e.pool))
	}
}
