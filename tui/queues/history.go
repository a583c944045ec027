package queues

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// point is one value a queue's messages give at a time.
type point struct {
	t trace.Time
	v float64
}

// history is what one side's messages say about one queue over time.
type history struct {
	budget []point // BFQ "cur-budget = N", "new budget N" (sectors)
	weight []point // BFQ "calc_finish: serv N, w W", "raising period ..., w W(W0)"
}

// parseHistory reads the budget and weight a queue's messages record.
func parseHistory(msgs *diff.MessageLog, idx []int32) history {
	var h history
	for _, i := range idx {
		m := msgs.At(int(i))
		b := m.Msg.Body
		if v, ok := numberAfter(b, "cur-budget = "); ok {
			h.budget = append(h.budget, point{m.Time, v})
		} else if v, ok := numberAfter(b, "new budget "); ok {
			h.budget = append(h.budget, point{m.Time, v})
		}
		if v, ok := numberAfter(b, ", w "); ok {
			h.weight = append(h.weight, point{m.Time, v})
		}
	}
	return h
}

// numberAfter parses the unsigned number that follows the first prefix in s.
func numberAfter(s, prefix string) (float64, bool) {
	i := strings.Index(s, prefix)
	if i < 0 {
		return 0, false
	}
	s = s[i+len(prefix):]
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	v, err := strconv.ParseUint(s[:j], 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(v), true
}

// at returns the value of a step function at t, and whether it is defined.
func at(ps []point, t trace.Time) (float64, bool) {
	i, _ := slices.BinarySearchFunc(ps, t, func(p point, t trace.Time) int {
		if p.t <= t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return 0, false
	}
	return ps[i-1].v, true
}

// changes counts the points whose value differs from the one before.
func changes(ps []point) int {
	n := 0
	for i := 1; i < len(ps); i++ {
		if ps[i].v != ps[i-1].v {
			n++
		}
	}
	return n
}
