package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui/program"
)

// LoadFunc loads a Result, reporting its progress (done of total units,
// say bytes or events; total <= 0 when unknown). progress may be called
// from any goroutine, as often as convenient: it only stores two numbers.
type LoadFunc func(progress func(done, total int64)) (*diff.Result, RunInfo, error)

// progressEvery is how often the loading screen redraws.
const progressEvery = 100 * time.Millisecond

type loadState struct {
	load    LoadFunc
	done    *atomic.Int64
	total   *atomic.Int64
	started time.Time
	frame   int
	err     error
}

type progressTickMsg struct{}

type loadedMsg struct {
	model Model
	err   error
}

func (l *loadState) init(opts []Option) tea.Cmd {
	return tea.Batch(l.tick(), l.run(opts))
}

func (l *loadState) tick() tea.Cmd {
	return tea.Tick(progressEvery, func(time.Time) tea.Msg { return progressTickMsg{} })
}

// RunLoading runs the inspector while load builds the Result: a progress
// screen first (q or ctrl+c give up), then the inspector. It returns
// load's error, if any, once the screen is restored. The loading goroutine
// is not stopped when the user quits early: load should watch ctx itself.
func RunLoading(ctx context.Context, load LoadFunc, in io.Reader, out io.Writer, opts ...Option) error {
	r := lipgloss.NewRenderer(out)
	r.HasDarkBackground()
	m := NewLoading(load, append([]Option{WithRenderer(r)}, opts...)...)
	final, err := run(ctx, m, in, out)
	if err != nil {
		return err
	}
	if fm, ok := final.(Model); ok && fm.load != nil && fm.load.err != nil {
		return fm.load.err
	}
	return nil
}

// NewLoading returns a model that shows load's progress, runs load in a
// command, and turns into the inspector (New) of its Result.
func NewLoading(load LoadFunc, opts ...Option) Model {
	c := newConfig(opts)
	st := program.NewStyles(c.renderer)
	ls := &loadState{load: load, done: new(atomic.Int64), total: new(atomic.Int64), started: time.Now()}
	ctx := &program.Context{Width: c.width, Height: c.height, Styles: st, Result: &diff.Result{}, Index: &program.Index{}}
	return Model{ctx: ctx, keys: NewKeyMap(), help: newHelp(st), load: ls, opts: opts}
}

func (l *loadState) run(opts []Option) tea.Cmd {
	return func() tea.Msg {
		res, info, err := l.load(func(done, total int64) {
			l.done.Store(done)
			l.total.Store(total)
		})
		if err != nil {
			return loadedMsg{err: err}
		}
		if res == nil {
			return loadedMsg{err: fmt.Errorf("tui: load returned no result")}
		}
		return loadedMsg{model: New(res, info, opts...)}
	}
}

func (m Model) updateLoading(msg tea.Msg) (tea.Model, tea.Cmd) {
	l := m.load
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.ctx.Width, m.ctx.Height = msg.Width, msg.Height
	case progressTickMsg:
		l.frame++
		return m, l.tick()
	case loadedMsg:
		if msg.err != nil {
			l.err = msg.err
			return m, tea.Quit
		}
		nm := msg.model
		nm.ctx.Width, nm.ctx.Height = m.ctx.Width, m.ctx.Height
		nm.help.Width = m.ctx.Width
		return nm, nil
	case tea.KeyMsg:
		if key.Matches(msg, m.keys.Quit) || key.Matches(msg, m.keys.ForceQuit) {
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m Model) viewLoading() string {
	l := m.load
	st := m.ctx.Styles
	w := m.ctx.Width
	done, total := l.done.Load(), l.total.Load()
	spin := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}[l.frame%10]
	line := fmt.Sprintf("%s loading trace… %d", spin, done)
	bar := ""
	if total > 0 {
		f := min(float64(done)/float64(total), 1)
		bw := max(min(w-20, 50), 10)
		n := int(f * float64(bw))
		bar = "[" + strings.Repeat("█", n) + strings.Repeat("░", bw-n) + "]" + fmt.Sprintf(" %3.0f%%", 100*f)
		line = fmt.Sprintf("%s loading trace… %d of %d", spin, done, total)
	}
	lines := []string{"", st.Title.Render("tracesched"), "", line, bar,
		st.Faint.Render(fmt.Sprintf("%.1f s · q quits", time.Since(l.started).Seconds()))}
	return program.Fit(lines, w, m.ctx.Height)
}
