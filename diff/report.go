package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// WriteJSON writes r as indented JSON. Keys come in struct order and every
// list is sorted, so equal Results give identical bytes.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// textDivergences is how many divergences WriteText lists.
const textDivergences = 10

// WriteText writes r for people: the four headline figures (dispatch tau,
// worst cgroup share error, think-time agreement, D2C demerit), the worst
// divergences, then one section per measure. Lines are cut to width
// columns (at least 60), a terminal's width; width < 0 cuts nothing (a
// file or a pipe); 0 means 100.
func (r *Result) WriteText(w io.Writer, width int) error {
	if width == 0 {
		width = 100
	}
	if width > 0 {
		width = max(width, 60)
	}
	bw := bufio.NewWriter(w)
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if width > 0 && len([]rune(s)) > width {
			s = string([]rune(s)[:width-1]) + "…"
		}
		bw.WriteString(s)
		bw.WriteByte('\n')
	}
	sched := r.Scheduler
	if sched == "" {
		sched = "?"
	}
	if r.Kernel != "" {
		sched += " (kernel " + r.Kernel + ")"
	}
	if r.Change != nil {
		r.writeChange(line)
		for _, s := range r.DeviceExtrapolation {
			line("device model extrapolates: %s", s)
		}
		line("")
		line("validation figures (the prediction against the capture it was made from)")
	}
	line("diff %s: real %d requests over %.3f s, predicted %d over %.3f s", sched, r.Requests, r.WallSeconds, r.PredictedRequests, r.SimulatedSeconds)
	if r.Change == nil {
		for _, s := range r.DeviceExtrapolation {
			line("device model extrapolates: %s", s)
		}
	}
	line("")
	o := &r.DispatchOrder
	if !r.Compared() {
		line("  no comparison: the two traces share no bio (no process and position in its stream on both sides);")
		line("  dispatch order and think times are not compared (n/a). Two runs of one workload: map their")
		line("  processes with --map auto (command name and start order) or --map-pid REAL=PREDICTED.")
	}
	line("  dispatch tau       %s   mean displacement %.1f ranks, %d divergences", fmtOrNA("%8.4f", 8, o.KendallTau), o.MeanDisplacement, o.Divergences)
	worst := "no cgroups"
	if len(r.Cgroups) > 0 {
		worst = "cgroup " + cgName(r.Cgroups[0].ID, r.Cgroups[0].Path)
	}
	for _, c := range r.Cgroups {
		if c.ID == r.Bandwidth.WorstCgroup {
			worst = "cgroup " + cgName(c.ID, c.Path)
			break
		}
	}
	line("  worst share error  %8.4f   %s; fairness %.3f", r.Bandwidth.WorstShareError, worst, r.Bandwidth.Fairness)
	tt := &r.ThinkTime
	line("  think-time agree   %s   %d requests compared, %d queues", fmtOrNA("%7.1f%%", 8, 100*tt.Agreement), tt.Compared, tt.Queues)
	line("  D2C demerit        %7.1f%%   %s s RMS; Q2C %.1f%%", 100*r.Latency.D2CDemerit, fsec(r.Latency.D2C.Demerit), 100*r.Latency.Q2CDemerit)
	line("")
	id := &r.Identity
	line("bios: %d matched, %d only real, %d only predicted; %d ranked by issue order", id.Matched, id.RealOnly, id.PredictedOnly, id.Ordered)
	if f := o.FirstDivergence; f != nil {
		line("first divergence at position %d: real issued %d:%d at %s s, predicted %d:%d at %s s",
			f.Position, f.Bio.PID, f.Bio.Index, f.RealTime, f.Predicted.PID, f.Predicted.Index, f.PredTime)
	} else if o.Bios > 0 {
		line("dispatch order identical")
	}
	if o.MaxDisplacement > 0 {
		line("largest displacement %d ranks (bio %d:%d)", o.MaxDisplacement, o.MaxDisplaced.PID, o.MaxDisplaced.Index)
	}
	if len(o.Ranked) > 0 {
		line("")
		line("worst divergences (severity = bios x mean displacement)")
		line("  #  positions        bios    mean   severity  real s               predicted s")
		for _, d := range o.Ranked[:min(len(o.Ranked), textDivergences)] {
			line("%3d  %-15s %5d %7.1f %10.0f  %-20s %s", d.Rank, fmt.Sprintf("%d-%d", d.First, d.Last), d.Bios, d.MeanDisplacement, d.Severity,
				shortTime(d.RealStart)+"-"+shortTime(d.RealEnd), shortTime(d.PredStart)+"-"+shortTime(d.PredEnd))
			line("       real served: %s", servedText(d.Real))
			line("       predicted:   %s", servedText(d.Predicted))
		}
	}
	if len(r.Cgroups) > 0 {
		b := &r.Bandwidth
		line("")
		line("cgroups over the contention window (every compared cgroup busy): real %.3f s, predicted %.3f s%s", b.WindowReal, b.WindowPred, fallbackNote(b.WindowFallback))
		line("  %-22s %6s %10s %10s %7s %7s %8s %9s %9s %6s", "cgroup", "weight", "real MiB/s", "pred MiB/s", "real %", "pred %", "error", "p50 ms", "pred p50", "KS")
		defaulted := false
		for _, c := range r.Cgroups {
			w := fmt.Sprint(c.Weight)
			if c.Weight == 0 {
				// Not given: the scheduler's default, marked (0 read as a weight).
				w = "-"
				if d := defaultWeight(r.Scheduler); d > 0 {
					w, defaulted = fmt.Sprintf("(%d)", d), true
				}
			}
			line("  %-22s %6s %10.2f %10.2f %7.1f %7.1f %+8.4f %9.3f %9.3f %6.3f", cgName(c.ID, c.Path)+star(c.Compared), w, c.RealMiBps, c.PredMiBps,
				100*c.RealShare, 100*c.PredShare, c.ShareError, 1e3*c.RealP50, 1e3*c.PredP50, c.KS)
		}
		line("  %-22s %6s %10.2f %10.2f %7s %7s %8s %9.3f %9.3f", "total", "", b.Real.MiBps, b.Pred.MiBps, "", "", "", 1e3*b.Real.P50, 1e3*b.Pred.P50)
		if defaulted {
			line("  (N): not given with --weight, %s's default weight", r.Scheduler)
		}
		line("  over each cgroup's active span (first Q to last C; window figures above are the headline):")
		for _, c := range r.Cgroups {
			line("  %-22s %6s %10.2f %10.2f %7.1f %7.1f", cgName(c.ID, c.Path), "", c.RealMiBpsSpan, c.PredMiBpsSpan, 100*c.RealShareSpan, 100*c.PredShareSpan)
		}
		if r.Change == nil {
			r.writeSeeds(line)
		}
	}
	if np := countCompared(r.Processes); np > 0 {
		b := &r.Bandwidth
		line("")
		line("processes over their contention window: real %.3f s, predicted %.3f s (%d compared)", b.ProcessWindowReal, b.ProcessWindowPred, np)
		line("  %-22s %10s %10s %7s %7s %9s %9s %9s %9s", "process", "real MiB/s", "pred MiB/s", "real %", "pred %", "p50 ms", "pred p50", "p99 ms", "pred p99")
		for _, p := range r.Processes {
			if !p.Compared {
				continue
			}
			line("  %-22s %10.2f %10.2f %7.1f %7.1f %9.3f %9.3f %9.3f %9.3f", procName(p), p.RealMiBps, p.PredMiBps, 100*p.RealShare, 100*p.PredShare,
				1e3*p.RealP50, 1e3*p.PredP50, 1e3*p.RealP99, 1e3*p.PredP99)
		}
	}
	m := &r.Merges
	line("")
	line("merges: back %d real / %d predicted, front %d / %d, queue merges %d / %d", m.RealBack, m.PredBack, m.RealFront, m.PredFront, m.RealQueueMerges, m.PredQueueMerges)
	if m.RealSharedFirst.Valid() || m.PredSharedFirst.Valid() {
		line("  first shared queue: real %s s, predicted %s s", m.RealSharedFirst, m.PredSharedFirst)
	}
	line("")
	line("think time (threshold %s s): real short %d, predicted short %d of %d queues; confusion real/pred s/s %d s/l %d l/s %d l/l %d",
		fsec(tt.ThresholdSeconds), tt.RealShort, tt.PredShort, tt.Queues, tt.Confusion[0][0], tt.Confusion[0][1], tt.Confusion[1][0], tt.Confusion[1][1])
	if tt.RealLogged.Points > 0 || tt.PredLogged.Points > 0 {
		line("  recomputed vs logged: real %.1f%% of %d, predicted %.1f%% of %d", 100*tt.RealLogged.Agreement, tt.RealLogged.Points, 100*tt.PredLogged.Agreement, tt.PredLogged.Points)
	}
	for _, q := range tt.PerQueue {
		if q.RealFlips+q.PredFlips+q.RealLoggedFlips+q.PredLoggedFlips == 0 && q.Agreement == 1 {
			continue
		}
		line("  %-10s agree %5.1f%%  short %5.1f%% / %5.1f%%  flips %d / %d (logged %d / %d)", q.Queue, 100*q.Agreement,
			100*q.RealShortFraction, 100*q.PredShortFraction, q.RealFlips, q.PredFlips, q.RealLoggedFlips, q.PredLoggedFlips)
	}
	line("")
	line("latency (ms)     %8s %8s %8s %8s %8s %8s %8s", "n", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, l := range []struct {
		name string
		d    Dist
	}{{"Q2C real", r.Latency.Q2C.Real}, {"Q2C predicted", r.Latency.Q2C.Pred}, {"D2C real", r.Latency.D2C.Real}, {"D2C predicted", r.Latency.D2C.Pred}} {
		d := l.d
		line("  %-14s %8d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f", l.name, d.N, 1e3*d.Mean, 1e3*d.P50, 1e3*d.P90, 1e3*d.P99, 1e3*d.P999, 1e3*d.Max)
	}
	dc := &r.Decisions
	if dc.Compared {
		line("")
		idle := fmt.Sprintf("idle %d/%d (%d differ)", dc.Idle.Real, dc.Idle.Predicted, dc.Idle.Mismatched)
		if dc.IdleUncompared {
			idle = fmt.Sprintf("idle not compared (%d/%d: one side logs idle arms only, the other every check; replay with --set log=all to compare)", dc.Idle.Real, dc.Idle.Predicted)
		}
		line("decisions: select %d/%d (%d differ), expire %d/%d (%d differ), %s",
			dc.Select.Real, dc.Select.Predicted, dc.Select.Mismatched, dc.Expire.Real, dc.Expire.Predicted, dc.Expire.Mismatched, idle)
		for _, mm := range dc.Mismatches[:min(len(dc.Mismatches), 10)] {
			q := mm.Queue
			if q == "" {
				q = "-"
			}
			line("  %-6s %-14s #%-5d real %s s %q, predicted %s s %q", mm.Kind, q, mm.Ordinal, mm.RealTime, mm.Real, mm.PredTime, mm.Predicted)
		}
	}
	return bw.Flush()
}

