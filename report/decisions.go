package report

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/report/svgplot"
	"github.com/tracesched/tracesched/trace"
)

// decisionsOf lists a side's scheduling decisions in time order.
func decisionsOf(s *diff.Side) []diff.Decision {
	if s == nil {
		return nil
	}
	var out []diff.Decision
	for i := range s.Messages.Len() {
		if d, ok := diff.DecisionOf(s.Messages.At(i)); ok {
			out = append(out, d)
		}
	}
	return out
}

// decisionsScanned caps the decisions read for one stretch and side.
const decisionsScanned = 2000

// contextAfter is how many decisions after a stretch are shown with it.
const contextAfter = 3

// around returns the decisions from the last select at or before from up
// to to (inclusive) and contextAfter more, at most n, and how many more
// there were.
func around(ds []diff.Decision, from, to trace.Time, n int) ([]diff.Decision, int) {
	i, _ := slices.BinarySearchFunc(ds, from, func(d diff.Decision, t trace.Time) int {
		if d.Time < t {
			return -1
		}
		return 1
	})
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		if ds[j].Kind == diff.DecisionSelect {
			i = j
			break
		}
	}
	k := i
	for k < len(ds) && ds[k].Time <= to {
		k++
	}
	k = min(k+contextAfter, len(ds))
	if k-i > n {
		return ds[i : i+n], k - i - n
	}
	return ds[i:k], 0
}

// decisionRun is a run of equal consecutive decisions (kind, queue, what).
type decisionRun struct {
	first, last trace.Time
	n           int
	d           diff.Decision
}

// runs collapses consecutive equal decisions.
func runs(ds []diff.Decision) []decisionRun {
	var out []decisionRun
	for _, d := range ds {
		if k := len(out) - 1; k >= 0 && out[k].d.Kind == d.Kind && out[k].d.Queue == d.Queue && out[k].d.What == d.What {
			out[k].last = d.Time
			out[k].n++
			continue
		}
		out = append(out, decisionRun{first: d.Time, last: d.Time, n: 1, d: d})
	}
	return out
}

// decisionTable lists decisions, equal consecutive ones on one row, at
// most decisionsShown rows.
func (r *Report) decisionTable(ds []diff.Decision, more int) {
	if len(ds) == 0 {
		r.body.WriteString("<p class=\"note\">no decisions logged in this stretch</p>\n")
		return
	}
	rs := runs(ds)
	t := newTable("time (s)", "decision", "queue", "what", "times")
	for _, x := range rs[:min(len(rs), decisionsShown)] {
		when := fmt.Sprintf("%.6f", x.first.Seconds())
		if x.n > 1 {
			when += fmt.Sprintf("–%.6f", x.last.Seconds())
		}
		t.add(when, x.d.Kind, x.d.Queue, x.d.What, "×"+strconv.Itoa(x.n))
	}
	r.table(t)
	for _, x := range rs[min(len(rs), decisionsShown):] {
		more += x.n
	}
	if more > 0 {
		r.p("… and %d more decisions in the stretch.", more)
	}
}

