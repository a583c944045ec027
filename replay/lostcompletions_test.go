package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// dropCompletions is a trace.EventReader that leaves out the C events of
// every third request (by its sector), as a capture that lost
// completions does (public/hadoop-node8, whose per-CPU file of CPU 2 is
// missing, with the completions recorded there; every fixture completes
// all its requests on one CPU, so dropping a CPU would drop them all).
type dropCompletions struct{ trace.EventReader }

func lostCompletion(e *trace.Event) bool {
	return e.Action == trace.ActionComplete && e.Sector%3 == 0
}

func (d dropCompletions) ReadEvent() (trace.Event, error) {
	for {
		e, err := d.EventReader.ReadEvent()
		if err != nil || !lostCompletion(&e) {
			return e, err
		}
	}
}

// The device's depth (Workload.Depth, the replayed queue's hardware
// depth) counted every D not yet followed by a C, so a capture that lost
// completions kept each of those requests in flight to its end:
// public/hadoop-node8, its CPU 2 file missing, replayed with a depth of
// 61,052. With completions gone, the requests whose D and C are both in
// the capture are a subset of the full capture's, so their depth can
// be no more than the full capture's; the Collector takes it from them, as
// NewWorkloadFromRecords does, once issues are left uncompleted for longer
// than any completed request took.
func TestDepthWithLostCompletions(t *testing.T) {
	path := filepath.Join(shared.Fixture(t, "fx-mqdl-rw-nocg"), "fx-mqdl-rw-nocg")
	full, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	// What a D-C counter makes of the capture without those completions.
	r, err := blktrace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	inflight, naive, lostC := 0, 0, 0
	for {
		e, err := r.ReadEvent()
		if err != nil {
			break
		}
		switch {
		case lostCompletion(&e):
			lostC++
		case e.Action == trace.ActionIssue:
			inflight++
			naive = max(naive, inflight)
		case e.Action == trace.ActionComplete && inflight > 0:
			inflight--
		}
	}
	closeReader(r)
	if lostC == 0 {
		t.Fatal("no completion dropped")
	}
	if naive <= full.Depth {
		t.Fatalf("a D-C counter without them reaches %d, not above the full capture's depth %d: the test shows nothing", naive, full.Depth)
	}

	w, err := NewWorkload(func() (trace.EventReader, error) {
		r, err := blktrace.Open(path)
		return dropCompletions{r}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("depth: full capture %d; with %d completions lost %d, a D-C counter %d", full.Depth, lostC, w.Depth, naive)
	if w.Depth < 1 || w.Depth > full.Depth {
		t.Errorf("depth with completions lost = %d, want 1 to %d (the full capture's)", w.Depth, full.Depth)
	}
	// The slice path measures the same records alike.
	recs := records(t, w)
	sw, err := NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Depth != w.Depth {
		t.Errorf("depth from the records = %d, the Collector's %d", sw.Depth, w.Depth)
	}
}
