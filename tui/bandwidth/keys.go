package bandwidth

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/tracesched/tracesched/tui/program"
)

// KeyMap is the bandwidth view's keys.
type KeyMap struct {
	program.NavKeys
	Shares key.Binding // series in MiB/s or as shares of the side's bytes
}

// NewKeyMap returns the default keys.
func NewKeyMap() KeyMap {
	return KeyMap{
		NavKeys: program.NewNavKeys(),
		Shares:  key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "MiB/s or shares")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Up, k.Shares} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Shares}, k.Bindings()} }
