package bandwidth

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/tui/program"
)

type styles struct {
	title    lipgloss.Style
	header   lipgloss.Style
	selected lipgloss.Style
	faint    lipgloss.Style
	real     lipgloss.Style
	pred     lipgloss.Style
	bad      lipgloss.Style
}

func newStyles(s *program.Styles) styles {
	return styles{title: s.Title, header: s.Label.Bold(true), selected: s.Selected, faint: s.Faint, real: s.Real, pred: s.Pred, bad: s.Bad}
}