// writeChange writes the what-if lead: captured -> predicted.
func (r *Result) writeChange(line func(string, ...any)) {
	c := r.Change
	from := c.From
	if from == "" {
		from = "unknown scheduler"
	}
	line("what-if: %s -> %s (%s)", from, c.To, strings.Join(c.Changed, "; "))
	for _, a := range c.Assumed {
		line("assumed: %s", a)
	}
	line("figures over each side's contention window (captured %.3f s, predicted %.3f s)%s", r.Bandwidth.WindowReal, r.Bandwidth.WindowPred, fallbackNote(r.Bandwidth.WindowFallback))
	line("  %-22s %21s %17s %7s %17s %17s", "", "MiB/s", "IOPS", "share", "p50 ms", "p99 ms")
	row := func(name string, d Delta) {
		line("  %-22s %9.2f -> %-8.2f %7.0f -> %-7.0f %3.0f->%-3.0f %7.3f -> %-7.3f %7.3f -> %-7.3f", name,
			d.Captured.MiBps, d.Predicted.MiBps, d.Captured.IOPS, d.Predicted.IOPS, 100*d.Captured.Share, 100*d.Predicted.Share,
			1e3*d.Captured.P50, 1e3*d.Predicted.P50, 1e3*d.Captured.P99, 1e3*d.Predicted.P99)
	}
	for _, d := range c.Cgroups {
		row("cgroup "+cgName(d.ID, d.Name), d)
	}
	for _, d := range c.Processes {
		row(fmt.Sprintf("pid %d %s", d.ID, d.Name), d)
	}
	row("total", c.Total)
	line("  requests in flight: %.1f -> %.1f", c.InFlight.Captured, c.InFlight.Predicted)
	r.writeSeeds(line)
	if len(c.Causes) > 0 {
		line("what the scheduler did differently:")
		for _, s := range c.Causes {
			line("  - %s", s)
		}
	}
	if len(c.Decisions) > 0 {
		var parts []string
		for _, d := range c.Decisions {
			parts = append(parts, fmt.Sprintf("%s %d -> %d", d.Name, d.Captured, d.Predicted))
		}
		line("decisions (captured -> predicted): %s", strings.Join(parts, ", "))
	}
}

