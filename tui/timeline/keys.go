package timeline

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/tracesched/tracesched/tui/program"
)

// KeyMap is the timeline's keys. The navigation keys keep their list
// meaning where one exists: j/k scroll the lanes, g/G go to the trace's
// start and end, pgup/pgdn pan by a whole window.
type KeyMap struct {
	program.NavKeys
	Left, Right     key.Binding // pan by a sixteenth of the window
	ZoomIn, ZoomOut key.Binding
	PrevDispatch    key.Binding // cursor to the previous real dispatch
	NextDispatch    key.Binding
	PrevDivergence  key.Binding
	NextDivergence  key.Binding
	Lanes           key.Binding // lanes per queue or per cgroup
	Align           key.Binding // predicted axis aligned on the divergence, or on the same time
	Messages        key.Binding // which scheduler messages to show
}

// NewKeyMap returns the default keys.
func NewKeyMap() KeyMap {
	return KeyMap{
		NavKeys:        program.NewNavKeys(),
		Left:           key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "pan back")),
		Right:          key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "pan forward")),
		ZoomIn:         key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "zoom in")),
		ZoomOut:        key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "zoom out")),
		PrevDispatch:   key.NewBinding(key.WithKeys("["), key.WithHelp("[", "prev dispatch")),
		NextDispatch:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next dispatch")),
		PrevDivergence: key.NewBinding(key.WithKeys("N", "p"), key.WithHelp("N/p", "prev divergence")),
		NextDivergence: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next divergence")),
		Lanes:          key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "queue/cgroup lanes")),
		Align:          key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "align predicted")),
		Messages:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "messages shown")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Left, k.Right, k.ZoomIn, k.ZoomOut, k.Lanes}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Left, k.Right, k.ZoomIn, k.ZoomOut, k.PageUp, k.PageDown},
		{k.PrevDispatch, k.NextDispatch, k.PrevDivergence, k.NextDivergence, k.Top, k.Bottom},
		{k.Up, k.Down, k.Lanes, k.Align, k.Messages},
	}
}
