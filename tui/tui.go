// Package tui is tracesched's terminal inspector: a Bubble Tea program over
// a diff.Result in which a kernel developer walks through the places where
// a scheduler model dispatched differently from the kernel, and sees why.
//
// Five views, switched with tab or 1-5: the overview (headline figures and
// the run's parameters), the ranked divergences (filter with /, sort with
// s, enter opens one), the timeline (real and predicted dispatches side by
// side around a moment, lanes per queue or cgroup, with the scheduler
// messages of both sides), bandwidth per cgroup over time, and the queues
// (think-time class, merges, budget and weight over time). ? shows every
// key, esc goes back, q quits.
//
// Layout follows gh-dash: one package per view (tui/<view>: <view>.go,
// keys.go, styles.go) over tui/program, which holds the shared context,
// the styles and the indexes built once per Result. The root model only
// routes: global keys here, everything else to the focused view.
//
// Every view draws only what is visible and reads precomputed indexes, so
// a key press costs no time proportional to the trace (see
// BenchmarkKeyPress).
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui/bandwidth"
	"github.com/tracesched/tracesched/tui/divergences"
	"github.com/tracesched/tracesched/tui/overview"
	"github.com/tracesched/tracesched/tui/program"
	"github.com/tracesched/tracesched/tui/queues"
	"github.com/tracesched/tracesched/tui/timeline"
)

// RunInfo describes the run: scheduler, kernel, tunables, weights, device
// model and input names, shown by the overview.
type RunInfo = program.RunInfo

// View names one of the inspector's views.
type View = program.View

// The views, in tab order (keys 1-5).
const (
	ViewOverview    = program.ViewOverview
	ViewDivergences = program.ViewDivergences
	ViewTimeline    = program.ViewTimeline
	ViewBandwidth   = program.ViewBandwidth
	ViewQueues      = program.ViewQueues
)

// ParseView returns the view called name ("overview", "divergences",
// "timeline", "bandwidth", "queues"), and false when there is none.
func ParseView(name string) (View, bool) { return program.ParseView(name) }

// ViewNames lists the views' names in tab order.
func ViewNames() []string { return program.ViewNames() }

// Minimum usable screen; smaller ones get a notice instead of a garbled view.
const minWidth, minHeight = 40, 10

type config struct {
	renderer *lipgloss.Renderer
	view     View
	width    int
	height   int
}

// Option configures New, Run and RunLoading.
type Option func(*config)

// WithRenderer draws with r, whose colour profile decides the colours
// (lipgloss.NewRenderer(out) picks it from the output; tests pin
// termenv.Ascii). The default is lipgloss.DefaultRenderer().
func WithRenderer(r *lipgloss.Renderer) Option { return func(c *config) { c.renderer = r } }

// WithView opens the inspector on view v (default: the overview).
func WithView(v View) Option { return func(c *config) { c.view = v } }

// WithSize sets the initial screen size, before the first
// tea.WindowSizeMsg (default 80x24).
func WithSize(width, height int) Option {
	return func(c *config) { c.width, c.height = width, height }
}

func newConfig(opts []Option) config {
	c := config{width: 80, height: 24}
	for _, o := range opts {
		o(&c)
	}
	if c.renderer == nil {
		c.renderer = lipgloss.DefaultRenderer()
	}
	return c
}

// Model is the inspector: a tea.Model.
type Model struct {
	ctx      *program.Context
	keys     KeyMap
	help     help.Model
	showHelp bool
	active   View
	back     []View // views to return to with esc

	overview    overview.Model
	divergences divergences.Model
	timeline    timeline.Model
	bandwidth   bandwidth.Model
	queues      queues.Model

	load *loadState // non-nil while a trace loads (RunLoading)
	opts []Option
}

