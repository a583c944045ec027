// Package overview is the inspector's first view: the headline figures of
// a comparison (dispatch order, per-cgroup bandwidth, merges, think time,
// latency, decisions) with the run's parameters.
package overview

import (
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui/program"
)

// Model is the overview. Its text depends only on the Result and the
// width, so it is built once per width and then only scrolled.
type Model struct {
	ctx    *program.Context
	keys   KeyMap
	styles styles
	top    int // first visible line

	lines []string
	width int // width lines were built for
}

// New returns the overview of ctx.Result.
func New(ctx *program.Context) Model {
	return Model{ctx: ctx, keys: NewKeyMap(), styles: newStyles(ctx.Styles)}
}

// Keys returns the overview's key map.
func (m Model) Keys() KeyMap { return m.keys }

// Update handles scrolling.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	m.build()
	if k, ok := msg.(tea.KeyMsg); ok {
		m.top = scroll(k, m.keys.NavKeys, m.top, max(len(m.lines)-m.ctx.BodyHeight(), 0), m.ctx.BodyHeight())
	}
	return m, nil
}

func (m *Model) build() {
	if m.lines != nil && m.width == m.ctx.Width {
		return
	}
	m.width = m.ctx.Width
	m.lines = m.render()
}

// View draws the visible part of the overview.
func (m Model) View() string {
	m.build()
	h := m.ctx.BodyHeight()
	from := min(m.top, max(len(m.lines)-1, 0))
	return program.Fit(m.lines[from:], m.ctx.Width, h)
}

func (m Model) render() []string {
	r := m.ctx.Result
	info := m.ctx.Info
	st := m.styles
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	sec := func(name string) string { return st.section.Render(fmt.Sprintf("%-10s", name)) }

	sched := firstOf(info.Scheduler, r.Scheduler, "?")
	kernel := firstOf(info.Kernel, r.Kernel)
	head := "scheduler " + sched
	if kernel != "" {
		head += " · kernel " + kernel
	}
	if len(info.Inputs) > 0 {
		head += " · " + st.real.Render(info.Inputs[0])
		if len(info.Inputs) > 1 {
			head += " vs " + st.pred.Render(info.Inputs[1])
		}
	}
	add("%s", head)
	if info.Device != "" {
		add("device   %s", info.Device)
	}
	if len(info.Tunables) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(info.Tunables)) {
			kv = append(kv, k+"="+info.Tunables[k])
		}
		add("tunables %s", strings.Join(kv, " "))
	}
	if len(info.Weights) > 0 {
		var kv []string
		for _, id := range slices.Sorted(maps.Keys(info.Weights)) {
			kv = append(kv, fmt.Sprintf("%s=%d", m.ctx.Index.CgroupName(id), info.Weights[id]))
		}
		add("weights  %s", strings.Join(kv, " "))
	}
	// Where the prediction drove the device model beyond its calibration,
	// word-wrapped to the screen (each sentence is long), the lines after
	// the first indented.
	extrapolation := func() {
		for _, s := range r.DeviceExtrapolation {
			text := st.bad.Render("device model extrapolates:") + " " + s
			for i, l := range strings.Split(ansi.Wordwrap(text, m.width-2, ""), "\n") {
				if i > 0 {
					l = "  " + l
				}
				add("%s", l)
			}
		}
	}
	if c := r.Change; c != nil {
		add("")
		m.renderChange(add, sec)
		extrapolation()
		add("")
		add("%s the prediction against the capture it was made from", sec("Validation"))
	}
	add("requests %s %d over %.3f s · %s %d over %.3f s",
		st.real.Render("real"), r.Requests, r.WallSeconds, st.pred.Render("predicted"), r.PredictedRequests, r.SimulatedSeconds)
	id := r.Identity
	add("bios     %d matched, %d only real, %d only predicted, %d ranked", id.Matched, id.RealOnly, id.PredictedOnly, id.Ordered)
	if r.Change == nil {
		extrapolation()
	}
	add("")

	o := &r.DispatchOrder
	add("%s tau %s  mean displacement %.1f ranks  divergences %d  max %d",
		sec("Dispatch"), st.grade(program.Tau(o.KendallTau), o.KendallTau >= 0.95), o.MeanDisplacement, o.Divergences, o.MaxDisplacement)
	if f := o.FirstDivergence; f != nil {
		add("  first at position %d: real %d:%d @%s s, predicted %d:%d @%s s",
			f.Position, f.Bio.PID, f.Bio.Index, program.Seconds(f.RealTime), f.Predicted.PID, f.Predicted.Index, program.Seconds(f.PredTime))
	} else if o.Bios > 0 {
		add("  identical dispatch order")
	}
	if len(o.Ranked) > 0 {
		d := o.Ranked[0]
		add("  worst: #1 @%s s, %d bios, mean %.1f ranks (press 2)", program.Seconds(d.RealStart), d.Bios, d.MeanDisplacement)
	}

	bw := &r.Bandwidth
	worst := "none"
	for _, c := range r.Cgroups {
		if c.ID == bw.WorstCgroup && bw.WorstShareError > 0 {
			worst = m.ctx.Index.CgroupName(c.ID)
		}
	}
	add("%s worst share error %s (%s)  fairness %.3f",
		sec("Bandwidth"), st.grade(fmt.Sprintf("%.4f", bw.WorstShareError), bw.WorstShareError < 0.05), worst, bw.Fairness)
	if len(r.Cgroups) > 0 {
		add("  contention window: real %.3f s · predicted %.3f s", bw.WindowReal, bw.WindowPred)
		add("  %-14s %6s %8s %8s %7s %7s %8s", "cgroup", "weight", "real MB/s", "pred MB/s", "real %", "pred %", "error")
		for _, c := range r.Cgroups[:min(len(r.Cgroups), 8)] {
			w := c.Weight
			if w == 0 {
				w = info.Weights[c.ID]
			}
			add("  %-14s %6d %9.2f %9.2f %7.1f %7.1f %+8.4f", program.Truncate(m.ctx.Index.CgroupName(c.ID), 14), w,
				c.RealMiBps, c.PredMiBps, 100*c.RealShare, 100*c.PredShare, c.ShareError)
		}
		if len(r.Cgroups) > 8 {
			add("  … %d more (press 4)", len(r.Cgroups)-8)
		}
	}

	mg := &r.Merges
	add("%s back %d / %d  front %d / %d  queue merges %d / %d  (real / predicted)",
		sec("Merges"), mg.RealBack, mg.PredBack, mg.RealFront, mg.PredFront, mg.RealQueueMerges, mg.PredQueueMerges)
	tt := &r.ThinkTime
	add("%s agreement %s of %d requests, %d queues; short %d / %d",
		sec("Think"), st.grade(program.Percent(tt.Agreement), tt.Agreement >= 0.9), tt.Compared, tt.Queues, tt.RealShort, tt.PredShort)
	l := &r.Latency
	add("%s D2C demerit %s (%s RMS)  Q2C %s",
		sec("Latency"), st.grade(program.Percent(l.D2CDemerit), l.D2CDemerit < 0.1), ms(l.D2C.Demerit), program.Percent(l.Q2CDemerit))
	add("  D2C p50 %s / %s  p99 %s / %s  max %s / %s",
		ms(l.D2C.Real.P50), ms(l.D2C.Pred.P50), ms(l.D2C.Real.P99), ms(l.D2C.Pred.P99), ms(l.D2C.Real.Max), ms(l.D2C.Pred.Max))
	dc := &r.Decisions
	if dc.Compared {
		add("%s select %d/%d (%d differ)  expire %d/%d (%d)  idle %d/%d (%d)", sec("Decisions"),
			dc.Select.Real, dc.Select.Predicted, dc.Select.Mismatched, dc.Expire.Real, dc.Expire.Predicted, dc.Expire.Mismatched,
			dc.Idle.Real, dc.Idle.Predicted, dc.Idle.Mismatched)
		if len(dc.Mismatches) > 0 {
			mm := dc.Mismatches[0]
			add("  first: %s %s #%d real %q @%s, predicted %q @%s", mm.Kind, dash(mm.Queue), mm.Ordinal,
				mm.Real, program.Seconds(mm.RealTime), mm.Predicted, program.Seconds(mm.PredTime))
		}
	} else {
		add("%s not compared (a side has no scheduler messages)", sec("Decisions"))
	}
	return out
}

