package tui_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	testfixture "github.com/tracesched/tracesched/internal/fixture"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui"
)

const fixture = "fx-bfq-2cg-w100-900"

// asciiRenderer is a renderer pinned to the ASCII profile: no colour, no
// attributes, so goldens are plain text.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

// fixtureResult diffs the fixture against a perturbed copy of itself: in
// the prediction, the lowest pid's dispatches and completions between 30
// and 90 ms come 8 ms late, and BFQ's idling decisions in that stretch are
// flipped, so the Result has divergences and decision mismatches.
func fixtureResult(t testing.TB) (*diff.Result, tui.RunInfo) {
	t.Helper()
	return fixtureResultWith(t, "", nil)
}

// fixtureResultWith is fixtureResult with the diff's recorded scheduler and
// changes (a what-if when changes are given).
func fixtureResultWith(t testing.TB, recorded string, changes []string) (*diff.Result, tui.RunInfo) {
	t.Helper()
	evs, meta := testfixture.Events(t, testfixture.Path(t, fixture))
	meta.Cgroups = map[uint64]string{1181: "/tsched-cg1", 1201: "/tsched-cg2"}

	// The pid a D or C carries is whoever was running: find the request's
	// queueing pid by sector.
	owner := map[uint64]uint32{}
	pert := make([]trace.Event, len(evs))
	copy(pert, evs)
	const from, to, delay = 30_000_000, 90_000_000, 8_000_000
	var victim uint32
	for i := range pert {
		e := &pert[i]
		if e.Action == trace.ActionQueue {
			owner[e.Sector] = e.PID
			if victim == 0 || e.PID < victim {
				victim = e.PID
			}
		}
	}
	for i := range pert {
		e := &pert[i]
		if e.Time < from || e.Time > to {
			continue
		}
		switch e.Action {
		case trace.ActionIssue, trace.ActionComplete:
			if owner[e.Sector] == victim {
				e.Time += delay
			}
		case trace.ActionMessage:
			switch {
			case strings.Contains(e.Text, "wait_request 1"):
				e.Text = strings.Replace(e.Text, "wait_request 1", "wait_request 0", 1)
			case strings.Contains(e.Text, "wait_request 0"):
				e.Text = strings.Replace(e.Text, "wait_request 0", "wait_request 1", 1)
			}
		}
	}
	slices.SortStableFunc(pert, func(a, b trace.Event) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	real := side(evs, meta)
	pmeta := meta
	pmeta.Source = "replay"
	pred := side(pert, pmeta)
	weights := map[uint64]int{1181: 100, 1201: 900}
	res := diff.Compare(real, pred, diff.Options{Weights: weights, DivergenceWindow: 8, DivergenceThreshold: 2,
		RecordedScheduler: recorded, Changes: changes})
	info := tui.RunInfo{
		Scheduler: "bfq", Kernel: "6.18.44",
		Tunables: map[string]string{"slice_idle": "8", "low_latency": "1", "strict_guarantees": "0"},
		Weights:  weights,
		Device:   "loop (rotational), 512 B sectors",
		Inputs:   []string{fixture, "perturbed copy"},
	}
	return res, info
}

func side(evs []trace.Event, meta trace.Meta) *diff.Side {
	s := diff.NewSide(meta)
	for i := range evs {
		s.Add(&evs[i])
	}
	s.Finish()
	return s
}

func TestFixtureResultHasDivergences(t *testing.T) {
	res, _ := fixtureResult(t)
	if res.DispatchOrder.Divergences == 0 || len(res.DispatchOrder.Ranked) == 0 {
		t.Fatalf("no divergences: %+v", res.DispatchOrder)
	}
	if testing.Verbose() {
		var b strings.Builder
		res.WriteText(&b, 120)
		t.Log(b.String())
	}
}
