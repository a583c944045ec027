package tui

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is the inspector's global keys; each view adds its own. The help
// screen is drawn from these same bindings, so it cannot drift from them.
type KeyMap struct {
	Help        key.Binding
	Back        key.Binding
	Quit        key.Binding
	ForceQuit   key.Binding // ctrl+c: quits even while a filter has the keyboard
	NextView    key.Binding
	PrevView    key.Binding
	Overview    key.Binding
	Divergences key.Binding
	Timeline    key.Binding
	Bandwidth   key.Binding
	Queues      key.Binding
}

// NewKeyMap returns the default global keys (k9s-like).
func NewKeyMap() KeyMap {
	return KeyMap{
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:        key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit:   key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		NextView:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		PrevView:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Overview:    key.NewBinding(key.WithKeys("1"), key.WithHelp("1", "overview")),
		Divergences: key.NewBinding(key.WithKeys("2"), key.WithHelp("2", "divergences")),
		Timeline:    key.NewBinding(key.WithKeys("3"), key.WithHelp("3", "timeline")),
		Bandwidth:   key.NewBinding(key.WithKeys("4"), key.WithHelp("4", "bandwidth")),
		Queues:      key.NewBinding(key.WithKeys("5"), key.WithHelp("5", "queues")),
	}
}

// ViewKeys returns the bindings that switch views, in view order.
func (k KeyMap) ViewKeys() []key.Binding {
	return []key.Binding{k.Overview, k.Divergences, k.Timeline, k.Bandwidth, k.Queues}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Back, k.Quit} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		append([]key.Binding{k.NextView, k.PrevView}, k.ViewKeys()...),
		{k.Help, k.Back, k.Quit, k.ForceQuit},
	}
}

// combined is a view's keys followed by the global ones, for help.
type combined struct {
	view interface {
		ShortHelp() []key.Binding
		FullHelp() [][]key.Binding
	}
	global KeyMap
}

func (c combined) ShortHelp() []key.Binding {
	return append(c.view.ShortHelp(), c.global.ShortHelp()...)
}

func (c combined) FullHelp() [][]key.Binding {
	return append(c.view.FullHelp(), c.global.FullHelp()...)
}
