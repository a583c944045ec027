package timeline

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/tracesched/tracesched/tui/program"
)

type styles struct {
	title  lipgloss.Style
	label  lipgloss.Style
	faint  lipgloss.Style
	real   lipgloss.Style
	pred   lipgloss.Style
	cursor lipgloss.Style
	msg    lipgloss.Style
	why    lipgloss.Style
}

func newStyles(s *program.Styles) styles {
	return styles{title: s.Title, label: s.Label, faint: s.Faint, real: s.Real, pred: s.Pred, cursor: s.Cursor, msg: s.Label, why: s.Bad}
}
