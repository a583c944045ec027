// Package queues shows each scheduler queue over time: its think-time
// class (recomputed from timing and as the scheduler logged it) with the
// class flips, its merges, and the budget and weight history its messages
// give, real against predicted.
package queues

import (
	"fmt"
	"math"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui/program"
)

// detailLines is the height of the selected queue's history.
const detailLines = 10

// Model is the queue view. A queue's message history is parsed the first
// time the queue is shown and cached.
type Model struct {
	ctx    *program.Context
	keys   KeyMap
	styles styles
	list   program.List
	cache  map[int64]*[2]history // per queue key; shared by the copies of the model
}

// New returns the queue view of ctx.Result.
func New(ctx *program.Context) Model {
	return Model{ctx: ctx, keys: NewKeyMap(), styles: newStyles(ctx.Styles), cache: map[int64]*[2]history{}}
}

// Keys returns the view's key map.
func (m Model) Keys() KeyMap { return m.keys }

// Selected returns the index of the selected queue in ThinkTime.PerQueue.
func (m Model) Selected() int { return m.list.Pos }

func (m Model) listHeight() int {
	return min(max(m.ctx.BodyHeight()-3-detailLines, 1), max(len(m.ctx.Result.ThinkTime.PerQueue), 1))
}

// Update handles the view's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		m.list.Move(k, m.keys.NavKeys, len(m.ctx.Result.ThinkTime.PerQueue), m.listHeight())
	}
	return m, nil
}

// View draws the queue table and the selected queue's history.
func (m Model) View() string {
	tt := &m.ctx.Result.ThinkTime
	st := m.styles
	w, h := m.ctx.Width, m.ctx.BodyHeight()
	lines := []string{fmt.Sprintf("%s %d sync queues · think-time agreement %s · threshold %s",
		st.title.Render("Queues"), len(tt.PerQueue), program.Percent(tt.Agreement), program.Duration(time.Duration(tt.ThresholdSeconds*1e9)))}
	lines = append(lines, st.header.Render(fmt.Sprintf("  %-9s %13s %11s %7s %7s %13s %6s", "queue", "requests r/p", "short% r/p", "flips", "logged", "mean ms r/p", "agree")))
	lh := m.listHeight()
	from, to := m.list.Visible(len(tt.PerQueue), lh)
	for i := from; i < to; i++ {
		q := &tt.PerQueue[i]
		row := fmt.Sprintf("%s%-9s %6d/%-6d %5.1f/%-5.1f %3d/%-3d %3d/%-3d %6.2f/%-6.2f %5.1f%%", m.list.Marker(i), q.Queue,
			q.RealRequests, q.PredRequests, 100*q.RealShortFraction, 100*q.PredShortFraction, q.RealFlips, q.PredFlips,
			q.RealLoggedFlips, q.PredLoggedFlips, 1e3*q.RealFinalMean, 1e3*q.PredFinalMean, 100*q.Agreement)
		if i == m.list.Pos {
			row = st.selected.Render(program.Pad(row, w))
		}
		lines = append(lines, row)
	}
	if len(tt.PerQueue) == 0 {
		lines = append(lines, "  no sync queues")
	}
	for len(lines) < 2+lh {
		lines = append(lines, "")
	}
	lines = append(lines, st.faint.Render(strings.Repeat("─", w)))
	if m.list.Pos < len(tt.PerQueue) {
		lines = append(lines, m.detail(&tt.PerQueue[m.list.Pos], w)...)
	}
	return program.Fit(lines, w, h)
}