// New returns the inspector of res. It builds the indexes the views need
// (O(n log n) in the trace; about a second for a million requests), so
// call it off the UI goroutine for big traces (RunLoading does).
func New(res *diff.Result, info RunInfo, opts ...Option) Model {
	c := newConfig(opts)
	ctx := &program.Context{
		Width: c.width, Height: c.height,
		Styles: program.NewStyles(c.renderer),
		Result: res,
		Info:   info,
		Index:  program.NewIndex(res),
	}
	m := Model{ctx: ctx, keys: NewKeyMap(), help: newHelp(ctx.Styles), active: c.view, opts: opts}
	m.help.Width = c.width
	m.overview = overview.New(ctx)
	m.divergences = divergences.New(ctx)
	m.timeline = timeline.New(ctx)
	if f := res.DispatchOrder.FirstDivergence; f != nil {
		m.timeline = m.timeline.Focus(program.Moment{Real: f.RealTime, Pred: f.PredTime, Label: "first divergence"})
	}
	m.bandwidth = bandwidth.New(ctx)
	m.queues = queues.New(ctx)
	return m
}

func newHelp(s *program.Styles) help.Model {
	h := help.New()
	h.Styles = help.Styles{
		ShortKey: s.HelpKey, ShortDesc: s.HelpDesc, ShortSeparator: s.HelpSep,
		FullKey: s.HelpKey, FullDesc: s.HelpDesc, FullSeparator: s.HelpSep,
		Ellipsis: s.HelpSep,
	}
	return h
}

// ActiveView returns the view on screen.
func (m Model) ActiveView() View { return m.active }

// Divergences returns the divergence list's state.
func (m Model) Divergences() divergences.Model { return m.divergences }

// Timeline returns the timeline's state.
func (m Model) Timeline() timeline.Model { return m.timeline }

// Init implements tea.Model.
func (m Model) Init() tea.Cmd {
	if m.load != nil {
		return m.load.init(m.opts)
	}
	return nil
}

// Update implements tea.Model: global keys here, the rest to the view.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.load != nil {
		return m.updateLoading(msg)
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.ctx.Width, m.ctx.Height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m.delegate(msg)
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.capturing() {
			return m.splitRunes(msg)
		}
		return m.handleKey(msg)
	}
	return m.delegate(msg)
}

// splitRunes handles keys that arrived in one read (fast typing, key
// repeat: Bubble Tea v1 then sends "ll+" as one message) one by one.
func (m Model) splitRunes(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	var tm tea.Model = m
	for _, r := range msg.Runes {
		var cmd tea.Cmd
		tm, cmd = tm.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}
	return tm, tea.Batch(cmds...)
}

func (m Model) capturing() bool {
	return m.active == ViewDivergences && m.divergences.Capturing()
}

func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if key.Matches(msg, k.ForceQuit) {
		return m, tea.Quit
	}
	if m.capturing() {
		return m.delegate(msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Quit):
			return m, tea.Quit
		case key.Matches(msg, k.Help), key.Matches(msg, k.Back):
			m.showHelp = false
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return m, nil
	case key.Matches(msg, k.Back):
		if n := len(m.back); n > 0 {
			m.active, m.back = m.back[n-1], m.back[:n-1]
		}
		return m, nil
	case key.Matches(msg, k.NextView):
		return m.switchTo((m.active + 1) % program.NumViews), nil
	case key.Matches(msg, k.PrevView):
		return m.switchTo((m.active + program.NumViews - 1) % program.NumViews), nil
	}
	for v, b := range k.ViewKeys() {
		if key.Matches(msg, b) {
			return m.switchTo(View(v)), nil
		}
	}
	if m.active == ViewDivergences && key.Matches(msg, m.divergences.Keys().Open) {
		if mo, ok := m.divergences.Moment(); ok {
			m.timeline = m.timeline.Focus(mo)
			m.back = append(m.back, m.active)
			m.active = ViewTimeline
		}
		return m, nil
	}
	return m.delegate(msg)
}

// switchTo shows view v; an explicit switch forgets the way back.
func (m Model) switchTo(v View) Model {
	m.active = v
	m.back = m.back[:0]
	return m
}

// delegate passes msg to the view on screen.
func (m Model) delegate(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch m.active {
	case ViewOverview:
		m.overview, cmd = m.overview.Update(msg)
	case ViewDivergences:
		m.divergences, cmd = m.divergences.Update(msg)
	case ViewTimeline:
		m.timeline, cmd = m.timeline.Update(msg)
	case ViewBandwidth:
		m.bandwidth, cmd = m.bandwidth.Update(msg)
	case ViewQueues:
		m.queues, cmd = m.queues.Update(msg)
	}
	return m, cmd
}

