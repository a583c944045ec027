// Package divergences is the ranked list of the stretches where the
// predicted dispatch order departs from the real one: filterable,
// sortable, each one a door into the timeline.
package divergences

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui/program"
)

// SortKey orders the list.
type SortKey int

// The sort keys, in the order the sort key cycles through them.
const (
	BySeverity SortKey = iota // the diff's rank
	ByTime                    // real start time
	ByBios                    // stretch length
	ByMaxDisplacement
	numSortKeys
)

func (k SortKey) String() string {
	return [...]string{"severity", "time", "bios", "max displacement"}[k]
}

// detailLines is the height of the selected divergence's description.
const detailLines = 5

// Model is the divergence list. Only the visible rows are formatted on
// each View; filtering and sorting touch an index slice, never the rows.
type Model struct {
	ctx    *program.Context
	keys   KeyMap
	styles styles
	list   program.List
	filter textinput.Model
	sort   SortKey

	search []string // per divergence: lower-case text the filter matches
	rows   []int    // divergences shown, as indexes into Ranked, in order
}

// New returns the list of ctx.Result's ranked divergences.
func New(ctx *program.Context) Model {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "filter: cgroup, queue, time…"
	st := ctx.Styles
	ti.PromptStyle = st.Renderer.NewStyle()
	ti.TextStyle = st.Renderer.NewStyle()
	ti.PlaceholderStyle = st.Faint
	ti.Cursor.Style = st.Renderer.NewStyle().Reverse(true)
	ti.Cursor.SetMode(cursor.CursorStatic) // no blink ticks: steady output, steady goldens
	m := Model{ctx: ctx, keys: NewKeyMap(), styles: newStyles(ctx.Styles), filter: ti}
	ranked := ctx.Result.DispatchOrder.Ranked
	m.search = make([]string, len(ranked))
	for i := range ranked {
		d := &ranked[i]
		var b strings.Builder
		fmt.Fprintf(&b, "#%d %s %d-%d ", d.Rank, program.Seconds(d.RealStart), d.First, d.Last)
		for _, s := range []diff.Served{d.Real, d.Predicted} {
			for _, c := range s.Cgroups {
				b.WriteString(ctx.Index.CgroupName(c.ID) + " ")
			}
			for _, q := range s.Queues {
				b.WriteString(q.Name + " ")
			}
		}
		m.search[i] = strings.ToLower(b.String())
	}
	m.refresh()
	return m
}

// Keys returns the list's key map.
func (m Model) Keys() KeyMap { return m.keys }

// Capturing reports whether the filter has the keyboard: the root must
// then pass every key here (q types a q).
func (m Model) Capturing() bool { return m.filter.Focused() }

// Filter returns the filter text.
func (m Model) Filter() string { return m.filter.Value() }

// SortKey returns the current sort key.
func (m Model) SortKey() SortKey { return m.sort }

// Len returns how many divergences the filter lets through.
func (m Model) Len() int { return len(m.rows) }

// Selected returns the selected divergence, if any.
func (m Model) Selected() (diff.Divergence, bool) {
	if m.list.Pos >= len(m.rows) {
		return diff.Divergence{}, false
	}
	return m.ctx.Result.DispatchOrder.Ranked[m.rows[m.list.Pos]], true
}

// Moment returns the timeline moment of the selected divergence.
func (m Model) Moment() (program.Moment, bool) {
	d, ok := m.Selected()
	if !ok {
		return program.Moment{}, false
	}
	span := max(d.RealEnd.Sub(d.RealStart), d.PredEnd.Sub(d.PredStart))
	return program.Moment{
		Real: d.RealStart, Pred: d.PredStart, RealEnd: d.RealEnd, PredFrom: d.PredStart, PredEnd: d.PredEnd,
		Span:  max(3*span, time.Millisecond),
		Label: fmt.Sprintf("divergence #%d", d.Rank),
	}, true
}

func (m *Model) listHeight() int { return max(m.ctx.BodyHeight()-3-detailLines, 1) }

// refresh recomputes the shown rows after the filter or the sort changed.
func (m *Model) refresh() {
	ranked := m.ctx.Result.DispatchOrder.Ranked
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	m.rows = m.rows[:0]
	for i := range ranked {
		if q == "" || strings.Contains(m.search[i], q) {
			m.rows = append(m.rows, i)
		}
	}
	key := func(i int) (float64, int) {
		d := &ranked[i]
		switch m.sort {
		case ByTime:
			return float64(d.RealStart), d.First
		case ByBios:
			return -float64(d.Bios), d.Rank
		case ByMaxDisplacement:
			return -float64(d.MaxDisplacement), d.Rank
		}
		return float64(d.Rank), 0
	}
	slices.SortStableFunc(m.rows, func(a, b int) int {
		ka, sa := key(a)
		kb, sb := key(b)
		if c := cmp.Compare(ka, kb); c != 0 {
			return c
		}
		return cmp.Compare(sa, sb)
	})
	m.list.Clamp(len(m.rows), m.listHeight())
}

