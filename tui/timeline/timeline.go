// Package timeline shows the real and the predicted dispatches side by
// side around a moment: one pair of lanes (real above, predicted below)
// per scheduler queue or cgroup on a common time axis, and under them the
// two sides' dispatches and scheduler messages nearest the cursor.
//
// Cost per key press: two binary searches per side into the index sorted
// by issue time, then one pass over the dispatches inside the window (a
// window wider than the trace costs one pass over the trace, a few ms per
// million requests) and O(rows) for the event lists.
package timeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui/program"
)

// MessageFilter says which scheduler messages the event lists show.
type MessageFilter int

// The message filters, in the order the Messages key cycles them.
const (
	MessagesDecisions MessageFilter = iota // queue selection, expiry, idling, budgets, weights, merges
	MessagesAll
	MessagesNone
	numMessageFilters
)

func (f MessageFilter) String() string { return [...]string{"decisions", "all", "none"}[f] }

const (
	labelWidth = 14               // lane label: name, side letter
	minSpan    = time.Microsecond // deepest zoom
	scanLimit  = 4096             // messages skipped at most while looking for one the filter shows
)

// Model is the timeline.
type Model struct {
	ctx    *program.Context
	keys   KeyMap
	styles styles

	cursor   trace.Time    // real-axis time under the cursor
	span     time.Duration // window width
	offset   trace.Time    // predicted axis = real axis + offset, when aligned
	aligned  bool
	byCgroup bool
	laneTop  int
	msgs     MessageFilter
	moment   program.Moment // what was opened last ("" label: nothing)

	byTime []int // ranked divergences in real start order
}

// New returns a timeline over the whole trace.
func New(ctx *program.Context) Model {
	m := Model{ctx: ctx, keys: NewKeyMap(), styles: newStyles(ctx.Styles)}
	ix := ctx.Index
	whole := ix.End.Sub(ix.Start)
	m.span = max(whole+whole/50, time.Millisecond)
	m.cursor = ix.Start + trace.Time(whole/2)
	ranked := ctx.Result.DispatchOrder.Ranked
	m.byTime = make([]int, len(ranked))
	for i := range m.byTime {
		m.byTime[i] = i
	}
	slices.SortStableFunc(m.byTime, func(a, b int) int { return cmp.Compare(ranked[a].RealStart, ranked[b].RealStart) })
	return m
}

// Keys returns the timeline's key map.
func (m Model) Keys() KeyMap { return m.keys }

// Cursor returns the real-axis time at the cursor.
func (m Model) Cursor() trace.Time { return m.cursor }

// Span returns the window width.
func (m Model) Span() time.Duration { return m.span }

// ByCgroup reports whether the lanes are cgroups (else queues).
func (m Model) ByCgroup() bool { return m.byCgroup }

// PredOffset returns how far the predicted axis is shifted from the real one.
func (m Model) PredOffset() trace.Time {
	if m.aligned {
		return m.offset
	}
	return 0
}

// Focus puts the cursor on a moment, with the predicted axis aligned on
// the moment's predicted time.
func (m Model) Focus(mo program.Moment) Model {
	m.cursor = mo.Real
	m.offset = 0
	if mo.Pred.Valid() && mo.Real.Valid() {
		m.offset = mo.Pred - mo.Real
	}
	m.aligned = true
	if mo.Span > 0 {
		m.span = max(mo.Span, minSpan)
	}
	m.laneTop = 0
	m.moment = mo
	return m
}

func (m Model) maxSpan() time.Duration {
	return max(4*m.ctx.Index.End.Sub(m.ctx.Index.Start), time.Second)
}