func (r *Report) decisionSection() {
	res := r.res
	dc := &res.Decisions
	r.section("decisions", "Scheduler decisions")
	if !dc.Compared {
		r.p("The two traces do not both carry scheduler messages, so decisions cannot be compared (real %d, predicted %d queue selections logged). Record the capture with the scheduler's debug messages (blktrace with BFQ's or CFQ's log) to see them.",
			dc.Select.Real, dc.Select.Predicted)
	} else {
		t := newTable("decision", "real", "predicted", "compared", "mismatched")
		for _, k := range []struct {
			name string
			c    diff.KindCount
		}{{"select (queue put in service)", dc.Select}, {"expire (reason)", dc.Expire}, {"idle (wait for the queue)", dc.Idle}} {
			t.add(k.name, strconv.Itoa(k.c.Real), strconv.Itoa(k.c.Predicted), strconv.Itoa(k.c.Compared), strconv.Itoa(k.c.Mismatched))
		}
		r.p("Decisions aligned by order: the n-th queue put in service on each side, the n-th expiry or idling decision of each queue.")
		r.table(t)
	}
	realD, predD := decisionsOf(res.RealSide), decisionsOf(res.PredSide)
	ranked := res.DispatchOrder.Ranked
	if fd := res.DispatchOrder.FirstDivergence; len(ranked) == 0 && fd != nil {
		r.body.WriteString("<h3>At the first divergence</h3>\n")
		fmt.Fprintf(&r.body, "<div class=\"stretch\">")
		r.p("No stretch of the order diverges by more than the threshold; the orders first differ at position %d: the real trace issued bio %d:%d at %.6f s, the prediction bio %d:%d at %.6f s. The decisions each side logged from its last queue selection before that point:",
			fd.Position, fd.Bio.PID, fd.Bio.Index, fd.RealTime.Seconds(), fd.Predicted.PID, fd.Predicted.Index, fd.PredTime.Seconds())
		if len(realD)+len(predD) > 0 {
			r.body.WriteString("<div class=\"side\"><div><b>real</b>\n")
			ds, more := around(realD, fd.RealTime, fd.RealTime, decisionsScanned)
			r.decisionTable(ds, more)
			r.body.WriteString("</div><div><b>predicted</b>\n")
			ds, more = around(predD, fd.PredTime, fd.PredTime, decisionsScanned)
			r.decisionTable(ds, more)
			r.body.WriteString("</div></div>\n")
		}
		r.body.WriteString("</div>\n")
	}
	if len(ranked) > 0 {
		r.body.WriteString("<h3>Behind the top divergences</h3>\n")
		r.p("For each of the most severe divergences: what each side served at those positions, the decisions each side's scheduler logged from its last queue selection before the stretch to its end, and the decision mismatches inside it.")
	}
	for _, d := range ranked[:min(len(ranked), decisionStretches)] {
		fmt.Fprintf(&r.body, "<div class=\"stretch\"><h3>Divergence #%d: real positions %d–%d, %d bios, mean |displacement| %s</h3>\n",
			d.Rank, d.First, d.Last, d.Bios, f(d.MeanDisplacement, 1))
		r.p("Real %s s served %s. Predicted %s s served %s.", timeSpan(d.RealStart, d.RealEnd), esc(r.servedText(d.Real)), timeSpan(d.PredStart, d.PredEnd), esc(r.servedText(d.Predicted)))
		if len(realD)+len(predD) > 0 {
			r.body.WriteString("<div class=\"side\"><div><b>real</b>\n")
			ds, more := around(realD, d.RealStart, d.RealEnd, decisionsScanned)
			r.decisionTable(ds, more)
			r.body.WriteString("</div><div><b>predicted</b>\n")
			ds, more = around(predD, d.PredStart, d.PredEnd, decisionsScanned)
			r.decisionTable(ds, more)
			r.body.WriteString("</div></div>\n")
		}
		var in []diff.Mismatch
		for _, m := range dc.Mismatches {
			if m.RealTime.Valid() && m.RealTime >= d.RealStart && m.RealTime <= d.RealEnd ||
				m.PredTime.Valid() && m.PredTime >= d.PredStart && m.PredTime <= d.PredEnd {
				in = append(in, m)
			}
		}
		if len(in) > 0 {
			r.body.WriteString("<p><span class=\"diverge\">Mismatches in this stretch</span></p>\n")
			r.mismatchTable(in)
		}
		r.body.WriteString("</div>\n")
	}
	if dc.Compared && len(dc.Mismatches) > 0 {
		r.body.WriteString("<h3>First decision mismatches</h3>\n")
		r.mismatchTable(dc.Mismatches[:min(len(dc.Mismatches), mismatchRows)])
	}
	r.endSection()
}

func (r *Report) mismatchTable(ms []diff.Mismatch) {
	t := newTable("decision", "queue", "#", "real time (s)", "real", "predicted time (s)", "predicted")
	for _, m := range ms {
		q := m.Queue
		if q == "" {
			q = "–"
		}
		t.add(m.Kind, q, strconv.Itoa(m.Ordinal), secOrDash(m.RealTime), m.Real, secOrDash(m.PredTime), m.Predicted)
	}
	r.table(t)
}

func secOrDash(t trace.Time) string {
	if !t.Valid() {
		return "–"
	}
	return fmt.Sprintf("%.6f", t.Seconds())
}

