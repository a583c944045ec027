package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// check3 is issue 3's targets on one replay of a capture through its own
// scheduler (mq-deadline, none, kyber through mq-deadline).
type check3 struct {
	wp                 procFig // the worst process by |bandwidth error|
	wc                 cgFig   // the worst cgroup, when hasCg
	hasCg              bool
	okP, okC, okD, okT bool
}

func checkIssue3(f *figures) check3 {
	var c check3
	for i, p := range f.Procs {
		if i == 0 || math.Abs(p.Err) > math.Abs(c.wp.Err) {
			c.wp = p
		}
	}
	for _, g := range f.Cgroups {
		if !c.hasCg || math.Abs(g.BwErr) > math.Abs(c.wc.BwErr) {
			c.wc, c.hasCg = g, true
		}
	}
	c.okP = math.Abs(c.wp.Err) <= targetBwErr
	c.okC = !c.hasCg || math.Abs(c.wc.BwErr) <= targetBwErr
	c.okD = f.D2C < targetD2C
	c.okT = f.Tau >= targetTauMin
	return c
}

func (c check3) all() bool { return c.okP && c.okC && c.okD && c.okT }

// missed names the targets c misses, "" when none.
func (c check3) missed() string {
	return missedList([]bool{c.okP, c.okC, c.okD, c.okT}, []string{"process bw", "cgroup bw", "D2C", "tau"})
}

// check11 is issue 11's targets on one replay of a capture through its own
// scheduler.
type check11 struct {
	wc, ws                                 cgFig // the worst cgroup by |bandwidth error| and by |share error|, when hasCg
	hasCg                                  bool
	wp, small                              procFig // the worst process with target11MinBios bios or more, and of the rest
	hasP, hasSmall                         bool
	together                               int // queue merges both sides made at the same time (qmerge.dueTogether)
	okR, okF, okC, okS, okP, okT, okD, okQ bool
}

func checkIssue11(f *figures) check11 {
	var c check11
	c.okR = f.PredRequests == f.Requests
	c.okF = f.FlushP == f.FlushR && f.FUAP == f.FUAR
	for _, g := range f.Cgroups {
		if !c.hasCg || math.Abs(g.BwErr) > math.Abs(c.wc.BwErr) {
			c.wc = g
		}
		if !c.hasCg || math.Abs(g.ShareErrPP) > math.Abs(c.ws.ShareErrPP) {
			c.ws = g
		}
		c.hasCg = true
	}
	c.okC = !c.hasCg || math.Abs(c.wc.BwErr) <= target11Bw
	c.okS = !c.hasCg || math.Abs(c.ws.ShareErrPP) <= target11Share
	c.wp, c.small, c.hasP, c.hasSmall = worstProcs(f.Procs, target11MinBios)
	c.okP = !c.hasP || math.Abs(c.wp.Err) <= target11Bw
	c.okT = f.ThinkCompared > 0 && f.ThinkAgree >= target11Think
	c.okD = f.D2C < target11D2C
	for _, m := range f.QMerges {
		if m.Real != trace.NoTime && m.Pred != trace.NoTime && m.dueTogether() {
			c.together++
		}
	}
	c.okQ = c.together == len(f.QMerges)
	return c
}

func (c check11) all() bool {
	return c.okR && c.okF && c.okC && c.okS && c.okP && c.okT && c.okD && c.okQ
}

// missed names the targets c misses, "" when none.
func (c check11) missed() string {
	return missedList([]bool{c.okR, c.okF, c.okC, c.okS, c.okP, c.okT, c.okD, c.okQ},
		[]string{"requests", "flushes", "cgroup bw", "share", "process bw", "think time", "D2C", "queue merges"})
}

func missedList(ok []bool, names []string) string {
	var m []string
	for i, o := range ok {
		if !o {
			m = append(m, names[i])
		}
	}
	return strings.Join(m, ", ")
}

// seedResults is one extra seed's replays of the judged captures.
type seedResults struct {
	Seed uint64
	By   map[*capture]*result
}

// judged reports whether issue 3's or issue 11's table judges c.
func judged(c *capture) bool {
	switch {
	case c.Group == "recorded-fs" || c.Group == groupExtra:
		return true
	}
	switch c.Man.Scheduler {
	case "mq-deadline", "none", "kyber":
		return true
	}
	return false
}

// verdictText is the verdict of r under the targets that judge it: "pass",
// or "fail: " and the targets missed.
func verdictText(r *result) string {
	f := r.Own
	if f == nil {
		return "failed: " + cell(errText(r))
	}
	var miss string
	if r.C.Group == "recorded-fs" || r.C.Group == groupExtra {
		miss = checkIssue11(f).missed()
	} else {
		miss = checkIssue3(f).missed()
	}
	if miss == "" {
		return "pass"
	}
	return "**fail**: " + miss
}

// writeSeeds writes the verdicts of the judged captures at -seed and at
// each extra seed: the device models' random draws (and the calibration's
// sample) change with the seed, and so can a verdict near a target.
func writeSeeds(w io.Writer, seed uint64, all []*result, atSeeds []seedResults) {
	if len(atSeeds) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Verdicts at other seeds\n\n")
	fmt.Fprintf(w, "The tables above are one replay each, at seed %d. The device model's draws (its residual multipliers, and the\n", seed)
	fmt.Fprintf(w, "calibration's cross-validation sample) come from the seed, so a figure near its target can pass at one seed and fail\n")
	fmt.Fprintf(w, "at another. Each capture that issue 3's or issue 11's table judges, replayed again at each seed, under the same targets\n")
	fmt.Fprintf(w, "(issue 11's for recorded-fs and the captures outside the repository, issue 3's for the others).\n\n")
	fmt.Fprintf(w, "| capture | seed %d |", seed)
	for _, s := range atSeeds {
		fmt.Fprintf(w, " seed %d |", s.Seed)
	}
	fmt.Fprintf(w, " passes |\n|---|---|")
	for range atSeeds {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---:|\n")
	for _, r := range all {
		if !judged(r.C) {
			continue
		}
		v := verdictText(r)
		n, pass := 1, b2i(v == "pass")
		cells := []string{v}
		for _, s := range atSeeds {
			o := s.By[r.C]
			if o == nil {
				cells = append(cells, "-")
				continue
			}
			v := verdictText(o)
			n++
			pass += b2i(v == "pass")
			cells = append(cells, v)
		}
		fmt.Fprintf(w, "| %s | %s | %d of %d |\n", r.C.Name, strings.Join(cells, " | "), pass, n)
	}
}
