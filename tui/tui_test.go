package tui_test

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui"
)

// keys turns a description into key messages: single characters, or names
// in angle brackets (<enter>, <esc>, <tab>, <left>, <pgdown>…).
func keys(s string) []tea.KeyMsg {
	named := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "left": tea.KeyLeft, "right": tea.KeyRight,
		"up": tea.KeyUp, "down": tea.KeyDown, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "ctrl+c": tea.KeyCtrlC,
	}
	var out []tea.KeyMsg
	for len(s) > 0 {
		if s[0] == '<' {
			if j := strings.IndexByte(s, '>'); j > 0 {
				out = append(out, tea.KeyMsg{Type: named[s[1:j]]})
				s = s[j+1:]
				continue
			}
		}
		r := []rune(s)[0]
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		s = s[len(string(r)):]
	}
	return out
}

// press sends keys to m, running no commands (the model routes
// synchronously), and returns the model.
func press(t *testing.T, m tea.Model, s string) tui.Model {
	t.Helper()
	for _, k := range keys(s) {
		m, _ = m.Update(k)
	}
	return m.(tui.Model)
}

func newModel(t *testing.T, w, h int) tui.Model {
	t.Helper()
	res, info := fixtureResult(t)
	m := tui.New(res, info, tui.WithRenderer(asciiRenderer()))
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return nm.(tui.Model)
}

