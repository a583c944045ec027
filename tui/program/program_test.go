package program

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/trace"
)

func TestListStaysVisible(t *testing.T) {
	k := NewNavKeys()
	var l List
	press := func(s string) { l.Move(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}, k, 1000, 10) }
	press("G")
	if l.Pos != 999 || l.Offset != 990 {
		t.Errorf("G: %+v", l)
	}
	press("k")
	press("g")
	if l.Pos != 0 || l.Offset != 0 {
		t.Errorf("g: %+v", l)
	}
	if from, to := l.Visible(1000, 10); from != 0 || to != 10 {
		t.Errorf("visible %d-%d", from, to)
	}
	l.Clamp(3, 10)
	if l.Pos != 0 {
		t.Errorf("clamp: %+v", l)
	}
}

func TestSparkline(t *testing.T) {
	if got := Sparkline([]float64{0, 1, 4, 8}, 8); got != " ▁▄█" {
		t.Errorf("got %q", got)
	}
	if got := Resample([]float64{1, 3, 5, 7}, 2); got[0] != 2 || got[1] != 6 {
		t.Errorf("resample %v", got)
	}
}

func TestSideIndexLower(t *testing.T) {
	s := SideIndex{Issue: []trace.Time{10, 20, 20, 30}}
	for _, c := range []struct {
		t    trace.Time
		want int
	}{{0, 0}, {10, 0}, {11, 1}, {20, 1}, {30, 3}, {31, 4}} {
		if got := s.Lower(c.t); got != c.want {
			t.Errorf("Lower(%d) = %d, want %d", c.t, got, c.want)
		}
	}
}