func (m Model) viewKeys() combined {
	var v interface {
		ShortHelp() []key.Binding
		FullHelp() [][]key.Binding
	}
	switch m.active {
	case ViewOverview:
		v = m.overview.Keys()
	case ViewDivergences:
		v = m.divergences.Keys()
	case ViewTimeline:
		v = m.timeline.Keys()
	case ViewBandwidth:
		v = m.bandwidth.Keys()
	default:
		v = m.queues.Keys()
	}
	return combined{view: v, global: m.keys}
}

// View implements tea.Model: tab bar, the view, and a one-line footer.
func (m Model) View() string {
	if m.load != nil {
		return m.viewLoading()
	}
	w, h := m.ctx.Width, m.ctx.Height
	if w < minWidth || h < minHeight {
		return program.Fit([]string{"tracesched: terminal too small", fmt.Sprintf("need %dx%d, have %dx%d", minWidth, minHeight, w, h)}, w, h)
	}
	var body string
	switch {
	case m.showHelp:
		body = m.viewHelp()
	case m.active == ViewOverview:
		body = m.overview.View()
	case m.active == ViewDivergences:
		body = m.divergences.View()
	case m.active == ViewTimeline:
		body = m.timeline.View()
	case m.active == ViewBandwidth:
		body = m.bandwidth.View()
	default:
		body = m.queues.View()
	}
	footer := m.help.ShortHelpView(m.viewKeys().ShortHelp())
	return m.tabs() + "\n" + body + "\n" + program.Truncate(footer, w)
}

// tabs draws the tab bar; the active tab is bracketed so that it shows
// without colour too.
func (m Model) tabs() string {
	st := m.ctx.Styles
	var b strings.Builder
	for v := range View(program.NumViews) {
		name := fmt.Sprintf("%d %s", v+1, v)
		if v == m.active {
			b.WriteString(st.TabActive.Render("[" + name + "]"))
		} else {
			b.WriteString(st.TabInactive.Render(" " + name + " "))
		}
	}
	title := "tracesched"
	if s := m.ctx.Result.Scheduler; s != "" {
		title += " · " + s
	}
	line := b.String()
	if pad := m.ctx.Width - program.Width(line) - len(title) - 1; pad > 0 {
		line += strings.Repeat(" ", pad) + st.Title.Render(title)
	}
	return program.Truncate(line, m.ctx.Width)
}

func (m Model) viewHelp() string {
	st := m.ctx.Styles
	lines := []string{st.Title.Render("Keys: " + m.active.String() + " view, then global"), ""}
	keys := m.viewKeys()
	lines = append(lines, strings.Split(m.help.FullHelpView(keys.view.FullHelp()), "\n")...)
	lines = append(lines, "", st.Title.Render("Global"), "")
	lines = append(lines, strings.Split(m.help.FullHelpView(keys.global.FullHelp()), "\n")...)
	lines = append(lines, "", st.Faint.Render("? or esc closes this help"))
	return program.Fit(lines, m.ctx.Width, m.ctx.BodyHeight())
}

// Run runs the inspector of res full-screen (alternate screen) on in and
// out until the user quits or ctx is done.
func Run(ctx context.Context, res *diff.Result, info RunInfo, in io.Reader, out io.Writer, opts ...Option) error {
	r := lipgloss.NewRenderer(out)
	r.HasDarkBackground() // query the terminal now, before Bubble Tea owns the input
	m := New(res, info, append([]Option{WithRenderer(r)}, opts...)...)
	_, err := run(ctx, m, in, out)
	return err
}

func run(ctx context.Context, m tea.Model, in io.Reader, out io.Writer) (tea.Model, error) {
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	final, err := p.Run()
	if err != nil && ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return final, ctx.Err()
	}
	if err != nil {
		return final, fmt.Errorf("tui: %w", err)
	}
	return final, nil
}