// Update handles the list's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		if m.filter.Focused() {
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			return m, cmd
		}
		m.list.Clamp(len(m.rows), m.listHeight())
		return m, nil
	}
	if m.filter.Focused() {
		switch {
		case key.Matches(k, m.keys.Apply):
			m.filter.Blur()
			return m, nil
		case key.Matches(k, m.keys.Cancel):
			m.filter.Blur()
			m.filter.SetValue("")
			m.refresh()
			return m, nil
		}
		before := m.filter.Value()
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		if m.filter.Value() != before {
			m.list.Pos = 0
			m.refresh()
		}
		return m, cmd
	}
	switch {
	case key.Matches(k, m.keys.Filter):
		m.filter.CursorEnd()
		return m, m.filter.Focus()
	case key.Matches(k, m.keys.Sort):
		m.sort = (m.sort + 1) % numSortKeys
		m.list.Pos = 0
		m.refresh()
		return m, nil
	}
	m.list.Move(k, m.keys.NavKeys, len(m.rows), m.listHeight())
	return m, nil
}

// View draws the header, the visible rows and the selected divergence.
func (m Model) View() string {
	st := m.styles
	o := &m.ctx.Result.DispatchOrder
	w := m.ctx.Width
	var lines []string
	head := fmt.Sprintf("%d of %d listed (%d found) · sort: %s", len(m.rows), len(o.Ranked), o.Divergences, m.sort)
	if m.filter.Focused() || m.filter.Value() != "" {
		lines = append(lines, m.filter.View()+"  "+st.faint.Render(head))
	} else {
		lines = append(lines, st.title.Render("Divergences")+"  "+st.faint.Render(head))
	}
	lines = append(lines, st.header.Render(fmt.Sprintf("  %3s %10s %-13s %5s %6s %5s %8s  %s", "#", "real s", "positions", "bios", "mean", "max", "severity", "real → predicted served")))
	h := m.listHeight()
	from, to := m.list.Visible(len(m.rows), h)
	ranked := o.Ranked
	for i := from; i < to; i++ {
		d := &ranked[m.rows[i]]
		row := fmt.Sprintf("%s%3d %10s %-13s %5d %6.1f %5d %8.0f  %s → %s", m.list.Marker(i), d.Rank, program.Seconds(d.RealStart),
			fmt.Sprintf("%d-%d", d.First, d.Last), d.Bios, d.MeanDisplacement, d.MaxDisplacement, d.Severity,
			m.top(d.Real), m.top(d.Predicted))
		row = program.Truncate(row, w)
		if i == m.list.Pos {
			row = st.selected.Render(program.Pad(row, w))
		}
		lines = append(lines, row)
	}
	if len(m.rows) == 0 {
		if len(ranked) == 0 {
			lines = append(lines, "  no divergences: the prediction dispatches in the real order")
		} else {
			lines = append(lines, "  nothing matches the filter")
		}
	}
	for len(lines) < 2+h {
		lines = append(lines, "")
	}
	lines = append(lines, st.faint.Render(strings.Repeat("─", w)))
	lines = append(lines, m.detail()...)
	return program.Fit(lines, w, m.ctx.BodyHeight())
}

// top names what a side served most in a stretch: its first queue and cgroup.
func (m Model) top(s diff.Served) string {
	var parts []string
	if len(s.Queues) > 0 {
		parts = append(parts, s.Queues[0].Name)
	}
	if len(s.Cgroups) > 0 {
		parts = append(parts, m.ctx.Index.CgroupName(s.Cgroups[0].ID))
	}
	return strings.Join(parts, " ")
}

func (m Model) detail() []string {
	d, ok := m.Selected()
	if !ok {
		return nil
	}
	st := m.styles
	return []string{
		fmt.Sprintf("#%d: positions %d-%d (predicted %d-%d), %d bios, %s; mean %.1f, max %d ranks",
			d.Rank, d.First, d.Last, d.PredFirst, d.PredLast, d.Bios, program.Bytes(d.Bytes), d.MeanDisplacement, d.MaxDisplacement),
		fmt.Sprintf("%s %s-%s s   %s %s-%s s", st.real.Render("real"), program.Seconds(d.RealStart), program.Seconds(d.RealEnd),
			st.pred.Render("predicted"), program.Seconds(d.PredStart), program.Seconds(d.PredEnd)),
		st.real.Render("real served ") + m.served(d.Real),
		st.pred.Render("predicted   ") + m.served(d.Predicted),
	}
}

func (m Model) served(s diff.Served) string {
	var parts []string
	for _, c := range s.Cgroups[:min(len(s.Cgroups), 3)] {
		parts = append(parts, fmt.Sprintf("%s x%d", m.ctx.Index.CgroupName(c.ID), c.Bios))
	}
	for _, q := range s.Queues[:min(len(s.Queues), 4)] {
		parts = append(parts, fmt.Sprintf("q %s x%d", q.Name, q.Bios))
	}
	return strings.Join(parts, ", ")
}