// Update handles the timeline's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	ix := m.ctx.Index
	step := trace.Time(max(m.span/16, 1))
	switch {
	case key.Matches(k, m.keys.Left):
		m.cursor -= step
	case key.Matches(k, m.keys.Right):
		m.cursor += step
	case key.Matches(k, m.keys.PageUp):
		m.cursor -= trace.Time(m.span)
	case key.Matches(k, m.keys.PageDown):
		m.cursor += trace.Time(m.span)
	case key.Matches(k, m.keys.ZoomIn):
		m.span = max(m.span/2, minSpan)
	case key.Matches(k, m.keys.ZoomOut):
		m.span = min(m.span*2, m.maxSpan())
	case key.Matches(k, m.keys.Top):
		m.cursor = ix.Start
	case key.Matches(k, m.keys.Bottom):
		m.cursor = ix.End
	case key.Matches(k, m.keys.Up):
		m.laneTop = max(m.laneTop-1, 0)
	case key.Matches(k, m.keys.Down):
		m.laneTop++ // clamped when drawn
	case key.Matches(k, m.keys.NextDispatch):
		if i := ix.Real.Lower(m.cursor + 1); i < len(ix.Real.Issue) {
			m.cursor = ix.Real.Issue[i]
		}
	case key.Matches(k, m.keys.PrevDispatch):
		if i := ix.Real.Lower(m.cursor); i > 0 {
			m.cursor = ix.Real.Issue[i-1]
		}
	case key.Matches(k, m.keys.NextDivergence), key.Matches(k, m.keys.PrevDivergence):
		m = m.stepDivergence(key.Matches(k, m.keys.NextDivergence))
	case key.Matches(k, m.keys.Lanes):
		m.byCgroup = !m.byCgroup
		m.laneTop = 0
	case key.Matches(k, m.keys.Align):
		m.aligned = !m.aligned
	case key.Matches(k, m.keys.Messages):
		m.msgs = (m.msgs + 1) % numMessageFilters
	}
	// Keep the cursor within a window of the trace.
	lo, hi := ix.Start-trace.Time(m.span), ix.End+trace.Time(m.span)
	m.cursor = min(max(m.cursor, lo), hi)
	return m, nil
}