// detail draws a queue's history across the whole trace, one column per
// time step: classes as ▁ (short) and █ (long), budget and weight as
// sparklines of their last logged value.
func (m Model) detail(q *diff.QueueThink, w int) []string {
	st := m.styles
	ix := m.ctx.Index
	gw := max(w-11, 8)
	t0 := ix.Start
	dt := float64(max(ix.End-ix.Start, 1)) / float64(gw)
	colTime := func(c int) trace.Time { return t0 + trace.Time(float64(c)*dt+dt/2) }
	label := func(s string, style interface{ Render(...string) string }) string {
		return style.Render(program.Pad(s, 11))
	}

	class := func(series []diff.ThinkPoint) string {
		r := make([]rune, gw)
		j := 0
		for c := range r {
			t := colTime(c)
			for j < len(series) && series[j].Time <= t {
				j++
			}
			switch {
			case j == 0:
				r[c] = ' '
			case series[j-1].Short:
				r[c] = '▁'
			default:
				r[c] = '█'
			}
		}
		return string(r)
	}
	logged := func(ps []diff.LoggedPoint) string {
		r := make([]rune, gw)
		j := 0
		for c := range r {
			t := colTime(c)
			for j < len(ps) && ps[j].Time <= t {
				j++
			}
			switch {
			case j == 0:
				r[c] = ' '
			case ps[j-1].Short:
				r[c] = '▁'
			default:
				r[c] = '█'
			}
		}
		return string(r)
	}
	key := program.QueueKey(int64(q.PID), q.Sync)
	hs := m.history(key)
	steps := func(get func(history) []point) [2]string {
		// Scaled from the smallest to the largest value either side
		// logged, so that small changes show; blank before the first.
		lo, hi := math.Inf(1), math.Inf(-1)
		for side := range 2 {
			for _, p := range get(hs[side]) {
				lo, hi = min(lo, p.v), max(hi, p.v)
			}
		}
		var out [2]string
		for side := range 2 {
			ps := get(hs[side])
			r := make([]rune, gw)
			for c := range gw {
				v, ok := at(ps, colTime(c))
				switch {
				case !ok:
					r[c] = ' '
				case hi > lo:
					r[c] = program.Level(1+7*(v-lo)/(hi-lo), 8)
				default:
					r[c] = program.Level(1, 2)
				}
			}
			out[side] = string(r)
		}
		return out
	}
	budget := steps(func(h history) []point { return h.budget })
	weight := steps(func(h history) []point { return h.weight })

	lines := []string{
		fmt.Sprintf("%s  %s→%s s   ▁ short  █ long think time", st.title.Render("queue "+q.Queue), program.Seconds(ix.Start), program.Seconds(ix.End)),
		label("class R", st.real) + st.real.Render(class(q.RealSeries)),
		label("class P", st.pred) + st.pred.Render(class(q.PredSeries)),
		label("logged R", st.real) + st.real.Render(logged(q.RealLogged)),
		label("logged P", st.pred) + st.pred.Render(logged(q.PredLogged)),
		label("budget R", st.real) + st.real.Render(budget[0]),
		label("budget P", st.pred) + st.pred.Render(budget[1]),
		label("weight R", st.real) + st.real.Render(weight[0]),
		label("weight P", st.pred) + st.pred.Render(weight[1]),
		m.summary(q, hs),
	}
	return lines
}

// summary is the queue's merges and the extent of its histories.
func (m Model) summary(q *diff.QueueThink, hs *[2]history) string {
	mg := &m.ctx.Result.Merges
	var pm diff.ProcessMerges
	for _, p := range mg.Processes {
		if p.PID == q.PID {
			pm = p
		}
	}
	count := func(list []diff.QueueMerge) int {
		n := 0
		for _, x := range list {
			if strings.HasSuffix(x.Queue, q.Queue) && len(x.Queue) > len(q.Queue) && !isDigit(x.Queue[len(x.Queue)-len(q.Queue)-1]) {
				n++
			}
		}
		return n
	}
	rng := func(ps []point) string {
		if len(ps) == 0 {
			return "-"
		}
		lo, hi := ps[0].v, ps[0].v
		for _, p := range ps {
			lo, hi = min(lo, p.v), max(hi, p.v)
		}
		return fmt.Sprintf("%g..%g", lo, hi)
	}
	return fmt.Sprintf("merges back %d/%d front %d/%d queue %d/%d · budget %s / %s (%d/%d changes) · weight %s / %s",
		pm.RealBack, pm.PredBack, pm.RealFront, pm.PredFront, count(mg.RealList), count(mg.PredList),
		rng(hs[0].budget), rng(hs[1].budget), changes(hs[0].budget), changes(hs[1].budget), rng(hs[0].weight), rng(hs[1].weight))
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// history returns the queue's parsed message history, parsing it once.
func (m Model) history(key int64) *[2]history {
	if h, ok := m.cache[key]; ok {
		return h
	}
	ix := m.ctx.Index
	h := &[2]history{
		parseHistory(&ix.Real.Side.Messages, ix.QueueMessages[0][key]),
		parseHistory(&ix.Pred.Side.Messages, ix.QueueMessages[1][key]),
	}
	m.cache[key] = h
	return h
}