// renderChange draws the what-if lead: captured -> predicted over each
// side's contention window, and the decisions behind it.
func (m Model) renderChange(add func(string, ...any), sec func(string) string) {
	r := m.ctx.Result
	c := r.Change
	from := firstOf(c.From, "unknown")
	add("%s %s -> %s: %s", sec("What-if"), from, c.To, strings.Join(c.Changed, "; "))
	for _, a := range c.Assumed {
		add("  assumed: %s", a)
	}
	add("  contention window: captured %.3f s · predicted %.3f s", r.Bandwidth.WindowReal, r.Bandwidth.WindowPred)
	add("  %-14s %17s %15s %9s %17s %17s", "", "MiB/s", "IOPS", "share %", "p50 ms", "p99 ms")
	row := func(name string, d diff.Delta) {
		add("  %-14s %7.1f->%-7.1f %7.0f->%-7.0f %3.0f->%-3.0f %7.3f->%-7.3f %7.3f->%-7.3f", program.Truncate(name, 14),
			d.Captured.MiBps, d.Predicted.MiBps, d.Captured.IOPS, d.Predicted.IOPS, 100*d.Captured.Share, 100*d.Predicted.Share,
			1e3*d.Captured.P50, 1e3*d.Predicted.P50, 1e3*d.Captured.P99, 1e3*d.Predicted.P99)
	}
	for _, d := range c.Cgroups[:min(len(c.Cgroups), 6)] {
		row(m.ctx.Index.CgroupName(d.ID), d)
	}
	for _, d := range c.Processes[:min(len(c.Processes), 6)] {
		row(fmt.Sprintf("%d %s", d.ID, d.Name), d)
	}
	row("total", c.Total)
	add("  requests in flight %.1f -> %.1f", c.InFlight.Captured, c.InFlight.Predicted)
	for _, s := range c.Causes[:min(len(c.Causes), 4)] {
		add("  - %s", s)
	}
}

func (s styles) grade(v string, good bool) string {
	if good {
		return s.good.Render(v)
	}
	return s.bad.Render(v)
}

func ms(sec float64) string {
	if math.IsNaN(sec) {
		return "-"
	}
	return fmt.Sprintf("%.3fms", 1e3*sec)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// scroll moves a top line within 0..maxTop by a navigation key.
func scroll(k tea.KeyMsg, nav program.NavKeys, top, maxTop, page int) int {
	switch {
	case key.Matches(k, nav.Up):
		top--
	case key.Matches(k, nav.Down):
		top++
	case key.Matches(k, nav.Top):
		top = 0
	case key.Matches(k, nav.Bottom):
		top = maxTop
	case key.Matches(k, nav.PageUp):
		top -= page
	case key.Matches(k, nav.PageDown):
		top += page
	}
	return min(max(top, 0), maxTop)
}
