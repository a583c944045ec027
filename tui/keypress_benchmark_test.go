package tui_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui"
)

// synthSide feeds a Side the events of n single-bio read requests from 16
// processes (pids in the order given), one every 100 µs: Q, G, I, D and C
// (20-90 µs after D), plus two BFQ messages every 32 requests. Events are
// made one at a time, never held.
func synthSide(pids []uint16, seed uint64) *diff.Side {
	rng := rand.New(rand.NewPCG(seed, 7))
	meta := trace.Meta{Source: "synthetic", Cgroups: map[uint64]string{1000: "/a", 1001: "/b", 1002: "/c", 1003: "/d"}}
	s := diff.NewSide(meta)
	dev := trace.MkDev(8, 0)
	var e trace.Event
	for i, p := range pids {
		pid := uint32(1000 + p)
		t := trace.Time(i) * 100_000
		cg := 1000 + uint64(p%4)
		base := trace.Event{Dev: dev, Cat: trace.CatRead | trace.CatSync, Sector: uint64(i) * 8, Bytes: 4096, PID: pid, Cgroup: cg}
		for k, a := range []trace.Action{trace.ActionQueue, trace.ActionGetRQ, trace.ActionInsert} {
			e = base
			e.Action, e.Time = a, t+trace.Time(k*1000)
			s.Add(&e)
		}
		if i%32 == 0 {
			e = trace.Event{Time: t + 4000, Action: trace.ActionMessage, PID: pid, Cgroup: cg,
				Text: fmt.Sprintf("bfq%dS set_in_service_queue, cur-budget = %d", pid, 4096+rng.IntN(8)*1024)}
			s.Add(&e)
			e.Text = fmt.Sprintf("bfq%dS may_budget_timeout: wait_request %d left 0 timeout 0", pid, rng.IntN(2))
			s.Add(&e)
		}
		e = base
		e.Action, e.Time = trace.ActionIssue, t+5000
		s.Add(&e)
		e.Action, e.Time = trace.ActionComplete, t+5000+trace.Time(20_000+rng.IntN(70_000))
		s.Add(&e)
	}
	s.Finish()
	return s
}

// bigResult diffs two synthetic sides of n requests: the prediction
// shuffles one block of 64 dispatches in eight.
func bigResult(n int) *diff.Result {
	rng := rand.New(rand.NewPCG(1, 2))
	real := make([]uint16, n)
	for i := range real {
		real[i] = uint16(rng.IntN(16))
	}
	pred := append([]uint16(nil), real...)
	for b := 0; b+64 <= n; b += 64 {
		if rng.IntN(8) == 0 {
			blk := pred[b : b+64]
			rng.Shuffle(len(blk), func(i, j int) { blk[i], blk[j] = blk[j], blk[i] })
		}
	}
	return diff.Compare(synthSide(real, 1), synthSide(pred, 2), diff.Options{})
}

// BenchmarkKeyPress times Update+View per key press on a Result of 1 M
// requests per side at 120x40, across views. ms/key is the figure to keep
// under 100.
func BenchmarkKeyPress(b *testing.B) {
	start := time.Now()
	res := bigResult(1_000_000)
	built := time.Since(start)
	start = time.Now()
	m0 := tui.New(res, tui.RunInfo{Scheduler: "bfq"}, tui.WithRenderer(asciiRenderer()), tui.WithSize(120, 40))
	b.Logf("Result of %d/%d requests, %d divergences: built in %v; tui.New (indexes) in %v",
		res.Requests, res.PredictedRequests, res.DispatchOrder.Divergences, built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	type step struct {
		name  string
		setup string   // keys before timing
		cycle []string // keys pressed in turn, one per iteration
	}
	steps := []step{
		{"overview/scroll", "1", []string{"j", "k"}},
		{"divergences/move", "2", []string{"j", "j", "G", "g"}},
		{"divergences/sort", "2", []string{"s"}},
		{"divergences/filter", "2/", []string{"a", "\x7f"}},
		{"divergences/open", "2", []string{"<enter>", "<esc>"}},
		{"timeline/pan", "3", []string{"l", "l", "h", "h"}},
		{"timeline/zoom", "3", []string{"+", "-"}},
		{"timeline/whole-trace-pan", "3------------", []string{"l", "h"}},
		{"timeline/lanes", "3", []string{"c"}},
		{"bandwidth/move", "4", []string{"j", "k", "m"}},
		{"queues/move", "5", []string{"j", "k"}},
		{"switch/tab", "", []string{"<tab>"}},
	}
	for _, st := range steps {
		b.Run(st.name, func(b *testing.B) {
			var m tea.Model = m0
			for _, k := range keys(st.setup) {
				m, _ = m.Update(k)
			}
			var cycle []tea.KeyMsg
			for _, s := range st.cycle {
				if s == "\x7f" {
					cycle = append(cycle, tea.KeyMsg{Type: tea.KeyBackspace})
					continue
				}
				cycle = append(cycle, keys(s)...)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, _ = m.Update(cycle[i%len(cycle)])
				_ = m.View()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/key")
		})
	}
}
