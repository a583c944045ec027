package queues

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/tracesched/tracesched/tui/program"
)

// KeyMap is the queue view's keys: it only moves through the queues.
type KeyMap struct {
	program.NavKeys
}

// NewKeyMap returns the default keys.
func NewKeyMap() KeyMap { return KeyMap{NavKeys: program.NewNavKeys()} }

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Up} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.Bindings()} }
