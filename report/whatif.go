package report

import (
	"fmt"
	"strings"

	"github.com/tracesched/tracesched/diff"
)

// whatIfSection leads a what-if report (diff.ModeWhatIf): what the replay
// changed, and the captured figures against the predicted ones per cgroup,
// per process and in total, over each side's contention window, with the
// scheduler decisions counted on both sides. A validation report has no
// such section.
func (r *Report) whatIfSection() {
	ch := r.res.Change
	if !r.whatIf() {
		return
	}
	r.section("whatif", "What-if: captured against predicted")
	from := ch.From
	if from == "" {
		from = "an unknown scheduler"
	}
	r.p("Recorded under %s, replayed through %s. Changed: %s. Figures are over each side's contention window "+
		"(every compared cgroup or process busy: %s s captured, %s s predicted); latency is bio Q2C.",
		esc(from), esc(ch.To), esc(strings.Join(ch.Changed, "; ")), f(r.res.Bandwidth.WindowReal, 3), f(r.res.Bandwidth.WindowPred, 3))
	if len(ch.Assumed) > 0 {
		r.p("Assumed: %s.", esc(strings.Join(ch.Assumed, "; ")))
	}
	t := newTable("", "captured MiB/s", "predicted MiB/s", "ratio", "captured IOPS", "predicted IOPS",
		"captured share", "predicted share", "captured p50 ms", "predicted p50 ms", "captured p99 ms", "predicted p99 ms")
	row := func(name string, d diff.Delta) {
		c, p := d.Captured, d.Predicted
		t.add(name, f(c.MiBps, 2), f(p.MiBps, 2), f(d.Ratio, 2), f(c.IOPS, 0), f(p.IOPS, 0),
			pct(c.Share), pct(p.Share), f(1e3*c.P50, 3), f(1e3*p.P50, 3), f(1e3*c.P99, 3), f(1e3*p.P99, 3))
	}
	for _, d := range ch.Cgroups {
		name := cgLabel(d.ID, d.Name)
		if w, ok := r.run.Weights[d.ID]; ok {
			name += fmt.Sprintf(" (weight %d)", w)
		}
		row(name, d)
	}
	for _, d := range ch.Processes {
		name := fmt.Sprintf("process %d", d.ID)
		if d.Name != "" {
			name += " " + d.Name
		}
		row(name, d)
	}
	row("total", ch.Total)
	t.alignNumbers()
	r.table(t)
	r.p("Requests in flight on the device, mean: %s captured, %s predicted.", f(ch.InFlight.Captured, 1), f(ch.InFlight.Predicted, 1))
	r.seeds()
	r.extrapolation()
	if len(ch.Decisions) > 0 {
		r.body.WriteString("<h3>The decisions behind it</h3>\n")
		dt := newTable("decision", "captured", "predicted")
		for _, d := range ch.Decisions {
			dt.add(d.Name, fmt.Sprint(d.Captured), fmt.Sprint(d.Predicted))
		}
		dt.alignNumbers()
		r.table(dt)
	}
	if len(ch.Causes) > 0 {
		r.body.WriteString("<ul>\n")
		for _, c := range ch.Causes {
			fmt.Fprintf(&r.body, "<li>%s</li>\n", esc(c))
		}
		r.body.WriteString("</ul>\n")
	}
	r.p("The figures below (dispatch order, divergences, the decision mismatches) compare the replay with a capture of another setup: in a what-if they show where the two part ways, not errors of the model.")
	r.headlineCards("Against the capture it was made from")
	r.endSection()
}

// extrapolation lists where the prediction drove the device model beyond
// what its calibration saw (diff.Result.DeviceExtrapolation), if anywhere.
func (r *Report) extrapolation() {
	if len(r.res.DeviceExtrapolation) == 0 {
		return
	}
	r.body.WriteString("<p><strong>The device model extrapolates:</strong></p>\n<ul>\n")
	for _, s := range r.res.DeviceExtrapolation {
		fmt.Fprintf(&r.body, "<li>%s</li>\n", esc(s))
	}
	r.body.WriteString("</ul>\n")
}

// seeds tables the range of the predicted figures over the device model's
// seeds (diff.Result.Seeds, replay --seeds N), when there are several.
func (r *Report) seeds() {
	sp := r.res.Seeds
	if !sp.Varied() {
		return
	}
	r.p("The same replay at %d seeds of the device model's random draws (%s): the least, median and largest predicted figure over them. A wide range is a figure that turns on where single draws fall; one replay does not pin it down.",
		len(sp.Seeds), esc(diff.SeedList(sp.Seeds)))
	t := newTable("", "MiB/s min", "median", "max", "share min", "median", "max", "p50 ms min", "median", "max")
	row := func(name string, x diff.FigureSpread) {
		t.add(name, f(x.MiBps.Min, 2), f(x.MiBps.Median, 2), f(x.MiBps.Max, 2), pct(x.Share.Min), pct(x.Share.Median), pct(x.Share.Max),
			f(1e3*x.P50.Min, 3), f(1e3*x.P50.Median, 3), f(1e3*x.P50.Max, 3))
	}
	for _, x := range sp.Cgroups {
		row(cgLabel(x.ID, x.Name), x)
	}
	for _, x := range sp.Processes {
		name := fmt.Sprintf("process %d", x.ID)
		if x.Name != "" {
			name += " " + x.Name
		}
		row(name, x)
	}
	t.alignNumbers()
	r.table(t)
}