// TestViews renders every view at 80x24 and 120x40 with the ASCII
// profile and compares it with testdata/TestViews/<view>_<size>.golden
// (go test ./tui -run TestViews -update rewrites them).
func TestViews(t *testing.T) {
	cases := []struct {
		name string
		keys string
	}{
		{"overview", ""},
		{"divergences", "2"},
		{"divergences_sorted_by_time", "2s"},
		{"divergences_filtered", "2/cg1<enter>"},
		{"timeline", "3"},
		{"timeline_divergence", "2<enter>"},
		{"timeline_cgroup_lanes_zoomed", "2<enter>c++ll"},
		{"bandwidth", "4"},
		{"queues", "5j"},
		{"help", "3?"},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1]), func(t *testing.T) {
				m := press(t, newModel(t, size[0], size[1]), c.keys)
				out := m.View()
				checkScreen(t, out, size[0], size[1])
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// TestWhatIfOverview renders the overview of a what-if (the fixture's
// perturbed copy read as a change of tunables): the change leads, captured
// -> predicted, and the validation figures follow.
func TestWhatIfOverview(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			res, info := fixtureResultWith(t, "bfq", []string{"tunables slice_idle=0"})
			m := tui.New(res, info, tui.WithRenderer(asciiRenderer()))
			nm, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			out := nm.(tui.Model).View()
			checkScreen(t, out, size[0], size[1])
			if !strings.Contains(out, "What-if") || !strings.Contains(out, "bfq -> bfq") {
				t.Errorf("what-if lead missing:\n%s", out)
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// TestOverviewStatesExtrapolation: the overview states where the
// prediction drove the device model beyond its calibration, each
// sentence wrapped to the screen whole, in a what-if and in a validation.
func TestOverviewStatesExtrapolation(t *testing.T) {
	const s = "the median predicted 10ms window held about 11.3 requests on the device, where the calibration's held 16 to 26.9 (10th to 90th percentile; 100% of the predicted windows are outside that): the latencies at that load are extrapolated"
	for _, changes := range [][]string{{"scheduler mq-deadline -> bfq"}, nil} {
		res, info := fixtureResultWith(t, "mq-deadline", changes)
		res.DeviceExtrapolation = []string{s}
		m := tui.New(res, info, tui.WithRenderer(asciiRenderer()))
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
		out := nm.(tui.Model).View()
		checkScreen(t, out, 80, 60)
		var text []string
		for _, l := range strings.Split(out, "\n") {
			text = append(text, strings.TrimSpace(l))
		}
		if !strings.Contains(strings.Join(text, " "), "device model extrapolates: "+s) {
			t.Errorf("what-if %v: the sentence is not on screen whole:\n%s", changes != nil, out)
		}
	}
}

// checkScreen checks a frame fits the screen exactly.
func checkScreen(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Errorf("line %d is %d cells wide, want <= %d: %q", i, n, w, l)
		}
	}
}

func TestResizeAndTinyScreens(t *testing.T) {
	m := newModel(t, 80, 24)
	for _, size := range [][2]int{{200, 60}, {60, 15}, {30, 5}, {80, 24}} {
		nm, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m = nm.(tui.Model)
		for v := range 5 {
			m = press(t, m, fmt.Sprint(v+1))
			checkScreen(t, m.View(), size[0], size[1])
		}
	}
}

func TestNavigation(t *testing.T) {
	m := newModel(t, 80, 24)
	if m.ActiveView() != tui.ViewOverview {
		t.Fatalf("starts on %v", m.ActiveView())
	}
	m = press(t, m, "<tab><tab>")
	if m.ActiveView() != tui.ViewTimeline {
		t.Errorf("tab tab: %v", m.ActiveView())
	}
	m = press(t, m, "2<enter>")
	if m.ActiveView() != tui.ViewTimeline {
		t.Fatalf("enter on a divergence: %v", m.ActiveView())
	}
	d, _ := m.Divergences().Selected()
	if got := m.Timeline().Cursor(); got != d.RealStart {
		t.Errorf("cursor %v, want the divergence's start %v", got, d.RealStart)
	}
	m = press(t, m, "<esc>")
	if m.ActiveView() != tui.ViewDivergences {
		t.Errorf("esc: %v, want back to divergences", m.ActiveView())
	}
	// While the filter has the keyboard, q types.
	m = press(t, m, "/q")
	if m.Divergences().Filter() != "q" || !m.Divergences().Capturing() {
		t.Errorf("filter %q capturing %v", m.Divergences().Filter(), m.Divergences().Capturing())
	}
	m = press(t, m, "<esc>")
	if m.Divergences().Filter() != "" || m.Divergences().Capturing() {
		t.Errorf("esc keeps filter %q", m.Divergences().Filter())
	}
	if _, cmd := m.Update(keys("q")[0]); cmd == nil {
		t.Error("q does not quit")
	}
}

// TestWithView: the inspector opens on the view asked for (tracesched tui
// --view), named as View.String names it; an unknown name is refused.
func TestWithView(t *testing.T) {
	res, info := fixtureResult(t)
	for _, name := range tui.ViewNames() {
		v, ok := tui.ParseView(name)
		if !ok || v.String() != name {
			t.Fatalf("ParseView(%q) = %v, %v", name, v, ok)
		}
		if got := tui.New(res, info, tui.WithRenderer(asciiRenderer()), tui.WithView(v)).ActiveView(); got != v {
			t.Errorf("WithView(%v): opens on %v", v, got)
		}
	}
	if _, ok := tui.ParseView("queue"); ok {
		t.Errorf(`ParseView("queue") accepted`)
	}
}

// TestBandwidthSeeds: a result predicted at several seeds (replay --seeds
// N) shows, in the bandwidth view, each compared cgroup's predicted range
// over them; a single-seed result shows none.
func TestBandwidthSeeds(t *testing.T) {
	res, info := fixtureResult(t)
	var ids []uint64
	for _, c := range res.Cgroups {
		if c.Compared {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatal("the fixture compares no cgroup")
	}
	render := func() string {
		m := tui.New(res, info, tui.WithRenderer(asciiRenderer()))
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
		return press(t, nm, "4").View()
	}
	if out := render(); strings.Contains(out, "seeds") {
		t.Fatalf("one seed, yet a seed range shown:\n%s", out)
	}
	res.Seeds = &diff.SeedSpread{Seeds: []uint64{1, 2, 3}}
	for i, id := range ids {
		x := float64(i)
		res.Seeds.Cgroups = append(res.Seeds.Cgroups, diff.FigureSpread{ID: id,
			MiBps: diff.Range{Min: 10 + x, Median: 11.25 + x, Max: 12.5 + x},
			Share: diff.Range{Min: 0.099, Median: 0.1, Max: 0.104}})
	}
	out := render()
	if !strings.Contains(out, "predicted at 3 seeds (1-3)") {
		t.Errorf("title lacks the seeds:\n%s", out)
	}
	for i := range ids {
		x := float64(i)
		want := fmt.Sprintf("at 3 seeds %.1f-%.1f MiB/s (median %.1f), share 9.9-10.4%%", 10+x, 12.5+x, 11.25+x)
		if !strings.Contains(out, want) {
			t.Errorf("cgroup %d: %q missing:\n%s", ids[i], want, out)
		}
	}
}
