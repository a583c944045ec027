// Package program holds what the inspector's views share: the screen size,
// the styles, the Result being inspected, the run's parameters and the
// indexes built once over the Result (ProgramContext in gh-dash's terms).
// Views receive a *Context at construction; the root model refreshes its
// size on every tea.WindowSizeMsg.
package program

import (
	"time"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// RunInfo describes the run the Result comes from, for the overview.
// Every field is optional.
type RunInfo struct {
	Scheduler string            // scheduler model, e.g. "bfq"
	Kernel    string            // kernel version the model follows
	Tunables  map[string]string // scheduler tunables, e.g. slice_idle=8
	Weights   map[uint64]int    // cgroup id -> weight
	Device    string            // device model description
	Inputs    []string          // input names: the real trace, then the prediction (if any)
}

// View names one of the inspector's views.
type View int

// The views, in tab order.
const (
	ViewOverview View = iota
	ViewDivergences
	ViewTimeline
	ViewBandwidth
	ViewQueues
	NumViews = 5
)

var viewNames = [...]string{"overview", "divergences", "timeline", "bandwidth", "queues"}

// ParseView returns the view named name (View.String's names), and
// false when there is none.
func ParseView(name string) (View, bool) {
	for i, n := range viewNames {
		if n == name {
			return View(i), true
		}
	}
	return 0, false
}

// ViewNames lists the views' names in tab order.
func ViewNames() []string { return viewNames[:] }

func (v View) String() string {
	if v >= 0 && int(v) < len(viewNames) {
		return viewNames[v]
	}
	return "View(?)"
}

// Moment is a place in the trace the timeline can be opened at: a stretch
// of the real timeline and where the prediction did the same work.
type Moment struct {
	Real     trace.Time    // real time at the cursor
	Pred     trace.Time    // predicted time standing for the same dispatch position
	Span     time.Duration // window width to show (0: keep the current one)
	Label    string        // what the moment is, e.g. "divergence #3"
	RealEnd  trace.Time    // end of the marked stretch on the real side (NoTime: none)
	PredEnd  trace.Time    // end of the marked stretch on the predicted side
	PredFrom trace.Time    // start of the marked stretch on the predicted side
}

// Context is the state every view reads. It is shared by pointer: the root
// model owns it and updates Width and Height.
type Context struct {
	Width, Height int // the whole screen, cells
	Styles        *Styles
	Result        *diff.Result
	Info          RunInfo
	Index         *Index
}

// BodyHeight is the number of lines a view may draw: the screen less the
// tab bar and the footer.
func (c *Context) BodyHeight() int { return max(c.Height-2, 1) }
