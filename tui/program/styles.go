package program

import "github.com/charmbracelet/lipgloss"

// Styles are every style the views use, built from one renderer so that the
// colour profile follows the output (ASCII on a dumb terminal or a pipe).
// With the ASCII profile every style renders as plain text, so nothing may
// depend on colour alone: the selection also carries a ">" marker.
type Styles struct {
	Renderer *lipgloss.Renderer

	TabActive   lipgloss.Style
	TabInactive lipgloss.Style
	Title       lipgloss.Style // section titles
	Label       lipgloss.Style // figure names
	Faint       lipgloss.Style // secondary text
	Selected    lipgloss.Style // the selected row
	Real        lipgloss.Style // the real trace's data
	Pred        lipgloss.Style // the prediction's data
	Good        lipgloss.Style
	Bad         lipgloss.Style
	Cursor      lipgloss.Style // the timeline cursor
	Mark        lipgloss.Style // a marked stretch (the divergence opened)
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
	HelpSep     lipgloss.Style
	Status      lipgloss.Style
}

// NewStyles builds the styles on r (lipgloss.DefaultRenderer() when nil).
func NewStyles(r *lipgloss.Renderer) *Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	return &Styles{
		Renderer:    r,
		TabActive:   r.NewStyle().Bold(true).Foreground(c("#000000", "#ffffff")).Background(c("#a8d8ff", "#2f5f8f")),
		TabInactive: r.NewStyle().Foreground(c("#555555", "#9a9a9a")),
		Title:       r.NewStyle().Bold(true).Foreground(c("#1f4f7f", "#8fc8ff")),
		Label:       r.NewStyle().Foreground(c("#444444", "#bbbbbb")),
		Faint:       r.NewStyle().Foreground(c("#777777", "#777777")),
		Selected:    r.NewStyle().Bold(true).Background(c("#dde8ff", "#303a50")),
		Real:        r.NewStyle().Foreground(c("#00707a", "#5fd7d7")),
		Pred:        r.NewStyle().Foreground(c("#9a3fa0", "#e08ee0")),
		Good:        r.NewStyle().Foreground(c("#207020", "#87d787")),
		Bad:         r.NewStyle().Foreground(c("#b00000", "#ff7f7f")),
		Cursor:      r.NewStyle().Bold(true).Foreground(c("#b06000", "#ffd75f")),
		Mark:        r.NewStyle().Underline(true),
		HelpKey:     r.NewStyle().Foreground(c("#444444", "#cccccc")),
		HelpDesc:    r.NewStyle().Foreground(c("#777777", "#8a8a8a")),
		HelpSep:     r.NewStyle().Foreground(c("#aaaaaa", "#555555")),
		Status:      r.NewStyle().Foreground(c("#555555", "#9a9a9a")),
	}
}