func (m Model) stepDivergence(next bool) Model {
	ranked := m.ctx.Result.DispatchOrder.Ranked
	if len(m.byTime) == 0 {
		return m
	}
	i := sortSearch(len(m.byTime), func(i int) bool { return ranked[m.byTime[i]].RealStart > m.cursor })
	if !next {
		i = sortSearch(len(m.byTime), func(i int) bool { return ranked[m.byTime[i]].RealStart >= m.cursor }) - 1
	}
	if i < 0 || i >= len(m.byTime) {
		return m
	}
	d := ranked[m.byTime[i]]
	span := m.span
	return m.Focus(program.Moment{Real: d.RealStart, Pred: d.PredStart, RealEnd: d.RealEnd, PredFrom: d.PredStart, PredEnd: d.PredEnd,
		Span: span, Label: fmt.Sprintf("divergence #%d", d.Rank)})
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !f(h) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// View draws the timeline.
func (m Model) View() string {
	w, h := m.ctx.Width, m.ctx.BodyHeight()
	st := m.styles
	gw := max(w-labelWidth, 10)
	off := m.PredOffset()
	t0 := m.cursor - trace.Time(m.span/2)
	dt := float64(m.span) / float64(gw)
	curCol := int(float64(m.cursor-t0) / dt)

	lanesName := "queue"
	if m.byCgroup {
		lanesName = "cgroup"
	}
	title := fmt.Sprintf("%s %s s · window %s · %s lanes · predicted %s",
		st.title.Render("Timeline"), program.Seconds(m.cursor), program.Duration(m.span), lanesName, offsetText(off, m.aligned))
	if m.moment.Label != "" {
		title += " · " + m.moment.Label
	}
	lines := []string{title, m.why(off)}
	lines = append(lines, m.axis(t0, gw, curCol))

	// Lanes take about half the body; the event lists the rest.
	laneRows := max((h-3-2)/2, 2) &^ 1
	lines = append(lines, m.lanes(t0, dt, gw, curCol, off, laneRows/2)...)
	lines = append(lines, st.faint.Render(strings.Repeat("─", w)))
	lines = append(lines, m.events(w, h-len(lines), off)...)
	return program.Fit(lines, w, h)
}

func offsetText(off trace.Time, aligned bool) string {
	if !aligned {
		return "at the same time"
	}
	sign := "+"
	if off < 0 {
		sign = "-"
	}
	return "aligned " + sign + program.Duration(time.Duration(max(off, -off)))
}

// axis draws the window's start, the cursor time and the window's end.
func (m Model) axis(t0 trace.Time, gw, curCol int) string {
	row := []rune(strings.Repeat(" ", gw))
	put := func(at int, s string) {
		for i, r := range []rune(s) {
			if at+i >= 0 && at+i < gw {
				row[at+i] = r
			}
		}
	}
	left := program.Seconds(t0)
	right := program.Seconds(t0 + trace.Time(m.span))
	put(0, "├"+left)
	put(gw-len(right)-1, right+"┤")
	if curCol >= 0 && curCol < gw {
		row[curCol] = '▼'
	}
	return strings.Repeat(" ", labelWidth) + m.styles.faint.Render(string(row[:curCol])) + m.styles.cursor.Render(string(row[curCol:curCol+1])) + m.styles.faint.Render(string(row[curCol+1:]))
}

// laneCounts counts one side's dispatches per lane and column of the window.
type laneCounts struct {
	slot   []int32   // lane -> slot in cells, -1 when the lane has none
	lanes  []int32   // slot -> lane
	cells  [][]int32 // slot -> dispatches per column
	totals []int
}

func (lc *laneCounts) count(si *program.SideIndex, laneOf []int32, t0 trace.Time, dt float64, gw int) {
	lo := si.Lower(t0)
	hi := si.Lower(t0 + trace.Time(dt*float64(gw)))
	for i := lo; i < hi; i++ {
		l := laneOf[i]
		s := lc.slot[l]
		if s < 0 {
			s = int32(len(lc.lanes))
			lc.slot[l] = s
			lc.lanes = append(lc.lanes, l)
			lc.cells = append(lc.cells, make([]int32, gw))
			lc.totals = append(lc.totals, 0)
		}
		c := min(int(float64(si.Issue[i]-t0)/dt), gw-1)
		lc.cells[s][c]++
		lc.totals[s]++
	}
}

func newLaneCounts(n int) *laneCounts {
	lc := &laneCounts{slot: make([]int32, n)}
	for i := range lc.slot {
		lc.slot[i] = -1
	}
	return lc
}

// lanes draws up to n lanes (two rows each), busiest first.
func (m Model) lanes(t0 trace.Time, dt float64, gw, curCol int, off trace.Time, n int) []string {
	ix := m.ctx.Index
	st := m.styles
	names := ix.QueueLanes
	rl, pl := ix.Real.QueueLane, ix.Pred.QueueLane
	if m.byCgroup {
		names = ix.CgroupLanes
		rl, pl = ix.Real.CgroupLane, ix.Pred.CgroupLane
	}
	real, pred := newLaneCounts(len(names)), newLaneCounts(len(names))
	real.count(&ix.Real, rl, t0, dt, gw)
	pred.count(&ix.Pred, pl, t0+off, dt, gw)
	// Lanes with dispatches on either side, busiest first, then by name.
	type lane struct {
		id    int32
		total int
	}
	seen := map[int32]int{}
	var ls []lane
	for _, lc := range []*laneCounts{real, pred} {
		for s, id := range lc.lanes {
			if k, ok := seen[id]; ok {
				ls[k].total += lc.totals[s]
				continue
			}
			seen[id] = len(ls)
			ls = append(ls, lane{id, lc.totals[s]})
		}
	}
	slices.SortFunc(ls, func(a, b lane) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return cmp.Compare(names[a.id].Name, names[b.id].Name)
	})
	var top int32
	for _, lc := range []*laneCounts{real, pred} {
		for _, cs := range lc.cells {
			for _, v := range cs {
				top = max(top, v)
			}
		}
	}
	if len(ls) == 0 {
		return []string{strings.Repeat(" ", labelWidth) + st.faint.Render("no dispatches in this window")}
	}
	first := min(m.laneTop, max(len(ls)-n, 0))
	var out []string
	for _, l := range ls[first:min(first+n, len(ls))] {
		for side, lc := range []*laneCounts{real, pred} {
			var cells []int32
			if s := lc.slot[l.id]; s >= 0 {
				cells = lc.cells[s]
			}
			label := program.Pad(tail(names[l.id].Name, labelWidth-3), labelWidth-3) + " R "
			style := st.real
			if side == 1 {
				label = strings.Repeat(" ", labelWidth-3) + " P "
				style = st.pred
			}
			out = append(out, label+m.row(cells, gw, curCol, float64(top), style))
		}
	}
	if more := len(ls) - first - n; more > 0 || first > 0 {
		out = append(out, st.faint.Render(fmt.Sprintf("%*s lanes %d-%d of %d (j/k)", labelWidth-1, "", first+1, min(first+n, len(ls)), len(ls))))
	}
	return out
}

