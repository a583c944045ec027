package diff_test

import (
	"bytes"
	"cmp"
	"io"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

var fixtures = []string{"fx-bfq-2cg-w100-900", "fx-mqdl-rw-nocg", "fx-bfq-4seqread"}

// readFixture returns every event of a fixture and its metadata.
func readFixture(t *testing.T, name string) ([]trace.Event, trace.Meta) {
	t.Helper()
	return fixture.Events(t, fixture.Path(t, name))
}

type sliceReader struct {
	evs []trace.Event
	i   int
}

func (r *sliceReader) ReadEvent() (trace.Event, error) {
	if r.i >= len(r.evs) {
		return trace.Event{}, io.EOF
	}
	r.i++
	return r.evs[r.i-1], nil
}

func load(t *testing.T, evs []trace.Event, meta trace.Meta) *diff.Side {
	t.Helper()
	s, err := diff.Load(&sliceReader{evs: evs}, meta)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFixtureSelfDiff: each real capture diffed against itself scores
// perfectly.
func TestFixtureSelfDiff(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			evs, meta := readFixture(t, name)
			a, b := load(t, evs, meta), load(t, evs, meta)
			r := diff.Compare(a, b, diff.Options{})
			o := r.DispatchOrder
			if o.KendallTau != 1 || o.MeanDisplacement != 0 || o.Divergences != 0 || o.FirstDivergence != nil {
				t.Errorf("order tau %v mean %v divergences %d first %+v", o.KendallTau, o.MeanDisplacement, o.Divergences, o.FirstDivergence)
			}
			if r.Identity.RealOnly != 0 || r.Identity.PredictedOnly != 0 || r.Identity.Matched == 0 {
				t.Errorf("identity %+v", r.Identity)
			}
			if r.Bandwidth.WorstShareError != 0 || r.Bandwidth.Fairness != 1 {
				t.Errorf("bandwidth %+v", r.Bandwidth)
			}
			if r.ThinkTime.Agreement != 1 || r.Latency.D2CDemerit != 0 || r.Latency.Q2CDemerit != 0 {
				t.Errorf("think %v d2c %v q2c %v", r.ThinkTime.Agreement, r.Latency.D2CDemerit, r.Latency.Q2CDemerit)
			}
			if len(r.Decisions.Mismatches) != 0 {
				t.Errorf("decision mismatches %+v", r.Decisions.Mismatches[0])
			}
			if r.Merges.RealQueueMerges != r.Merges.PredQueueMerges || r.Merges.RealBack != r.Merges.PredBack {
				t.Errorf("merges %+v", r.Merges)
			}
			t.Logf("%s: %d requests, %d bios (%d ranked), %d messages; cgroups %d; think-time queues %d (real short %d), recomputed vs logged %.3f of %d; queue merges %d; D2C p50 %.3f ms",
				name, r.Requests, r.Identity.Matched, r.Identity.Ordered, a.Messages.Len(), len(r.Cgroups), r.ThinkTime.Queues, r.ThinkTime.RealShort,
				r.ThinkTime.RealLogged.Agreement, r.ThinkTime.RealLogged.Points, r.Merges.RealQueueMerges, 1e3*r.Latency.D2C.Real.P50)
		})
	}
}

type evKey struct {
	dev    trace.Dev
	sector uint64
	action trace.Action
	time   trace.Time
}

// TestFixtureReversedStretch moves the issues of a stretch of 200 requests
// of a real capture (a third of the way in) to just after the last of
// them, in reverse order, by rewriting the times of their D and C events
// (C keeps its D2C), and expects the diff to find exactly that stretch as
// the top divergence.
func TestFixtureReversedStretch(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			evs, meta := readFixture(t, name)
			real := load(t, evs, meta)
			reqs := real.RequestSlice()
			// 1. Requests in issue order.
			var order []int
			for i := range reqs {
				r := &reqs[i]
				if r.Issue.Valid() && r.Complete.Valid() && r.Flags&(trace.FlagMergedAway|trace.FlagNoQueue) == 0 {
					order = append(order, i)
				}
			}
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(reqs[a].Issue, reqs[b].Issue) })
			n := min(200, len(order)/3)
			lo := len(order) / 3
			hi := lo + n - 1
			for _, i := range order[lo : hi+1] {
				if r := &reqs[i]; r.Requeues > 0 || r.Flags&trace.FlagPartial != 0 {
					t.Skipf("stretch holds a requeued or partial request")
				}
			}
			dHi := reqs[order[hi]].Issue
			gap := reqs[order[hi+1]].Issue - dHi
			if gap < trace.Time(n+1) {
				t.Skipf("no room after the stretch (%d ns)", gap)
			}
			// 2. New issue times: request lo+k goes to position hi-k.
			newD := map[evKey]trace.Time{}
			inStretch := map[uint64]bool{}
			for k, i := range order[lo : hi+1] {
				r := &reqs[i]
				nd := dHi + trace.Time(n-1-k)*gap/trace.Time(n+1)
				newD[evKey{r.Dev, r.Sector, trace.ActionIssue, r.Issue}] = nd
				newD[evKey{r.Dev, r.Sector, trace.ActionComplete, r.Complete}] = r.Complete + (nd - r.Issue)
				inStretch[r.ID] = true
			}
			pert := slices.Clone(evs)
			moved := 0
			for i := range pert {
				e := &pert[i]
				if e.Action != trace.ActionIssue && e.Action != trace.ActionComplete {
					continue
				}
				k := evKey{e.Dev, e.Sector, e.Action, e.Time}
				if nt, ok := newD[k]; ok {
					e.Time = nt
					delete(newD, k)
					moved++
				}
			}
			if len(newD) != 0 {
				t.Fatalf("%d D/C events not found", len(newD))
			}
			slices.SortStableFunc(pert, func(a, b trace.Event) int { return cmp.Compare(a.Time, b.Time) })
			pred := load(t, pert, meta)
			r := diff.Compare(real, pred, diff.Options{})
			o := r.DispatchOrder
			// 3. The stretch's positions in the real order.
			first, last := -1, -1
			for pos, bi := range o.RealSequence {
				if inStretch[real.BioAt(int(bi)).Request] {
					if first < 0 {
						first = pos
					}
					last = pos
				}
			}
			if len(o.Ranked) == 0 {
				t.Fatal("no divergence found")
			}
			top := o.Ranked[0]
			if top.First != first || top.Last != last {
				t.Errorf("top divergence %d..%d, want %d..%d", top.First, top.Last, first, last)
			}
			if o.Divergences != 1 {
				t.Errorf("%d divergences, want 1: %+v", o.Divergences, o.Ranked)
			}
			if o.FirstDivergence == nil || o.FirstDivergence.Position != first {
				t.Errorf("first divergence %+v, want position %d", o.FirstDivergence, first)
			}
			if r.Identity.RealOnly != 0 || r.Identity.PredictedOnly != 0 {
				t.Errorf("identity %+v", r.Identity)
			}
			var txt bytes.Buffer
			if err := r.WriteText(&txt, 100); err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() {
				t.Log("\n" + txt.String())
			}
			t.Logf("%s: stretch of %d requests (%d D/C events moved) at positions %d..%d of %d; tau %.4f, severity %.0f, real %s..%s s, predicted %s..%s s",
				name, n, moved, first, last, o.Bios, o.KendallTau, top.Severity, top.RealStart, top.RealEnd, top.PredStart, top.PredEnd)
		})
	}
}
