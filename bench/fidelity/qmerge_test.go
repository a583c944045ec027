package main

import (
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

func TestMergePartner(t *testing.T) {
	for body, want := range map[string]string{
		"merging with queue 23226":                "23226",
		"merging with queue 18446744073709551615": "shared", // the kernel's -1 as blktrace's ftrace text prints it
		"merging with queue -1":                   "shared", // the model's
		"scheduling merge with queue 23226":       "",
		"merge_bfqqs: wr_busy 0":                  "",
	} {
		if got := mergePartner(body); got != want {
			t.Errorf("mergePartner(%q) = %q, want %q", body, got, want)
		}
	}
}

// TestDueTogether uses the merge of fs-bfq-2bufread-idle2ms: the kernel
// logged "bfq23228S merging with queue 23226" at 615.645422 ms, with the
// reader's bio before it queued at 602.255696 ms (it paused in between);
// the model merged at 604.659417 ms.
func TestDueTogether(t *testing.T) {
	ms := func(x float64) trace.Time { return trace.Time(x * 1e6) }
	kernel := qmerge{Real: ms(615.645422), RealPrev: ms(602.255696)}
	cases := []struct {
		name       string
		prev, pred trace.Time
		want       bool
	}{
		{"inside the kernel's interval", ms(603.6), ms(604.659417), true},
		{"before it by less than a jiffy", ms(597.0), ms(599.0), true},  // 599 + 4 >= 602.26
		{"before it by more than a jiffy", ms(590.0), ms(598.0), false}, // 598 + 4 < 602.26
		{"after it by less than a jiffy", ms(618.0), ms(619.0), true},   // 618 - 4 <= 615.65
		{"after it by more than a jiffy", ms(620.0), ms(621.0), false},
		{"the model's first bio, inside", trace.NoTime, ms(610.0), true},
		{"at creation, as fs-bfq-pgbench's", ms(48.0), ms(49.0), false},
	}
	for _, c := range cases {
		m := kernel
		m.PredPrev, m.Pred = c.prev, c.pred
		if got := m.dueTogether(); got != c.want {
			t.Errorf("%s: dueTogether = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPairMerges(t *testing.T) {
	real := diff.NewSide(trace.Meta{})
	pred := diff.NewSide(trace.Meta{})
	real.Finish()
	pred.Finish()
	rl := []diff.QueueMerge{
		{Time: 10, Queue: "bfq5S", Text: "merging with queue 4"},
		{Time: 20, Queue: "bfq6S", Text: "merging with queue 18446744073709551615"},
	}
	pl := []diff.QueueMerge{
		{Time: 11, Queue: "bfq6S", Text: "merging with queue -1"},
		{Time: 12, Queue: "bfq7S", Text: "merging with queue 4"},
	}
	got := pairMerges(real, pred, rl, pl)
	if len(got) != 3 {
		t.Fatalf("pairMerges gave %d merges, want 3: %+v", len(got), got)
	}
	if g := got[0]; g.Queue != "bfq5S" || g.Partner != "4" || g.Real != 10 || g.Pred != trace.NoTime {
		t.Errorf("first: %+v, want bfq5S into 4 at 10, none predicted", g)
	}
	if g := got[1]; g.Queue != "bfq6S" || g.Partner != "shared" || g.Real != 20 || g.Pred != 11 {
		t.Errorf("second: %+v, want bfq6S into a shared queue at 20, predicted at 11", g)
	}
	if g := got[2]; g.Queue != "bfq7S" || g.Real != trace.NoTime || g.Pred != 12 {
		t.Errorf("third: %+v, want bfq7S predicted at 12 only", g)
	}
}