func fallbackNote(f bool) string {
	if f {
		return " (no overlap on a side: its whole active span)"
	}
	return ""
}

func star(b bool) string {
	if b {
		return " *"
	}
	return ""
}

func countCompared(ps []Process) int {
	n := 0
	for _, p := range ps {
		if p.Compared {
			n++
		}
	}
	return n
}

func procName(p Process) string {
	if p.Comm != "" {
		return fmt.Sprintf("%d %s", p.PID, p.Comm)
	}
	return fmt.Sprint(p.PID)
}

func cgName(id uint64, path string) string {
	if path != "" {
		return fmt.Sprintf("%d %s", id, path)
	}
	return fmt.Sprint(id)
}

// fsec prints seconds compactly.
func fsec(s float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", s), "0"), ".")
}

// shortTime prints t in seconds with microsecond precision.
func shortTime(t trace.Time) string {
	if !t.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.6f", t.Seconds())
}

// servedText summarises a Served list: cgroups, then queues, most served first.
func servedText(s Served) string {
	var parts []string
	for _, c := range s.Cgroups[:min(len(s.Cgroups), 3)] {
		parts = append(parts, fmt.Sprintf("cg %s x%d", cgName(c.ID, c.Name), c.Bios))
	}
	for _, c := range s.Queues[:min(len(s.Queues), 4)] {
		parts = append(parts, fmt.Sprintf("q %s x%d", c.Name, c.Bios))
	}
	return strings.Join(parts, ", ")
}

