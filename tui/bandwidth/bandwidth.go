// Package bandwidth shows each cgroup's throughput over time, real against
// predicted: a table of the totals and shares, and a pair of sparklines
// (real above, predicted below) per cgroup; with a replay --seeds N, the
// range of each cgroup's predicted bandwidth and share over the seeds.
package bandwidth

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui/program"
)

// Model is the bandwidth view. Its cost per key press is O(cgroups shown ×
// windows), independent of the number of requests.
type Model struct {
	ctx    *program.Context
	keys   KeyMap
	styles styles
	list   program.List
	shares bool
}

// New returns the bandwidth view of ctx.Result.
func New(ctx *program.Context) Model {
	return Model{ctx: ctx, keys: NewKeyMap(), styles: newStyles(ctx.Styles)}
}

// Keys returns the view's key map.
func (m Model) Keys() KeyMap { return m.keys }

// Selected returns the index of the selected cgroup in Result.Cgroups.
func (m Model) Selected() int { return m.list.Pos }

func (m Model) tableHeight() int {
	return min(len(m.ctx.Result.Cgroups), max(m.ctx.BodyHeight()/3-2, 1))
}

// Update handles the view's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		if key.Matches(k, m.keys.Shares) {
			m.shares = !m.shares
			return m, nil
		}
		m.list.Move(k, m.keys.NavKeys, len(m.ctx.Result.Cgroups), m.tableHeight())
	}
	return m, nil
}

// View draws the table and the sparklines.
func (m Model) View() string {
	r := m.ctx.Result
	st := m.styles
	w, h := m.ctx.Width, m.ctx.BodyHeight()
	unit := "MiB/s"
	if m.shares {
		unit = "share of the side's bytes"
	}
	title := fmt.Sprintf("%s windows of %s ×%d · %s · fairness %.3f · worst share error %.4f",
		st.title.Render("Bandwidth"), program.Duration(time.Duration(r.Bandwidth.WindowSeconds*1e9)), r.Bandwidth.Windows, unit,
		r.Bandwidth.Fairness, r.Bandwidth.WorstShareError)
	if r.Seeds.Varied() {
		title += fmt.Sprintf(" · predicted at %d seeds (%s)", len(r.Seeds.Seeds), diff.SeedList(r.Seeds.Seeds))
	}
	lines := []string{title}
	if len(r.Cgroups) == 0 {
		lines = append(lines, "  no completed I/O")
		return program.Fit(lines, w, h)
	}
	lines = append(lines, st.header.Render(fmt.Sprintf("  %-16s %6s %9s %9s %7s %7s %8s %5s", "cgroup", "weight", "real MB/s", "pred MB/s", "real %", "pred %", "error", "KS")))
	th := m.tableHeight()
	from, to := m.list.Visible(len(r.Cgroups), th)
	for i := from; i < to; i++ {
		c := &r.Cgroups[i]
		wt := c.Weight
		if wt == 0 {
			wt = m.ctx.Info.Weights[c.ID]
		}
		row := fmt.Sprintf("%s%-16s %6d %9.2f %9.2f %7.1f %7.1f %+8.4f %5.3f", m.list.Marker(i), program.Truncate(m.ctx.Index.CgroupName(c.ID), 16),
			wt, c.RealMiBps, c.PredMiBps, 100*c.RealShare, 100*c.PredShare, c.ShareError, c.KS)
		if i == m.list.Pos {
			row = st.selected.Render(program.Pad(row, w))
		}
		lines = append(lines, row)
	}
	lines = append(lines, st.faint.Render(strings.Repeat("─", w)))
	gw := max(w-4, 8)
	end := trace.Time(float64(r.Bandwidth.Windows) * r.Bandwidth.WindowSeconds * 1e9)
	lines = append(lines, "    "+st.faint.Render(program.Pad("├"+program.Seconds(0), gw/2)+fmt.Sprintf("%*s", gw-gw/2, program.Seconds(end)+"┤")))
	// Sparklines from the selected cgroup on, three lines each.
	for i := m.list.Pos; i < len(r.Cgroups) && len(lines)+3 <= h; i++ {
		lines = append(lines, m.sparks(&r.Cgroups[i], gw)...)
	}
	return program.Fit(lines, w, h)
}

func (m Model) sparks(c *diff.Cgroup, gw int) []string {
	st := m.styles
	rs, ps := c.RealSeries, c.PredSeries
	if m.shares {
		rs, ps = c.RealShareSeries, c.PredShareSeries
	}
	rv, pv := program.Resample(rs, gw), program.Resample(ps, gw)
	top := program.MaxOf(rv, pv)
	if m.shares {
		top = 1
	}
	peak := fmt.Sprintf("peak %.1f MiB/s", top)
	if m.shares {
		peak = "scale 0-100%"
	}
	errNote := ""
	if math.Abs(c.ShareError) >= 0.05 {
		errNote = st.bad.Render(fmt.Sprintf(" share error %+.1f%%", 100*c.ShareError))
	}
	if s := seedNote(m.ctx.Result.Seeds, c.ID); s != "" {
		errNote += st.faint.Render(s)
	}
	return []string{
		fmt.Sprintf("  %s  %s%s", m.ctx.Index.CgroupName(c.ID), st.faint.Render(peak), errNote),
		st.real.Render("  R ") + st.real.Render(program.Sparkline(rv, top)),
		st.pred.Render("  P ") + st.pred.Render(program.Sparkline(pv, top)),
	}
}

// seedNote is the range of cgroup id's predicted bandwidth and share over
// the seeds of a replay --seeds N (min-max, median), or "" when the result
// was predicted at one seed or does not compare the cgroup.
func seedNote(sp *diff.SeedSpread, id uint64) string {
	if !sp.Varied() {
		return ""
	}
	for _, f := range sp.Cgroups {
		if f.ID == id {
			return fmt.Sprintf(" · at %d seeds %.1f-%.1f MiB/s (median %.1f), share %.1f-%.1f%%",
				len(sp.Seeds), f.MiBps.Min, f.MiBps.Max, f.MiBps.Median, 100*f.Share.Min, 100*f.Share.Max)
		}
	}
	return ""
}
