package divergences

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/tracesched/tracesched/tui/program"
)

// KeyMap is the divergence list's keys.
type KeyMap struct {
	program.NavKeys
	Filter key.Binding // start typing a filter
	Apply  key.Binding // while filtering: keep the filter, back to the list
	Cancel key.Binding // while filtering: clear the filter
	Sort   key.Binding // cycle the sort key
	Open   key.Binding // open the selected divergence in the timeline
}

// NewKeyMap returns the default keys.
func NewKeyMap() KeyMap {
	return KeyMap{
		NavKeys: program.NewNavKeys(),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Apply:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open in timeline")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Open, k.Filter, k.Sort} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Open, k.Filter, k.Apply, k.Cancel, k.Sort}, k.Bindings()}
}
