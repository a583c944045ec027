package overview

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/tui/program"
)

type styles struct {
	section lipgloss.Style // a measure's name
	label   lipgloss.Style
	faint   lipgloss.Style
	real    lipgloss.Style
	pred    lipgloss.Style
	good    lipgloss.Style
	bad     lipgloss.Style
}

func newStyles(s *program.Styles) styles {
	return styles{section: s.Title, label: s.Label, faint: s.Faint, real: s.Real, pred: s.Pred, good: s.Good, bad: s.Bad}
}
