package divergences

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/tui/program"
)

type styles struct {
	header   lipgloss.Style // column titles
	selected lipgloss.Style
	faint    lipgloss.Style
	real     lipgloss.Style
	pred     lipgloss.Style
	title    lipgloss.Style
}

func newStyles(s *program.Styles) styles {
	return styles{header: s.Label.Bold(true), selected: s.Selected, faint: s.Faint, real: s.Real, pred: s.Pred, title: s.Title}
}
