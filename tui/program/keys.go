package program

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// NavKeys are the list movements every scrolling view shares.
type NavKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
}

// NewNavKeys returns the k9s-like movement keys.
func NewNavKeys() NavKeys {
	return NavKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
	}
}

// Bindings lists the keys for help.
func (k NavKeys) Bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown}
}

// List is a cursor over n rows of which height are visible at a time.
// Only the visible rows are ever rendered (Visible), so a list of millions
// of rows costs no more per key press than one of ten.
type List struct {
	Pos    int // selected row
	Offset int // first visible row
}

// Move applies a navigation key; it reports whether msg was one.
func (l *List) Move(msg tea.KeyMsg, k NavKeys, n, height int) bool {
	height = max(height, 1)
	switch {
	case key.Matches(msg, k.Up):
		l.Pos--
	case key.Matches(msg, k.Down):
		l.Pos++
	case key.Matches(msg, k.Top):
		l.Pos = 0
	case key.Matches(msg, k.Bottom):
		l.Pos = n - 1
	case key.Matches(msg, k.PageUp):
		l.Pos -= height
	case key.Matches(msg, k.PageDown):
		l.Pos += height
	default:
		return false
	}
	l.Clamp(n, height)
	return true
}

// Clamp keeps the cursor within n rows and visible in height rows.
func (l *List) Clamp(n, height int) {
	height = max(height, 1)
	l.Pos = min(max(l.Pos, 0), max(n-1, 0))
	if l.Pos < l.Offset {
		l.Offset = l.Pos
	}
	if l.Pos >= l.Offset+height {
		l.Offset = l.Pos - height + 1
	}
	l.Offset = min(max(l.Offset, 0), max(n-height, 0))
}

// Visible returns the range [from, to) of rows to draw.
func (l *List) Visible(n, height int) (from, to int) {
	return l.Offset, min(l.Offset+max(height, 1), n)
}

// Marker returns the selection marker for row i: "> " or "  ".
func (l *List) Marker(i int) string {
	if i == l.Pos {
		return "> "
	}
	return "  "
}
