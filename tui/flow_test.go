package tui_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/tracesched/tracesched/tui"
)

// TestFlow drives the whole program through teatest at 80x24: open the
// top divergence, move the timeline, go back, filter the list, quit.
func TestFlow(t *testing.T) {
	res, info := fixtureResult(t)
	m := tui.New(res, info, tui.WithRenderer(asciiRenderer()))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	wait := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	send := func(s string) {
		for _, k := range keys(s) {
			tm.Send(k)
		}
	}
	wait("Dispatch")
	send("2")
	wait("Divergences")
	send("<enter>")
	wait("Timeline 0.0")
	send("ll+-+")
	send("c")
	wait("cgroup lanes")
	send("<esc>")
	wait("sort: severity")
	send("/cg2")
	wait("/cg2")
	send("<enter>s")
	wait("sort: time")
	send("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(tui.Model)

	if fm.ActiveView() != tui.ViewDivergences {
		t.Errorf("final view %v, want divergences", fm.ActiveView())
	}
	d := fm.Divergences()
	if d.Filter() != "cg2" || d.Capturing() || d.Len() == 0 {
		t.Errorf("filter %q capturing %v rows %d", d.Filter(), d.Capturing(), d.Len())
	}
	tl := fm.Timeline()
	top := res.DispatchOrder.Ranked[0]
	if !tl.ByCgroup() {
		t.Error("lanes not toggled to cgroups")
	}
	// Opened at the top divergence, panned right twice by a sixteenth of
	// the window, zoomed in twice and out once.
	if tl.Cursor() <= top.RealStart {
		t.Errorf("cursor %v not moved right of %v", tl.Cursor(), top.RealStart)
	}
	if tl.PredOffset() != top.PredStart-top.RealStart {
		t.Errorf("predicted offset %v, want %v", tl.PredOffset(), top.PredStart-top.RealStart)
	}
}