// sizeBuckets groups a side's D2C latencies (ms, sorted) by request size:
// bucket k holds sizes in (2^(k-1), 2^k] KiB (k = 0: up to 1 KiB).
func sizeBuckets(s *diff.Side) map[int][]float64 {
	out := map[int][]float64{}
	if s == nil {
		return out
	}
	for i := range s.NumRequests() {
		rqv := s.RequestAt(i)
		rq := &rqv
		if !rq.Issue.Valid() || !rq.Complete.Valid() || rq.Complete < rq.Issue || rq.Bytes == 0 {
			continue
		}
		kib := (uint64(rq.Bytes) + 1023) / 1024
		k := bits.Len64(kib - 1)
		out[k] = append(out[k], float64(rq.Complete-rq.Issue)/1e6)
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func (r *Report) deviceSection() {
	res, run := r.res, &r.run
	r.section("device", "Device model")
	if run.Device != "" {
		r.p("Device model: %s.", esc(run.Device))
	}
	if !r.whatIf() { // a what-if states it in its own section, which leads
		r.extrapolation()
	}
	if fit := run.Fit; fit != nil {
		how := "chosen by cross-validated demerit"
		if fit.Forced {
			how = "forced"
		}
		rel := math.NaN()
		if fit.MeanD2C > 0 {
			rel = float64(fit.ModelMeanD2C)/float64(fit.MeanD2C) - 1
		}
		r.kv([][2]string{
			{"kind", esc(fit.Kind + " (" + how + ")")},
			{"requests fitted", fmt.Sprintf("%d (%d skipped: without both a D and a C, or in flight at the start)", fit.N, fit.Skipped)},
			{"mean D2C", fmt.Sprintf("capture %s ms, model %s ms (%+.1f %%)", f(fit.MeanD2C.Seconds()*1e3, 4), f(fit.ModelMeanD2C.Seconds()*1e3, 4), 100*rel)},
			{"D2C demerit, in sample", fmt.Sprintf("%s ms (%s of the mean)", f(fit.Demerit.Seconds()*1e3, 4), pct(fit.DemeritFraction))},
			{"D2C demerit, cross-validated", fmt.Sprintf("%s ms (%s; trained on %d requests, scored on %d; the capture's halves differ by %s)",
				f(fit.CV.Demerit.Seconds()*1e3, 4), pct(fit.CV.DemeritFraction), fit.CV.Train, fit.CV.Test, pct(fit.CV.HalvesFraction))},
		})
		if len(fit.Candidates) > 0 {
			t := newTable("candidate", "trained", "scored", "demerit (ms)", "demerit %", "halves %")
			for _, c := range fit.Candidates {
				t.add(c.Kind, strconv.Itoa(c.Train), strconv.Itoa(c.Test), f(c.Demerit.Seconds()*1e3, 4), f(100*c.DemeritFraction, 1), f(100*c.HalvesFraction, 1))
			}
			r.table(t)
		}
		if len(fit.GapUnder) > 0 && len(fit.GapReal) == len(fit.GapUnder) && len(fit.GapModel) == len(fit.GapUnder) {
			x := make([]float64, len(fit.GapUnder))
			for i, g := range fit.GapUnder {
				x[i] = float64(g) / 1e3
			}
			series := []svgplot.Series{{Name: "capture", Colour: 0, Markers: true, X: x, Y: fit.GapReal}, {Name: "model", Colour: 1, Dashed: true, Markers: true, X: x, Y: fit.GapModel}}
			r.figure(&Chart{Name: "device-gaps", Title: "Completion gaps",
				Caption: "Fraction of the gaps between consecutive completions shorter than each threshold, in the capture and in the model (every request issued at its real D time): how well the model reproduces completion bunching.",
				plot: &svgplot.LineChart{Title: "Gaps between consecutive completions", X: svgplot.Axis{Label: "gap shorter than (µs, log scale)", Log: true},
					Y: svgplot.Axis{Label: "fraction of gaps", Min: 0, Max: 1}, Series: series},
				data: timeSeriesTable("gap under (µs)", x, 1, series, 3)})
		}
		if fit.Summary != "" {
			r.body.WriteString("<details><summary>The fit as <code>tracesched calibrate</code> prints it</summary>\n")
			fmt.Fprintf(&r.body, "<pre>%s</pre>\n</details>\n", esc(fit.Summary))
		}
	} else {
		r.p("No calibration fit recorded for this run (a device model given as a file, or a prediction read from a file): the chart below compares the D2C times the prediction shows with the capture's.")
	}
	// D2C by request size.
	rb, pb := sizeBuckets(res.RealSide), sizeBuckets(res.PredSide)
	var ks []int
	for k := range rb {
		ks = append(ks, k)
	}
	for k := range pb {
		if _, ok := rb[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	if len(ks) == 0 {
		r.endSection()
		return
	}
	x := make([]float64, len(ks))
	var rp50, rp90, pp50, pp90 []float64
	t := newTable("size up to (KiB)", "real n", "real p50 (ms)", "real p90 (ms)", "predicted n", "predicted p50 (ms)", "predicted p90 (ms)")
	for i, k := range ks {
		x[i] = float64(uint64(1) << k)
		rp50 = append(rp50, quantile(rb[k], 0.5))
		rp90 = append(rp90, quantile(rb[k], 0.9))
		pp50 = append(pp50, quantile(pb[k], 0.5))
		pp90 = append(pp90, quantile(pb[k], 0.9))
		t.add(strconv.FormatUint(uint64(1)<<k, 10), strconv.Itoa(len(rb[k])), f(rp50[i], 3), f(rp90[i], 3), strconv.Itoa(len(pb[k])), f(pp50[i], 3), f(pp90[i], 3))
	}
	series := []svgplot.Series{
		{Name: "real p50", Colour: 0, Markers: true, X: x, Y: rp50},
		{Name: "predicted p50", Colour: 0, Dashed: true, Markers: true, X: x, Y: pp50},
		{Name: "real p90", Colour: 4, Markers: true, X: x, Y: rp90},
		{Name: "predicted p90", Colour: 4, Dashed: true, Markers: true, X: x, Y: pp90},
	}
	xa := svgplot.Axis{Label: "request size, up to (KiB, log scale)", Log: true}
	if len(ks) == 1 {
		xa.Min, xa.Max = x[0]/2, x[0]*2
	}
	r.figure(&Chart{Name: "device-d2c-size", Title: "D2C by request size",
		Caption: "Median and 90th percentile D2C (issue to completion) of the requests in each size class, real against predicted: the device model as the replay used it.",
		plot:    &svgplot.LineChart{Title: "D2C by request size", X: xa, Y: svgplot.Axis{Label: "D2C (ms)", FromZero: true}, Series: series},
		data:    t})
	r.endSection()
}