// row draws one lane row: a block per column scaled to top, the cursor
// column as a bar where the lane is idle.
func (m Model) row(cells []int32, gw, curCol int, top float64, style interface{ Render(...string) string }) string {
	r := make([]rune, gw)
	for c := range r {
		v := 0.0
		if cells != nil {
			v = float64(cells[c])
		}
		r[c] = program.Level(v, top)
		if r[c] == ' ' {
			r[c] = '·'
			if c != curCol {
				r[c] = ' '
			}
		}
	}
	if curCol < 0 || curCol >= gw {
		return style.Render(string(r))
	}
	if r[curCol] == '·' {
		r[curCol] = '│'
	}
	return style.Render(string(r[:curCol])) + m.styles.cursor.Render(string(r[curCol])) + style.Render(string(r[curCol+1:]))
}

// why returns the decision mismatch nearest the cursor within the window:
// the line that says why the two sides dispatch differently.
func (m Model) why(off trace.Time) string {
	best, bestD := -1, int64(math.MaxInt64)
	mms := m.ctx.Result.Decisions.Mismatches
	for i := range mms {
		t := mms[i].RealTime
		if !t.Valid() {
			if !mms[i].PredTime.Valid() {
				continue
			}
			t = mms[i].PredTime - off
		}
		d := int64(t - m.cursor)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 || bestD > int64(m.span/2) {
		return m.styles.faint.Render("no decision mismatch in this window")
	}
	mm := mms[best]
	q := mm.Queue
	if q == "" {
		q = "next queue"
	}
	return m.styles.why.Render("decision ") + fmt.Sprintf("%s %s #%d: %s %q @%s · %s %q @%s", mm.Kind, q, mm.Ordinal,
		m.styles.real.Render("real"), mm.Real, program.Seconds(mm.RealTime), m.styles.pred.Render("predicted"), mm.Predicted, program.Seconds(mm.PredTime))
}

// item is one line of an event list: a dispatch or a message.
type item struct {
	t   trace.Time
	req int32 // index of a request of the Side (Side.RequestAt), or -1
	msg int32 // index in Side.Messages, or -1
}

// around returns up to nb items before t (in time order) and na from t on.
func (m Model) around(si *program.SideIndex, t trace.Time, nb, na int) (before, after []item) {
	msgs := &si.Side.Messages
	show := func(j int) bool {
		switch m.msgs {
		case MessagesAll:
			return true
		case MessagesDecisions:
			return decisive(msgs.At(j))
		}
		return false
	}
	// Backwards from t.
	i, j := si.Lower(t)-1, si.MessageLower(t)-1
	skipped := 0
	for len(before) < nb && (i >= 0 || j >= 0) {
		if j >= 0 && m.msgs != MessagesNone && (i < 0 || msgs.At(j).Time >= si.Issue[i]) {
			if show(j) {
				before = append(before, item{msgs.At(j).Time, -1, int32(j)})
			} else if skipped++; skipped > scanLimit {
				j = -1
			}
			j--
			continue
		}
		if i < 0 {
			break
		}
		before = append(before, item{si.Issue[i], si.Order[i], -1})
		i--
	}
	slices.Reverse(before)
	// Forwards from t.
	i, j = si.Lower(t), si.MessageLower(t)
	skipped = 0
	for len(after) < na && (i < len(si.Issue) || j < msgs.Len()) {
		if j < msgs.Len() && m.msgs != MessagesNone && (i >= len(si.Issue) || msgs.At(j).Time < si.Issue[i]) {
			if show(j) {
				after = append(after, item{msgs.At(j).Time, -1, int32(j)})
			} else if skipped++; skipped > scanLimit {
				j = msgs.Len()
			}
			j++
			continue
		}
		if i >= len(si.Issue) {
			break
		}
		after = append(after, item{si.Issue[i], si.Order[i], -1})
		i++
	}
	return before, after
}

// decisive reports whether a message records a scheduling decision or a
// queue's state: what explains a dispatch order.
func decisive(msg *diff.Message) bool {
	b := msg.Msg.Body
	for _, s := range []string{"set_in_service", "expire", "budget", "idle", "merg", "select_queue: returned", "set_active", "weight", "raising", "short_ttime", "slice"} {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// events draws the two sides' dispatches and messages around the cursor,
// side by side, with the cursor as a rule between past and future.
func (m Model) events(w, h int, off trace.Time) []string {
	if h < 2 {
		return nil
	}
	st := m.styles
	ix := m.ctx.Index
	colW := max((w-3)/2, 10)
	rows := h - 1
	nb := (rows - 1) / 2
	na := rows - 1 - nb
	var cols [2][]string
	for side := 0; side < 2; side++ {
		si := ix.Side(side)
		t := m.cursor
		style := st.real
		if side == 1 {
			t += off
			style = st.pred
		}
		before, after := m.around(si, t, nb, na)
		var col []string
		for k := 0; k < nb-len(before); k++ {
			col = append(col, "")
		}
		for _, it := range before {
			col = append(col, m.item(si, it, colW, style))
		}
		col = append(col, st.cursor.Render(program.Pad("── "+program.Seconds(t)+" ", colW-1)))
		for _, it := range after {
			col = append(col, m.item(si, it, colW, style))
		}
		cols[side] = col
	}
	head := program.Pad(st.real.Render("real")+" dispatches and messages", colW) + " │ " + st.pred.Render("predicted")
	out := []string{head}
	for r := 0; r < rows; r++ {
		var a, b string
		if r < len(cols[0]) {
			a = cols[0][r]
		}
		if r < len(cols[1]) {
			b = cols[1][r]
		}
		out = append(out, program.Pad(a, colW)+" │ "+program.Truncate(b, colW))
	}
	return out
}

func (m Model) item(si *program.SideIndex, it item, colW int, style interface{ Render(...string) string }) string {
	tm := program.Seconds(it.t)
	if it.req >= 0 {
		rv := si.Side.RequestAt(int(it.req))
		r := &rv
		q := program.QueueName(program.QueueKey(int64(r.PID), program.IsSync(r.Cat)))
		return program.Truncate(style.Render(fmt.Sprintf("%s D %-6s %s %s", tm, q, m.ctx.Index.CgroupName(r.Cgroup), program.Bytes(uint64(r.Bytes)))), colW)
	}
	msg := si.Side.Messages.At(int(it.msg))
	q := "-"
	if msg.Msg.PID != 0 {
		q = program.QueueName(program.QueueKey(int64(msg.Msg.PID), msg.Msg.Sync))
	}
	return program.Truncate(tm+" "+m.styles.msg.Render("m "+q+" "+msg.Msg.Body), colW)
}

// tail keeps the last n cells of a lane name: the informative end of a
// cgroup path.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