// writeSeeds writes the range of the predicted contention-window figures
// over the seeds the replay was made at (Seeds), when it was made at more
// than one.
func (r *Result) writeSeeds(line func(string, ...any)) {
	sp := r.Seeds
	if !sp.Varied() {
		return
	}
	line("  predicted at %d seeds (%s; the device model's draws), min / median / max:", len(sp.Seeds), SeedList(sp.Seeds))
	row := func(name string, f FigureSpread) {
		line("  %-22s MiB/s %.2f / %.2f / %.2f   share %.1f / %.1f / %.1f %%   p50 ms %.3f / %.3f / %.3f", name,
			f.MiBps.Min, f.MiBps.Median, f.MiBps.Max, 100*f.Share.Min, 100*f.Share.Median, 100*f.Share.Max,
			1e3*f.P50.Min, 1e3*f.P50.Median, 1e3*f.P50.Max)
	}
	for _, f := range sp.Cgroups {
		row("cgroup "+cgName(f.ID, f.Name), f)
	}
	for _, f := range sp.Processes {
		row(fmt.Sprintf("pid %d %s", f.ID, trace.Printable(f.Name)), f)
	}
}

// SeedList names seeds: "1-5" when they run on one by one, else "1, 4, 9".
func SeedList(seeds []uint64) string {
	run := true
	for i := 1; i < len(seeds); i++ {
		run = run && seeds[i] == seeds[i-1]+1
	}
	if run && len(seeds) > 1 {
		return fmt.Sprintf("%d-%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}
