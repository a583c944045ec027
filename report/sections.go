package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/report/svgplot"
	"github.com/tracesched/tracesched/trace"
)

// sideStyles is the legend's key to the two sides' line styles.
var sideStyles = []svgplot.LegendItem{{Name: "real (solid)", Colour: -1}, {Name: "predicted (dashed)", Colour: -1, Dashed: true}}

// timeSeriesTable tabulates series sharing x.
func timeSeriesTable(xHead string, x []float64, xPrec int, series []svgplot.Series, prec int) *table {
	head := []string{xHead}
	for _, s := range series {
		head = append(head, s.Name)
	}
	t := newTable(head...)
	for i := range x {
		row := []string{f(x[i], xPrec)}
		for _, s := range series {
			row = append(row, f(s.Y[i], prec))
		}
		t.add(row...)
	}
	return t
}

// divergenceBands returns the real-time spans (s) of the top divergences.
func (r *Report) divergenceBands(n int) []svgplot.Band {
	var out []svgplot.Band
	for _, d := range r.res.DispatchOrder.Ranked[:min(n, len(r.res.DispatchOrder.Ranked))] {
		if d.RealStart.Valid() && d.RealEnd.Valid() {
			out = append(out, svgplot.Band{X0: d.RealStart.Seconds(), X1: d.RealEnd.Seconds(), Label: "#" + strconv.Itoa(d.Rank)})
		}
	}
	return out
}

func (r *Report) bandwidthSection() {
	res := r.res
	r.section("bandwidth", "Bandwidth")
	end := sideEnd(res.RealSide, res.PredSide)
	win := chartWindow(end, lenBios(res.RealSide))
	nw := int(end/win) + 1
	x := windowCentres(win, nw)
	winLabel := strings.TrimSuffix(fmt.Sprintf("%g", float64(win)/1e6), ".0") + " ms"

	// Per cgroup: the diff's figures, then the series at the chart's window.
	if len(res.Cgroups) > 0 {
		t := newTable("cgroup", "weight", "real MiB/s", "predicted MiB/s", "real share %", "predicted share %", "share error", "slowdown", "KS", "real MiB", "predicted MiB")
		for _, c := range res.Cgroups {
			w := "–"
			if c.Weight > 0 {
				w = strconv.Itoa(c.Weight)
			}
			t.add(cgLabel(c.ID, c.Path), w, f(c.RealMiBps, 2), f(c.PredMiBps, 2), f(100*c.RealShare, 1), f(100*c.PredShare, 1),
				fmt.Sprintf("%+.4f", c.ShareError), f(c.Slowdown, 3), f(c.KS, 3), f(float64(c.RealBytes)/mib, 1), f(float64(c.PredBytes)/mib, 1))
		}
		r.p("Per cgroup, over each cgroup's own active span on each side (first queued bio to last completion): bandwidth, share of the summed bandwidth, and the Kolmogorov–Smirnov distance between the per-window distributions (diff's windows of %s s). Fairness %.3f.",
			f(res.Bandwidth.WindowSeconds, 3), res.Bandwidth.Fairness)
		r.table(t)
		if !r.whatIf() {
			r.seeds()
		}
	}
	cgKey := func(b *trace.Bio) uint64 { return b.Cgroup }
	rc, pc := binBytes(res.RealSide, win, nw, cgKey), binBytes(res.PredSide, win, nw, cgKey)
	top, rest := topKeys(topCgroups, rc, pc)
	var series []svgplot.Series
	var legend []svgplot.LegendItem
	sparse := nw < 40
	addPair := func(name string, colour int, keys []uint64) {
		series = append(series,
			svgplot.Series{Name: name + " real", Colour: colour, X: x, Y: rc.mibps(keys...), Markers: sparse},
			svgplot.Series{Name: name + " predicted", Colour: colour, Dashed: true, X: x, Y: pc.mibps(keys...), Markers: sparse})
		legend = append(legend, svgplot.LegendItem{Name: name, Colour: colour, Box: true})
	}
	slices.Sort(top)
	for _, id := range top {
		name := cgLabel(id, r.cgPath(id))
		if w := r.run.Weights[id]; w > 0 {
			name += fmt.Sprintf(" (w %d)", w)
		}
		addPair(name, r.cgColour(id), id1(id))
	}
	if len(rest) > 0 {
		addPair(fmt.Sprintf("%d other cgroups", len(rest)), svgplot.Colours-1, rest)
	}
	legend = append(legend, sideStyles...)
	bands := r.divergenceBands(5)
	if len(bands) > 0 {
		legend = append(legend, svgplot.LegendItem{Name: "top divergences (real time)", Colour: -1, Box: true})
	}
	r.figure(&Chart{Name: "bandwidth-cgroups", Title: "Bandwidth per cgroup",
		Caption: fmt.Sprintf("MiB/s completed per %s window, real (solid) against predicted (dashed); shaded: the real-time spans of the top divergences.", winLabel),
		plot: &svgplot.LineChart{Title: "Bandwidth per cgroup", X: svgplot.Axis{Label: "time since the trace's origin (s)", FromZero: true, Tight: true},
			Y: svgplot.Axis{Label: "MiB/s", FromZero: true}, Series: series, Legend: legend, Bands: bands},
		data: timeSeriesTable("time (s)", x, 4, series, 2)})

	// Per process.
	pidKey := func(b *trace.Bio) uint64 { return uint64(b.PID) }
	rp, pp := binBytes(res.RealSide, win, nw, pidKey), binBytes(res.PredSide, win, nw, pidKey)
	top, rest = topKeys(topProcesses, rp, pp)
	comm := r.comms()
	series, legend = nil, nil
	rc, pc = rp, pp
	slices.Sort(top)
	colours := r.processColours(top)
	for i, pid := range top {
		name := "pid " + strconv.FormatUint(pid, 10)
		if c := comm[uint32(pid)]; c != "" {
			name = c + " " + strconv.FormatUint(pid, 10)
		}
		addPair(name, colours[i], id1(pid))
	}
	if len(rest) > 0 {
		addPair(fmt.Sprintf("%d other processes", len(rest)), svgplot.Colours-1, rest)
	}
	legend = append(legend, sideStyles...)
	r.figure(&Chart{Name: "bandwidth-processes", Title: "Bandwidth per process",
		Caption: fmt.Sprintf("MiB/s completed per %s window for the %d processes that moved the most bytes, real (solid) against predicted (dashed).", winLabel, len(top)),
		plot: &svgplot.LineChart{Title: "Bandwidth per process", X: svgplot.Axis{Label: "time since the trace's origin (s)", FromZero: true, Tight: true},
			Y: svgplot.Axis{Label: "MiB/s", FromZero: true}, Series: series, Legend: legend},
		data: timeSeriesTable("time (s)", x, 4, series, 2)})
	// The per-process totals.
	t := newTable("process", "real MiB", "predicted MiB", "real MiB/s (span)", "predicted MiB/s (span)")
	all, _ := topKeys(processRows, rp, pp)
	rs, ps := r.res.WallSeconds, r.res.SimulatedSeconds
	for _, pid := range all[:min(len(all), processRows)] {
		name := strconv.FormatUint(pid, 10)
		if c := comm[uint32(pid)]; c != "" {
			name += " " + c
		}
		rb, pb := float64(rp.tot[pid])/mib, float64(pp.tot[pid])/mib
		t.add(name, f(rb, 2), f(pb, 2), f(rb/math.Max(rs, 1e-9), 2), f(pb/math.Max(ps, 1e-9), 2))
	}
	r.p("The processes that moved the most bytes; MiB/s over each trace's whole active span (real %.3f s, predicted %.3f s).", rs, ps)
	r.table(t)
	r.endSection()
}

func id1(id uint64) []uint64 { return []uint64{id} }

// processColours gives each process its cgroup's colour where no other
// process of the list took it, else the first colour still free.
func (r *Report) processColours(pids []uint64) []int {
	cg := map[uint64]uint64{}
	if s := r.res.RealSide; s != nil {
		for i := range s.NumBios() {
			b := s.BioAt(i)
			if _, ok := cg[uint64(b.PID)]; !ok {
				cg[uint64(b.PID)] = b.Cgroup
			}
		}
	}
	used := make([]bool, svgplot.Colours)
	out := make([]int, len(pids))
	for i, pid := range pids {
		c, ok := cg[pid]
		k := r.cgColour(c)
		if !ok || used[k] || k == svgplot.Colours-1 {
			k = slices.Index(used[:svgplot.Colours-1], false)
		}
		if k < 0 {
			k = i % (svgplot.Colours - 1)
		}
		used[k] = true
		out[i] = k
	}
	return out
}

// cgColour returns a cgroup's colour: its rank by id among the cgroups the
// diff compares, the last colour kept for "other".
func (r *Report) cgColour(id uint64) int {
	for i, c := range r.res.Cgroups {
		if c.ID == id {
			return i % (svgplot.Colours - 1)
		}
	}
	return svgplot.Colours - 1
}

// comms maps pids to process names, from the requests; computed once.
func (r *Report) comms() map[uint32]string {
	if r.comm != nil {
		return r.comm
	}
	m := map[uint32]string{}
	for _, s := range []*diff.Side{r.res.RealSide, r.res.PredSide} {
		if s == nil {
			continue
		}
		last := uint32(0)
		for i := range s.NumRequests() {
			rqv := s.RequestAt(i)
			rq := &rqv
			if rq.Comm == "" || (rq.PID == last && i > 0) {
				continue
			}
			last = rq.PID
			if m[rq.PID] == "" {
				m[rq.PID] = rq.Comm
			}
		}
	}
	r.comm = m
	return m
}

func (r *Report) latencySection() {
	res := r.res
	r.section("latency", "Latency")
	rq, rd := latencyOf(res.RealSide)
	pq, pd := latencyOf(res.PredSide)
	// Cgroups by real requests.
	count := map[uint64]int{}
	for k, v := range rq {
		count[k] += len(v)
	}
	for k, v := range pq {
		count[k] += len(v)
	}
	ids := make([]uint64, 0, len(count))
	for k := range count {
		ids = append(ids, k)
	}
	slices.SortFunc(ids, func(a, b uint64) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	shown := ids[:min(len(ids), topLatencyCgs)]
	slices.Sort(shown)
	l := res.Latency
	r.p("Over all requests: Q2C demerit %s (%s ms RMS between the CDFs), D2C demerit %s (%s ms). Demerit is DiskSim's: the root mean square horizontal distance between the real and predicted CDFs, as a fraction of the real mean.",
		pct(l.Q2CDemerit), f(1e3*l.Q2C.Demerit, 3), pct(l.D2CDemerit), f(1e3*l.D2C.Demerit, 3))
	for _, kind := range []struct {
		name, long string
		real, pred map[uint64][]float64
	}{{"Q2C", "queued to completed", rq, pq}, {"D2C", "issued to completed", rd, pd}} {
		var series []svgplot.Series
		var legend []svgplot.LegendItem
		t := newTable("cgroup", "side", "n", "mean (ms)", "p50 (ms)", "p90 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)")
		for _, id := range shown {
			i := r.cgColour(id)
			name := cgLabel(id, r.cgPath(id))
			for side, m := range []map[uint64][]float64{kind.real, kind.pred} {
				xs := m[id]
				cx, cy := cdf(xs)
				sn := name + " real"
				if side == 1 {
					sn = name + " predicted"
				}
				series = append(series, svgplot.Series{Name: sn, Colour: i, Dashed: side == 1, X: cx, Y: cy})
				t.add(name, []string{"real", "predicted"}[side], strconv.Itoa(len(xs)), f(mean(xs), 3), f(quantile(xs, 0.5), 3), f(quantile(xs, 0.9), 3),
					f(quantile(xs, 0.99), 3), f(quantile(xs, 0.999), 3), f(quantile(xs, 1), 3))
			}
			legend = append(legend, svgplot.LegendItem{Name: name, Colour: i, Box: true})
		}
		legend = append(legend, sideStyles...)
		// The plotted points: the quantiles of every series at the levels.
		dt := newTable(append([]string{"level"}, seriesNames(series)...)...)
		for li, p := range cdfLevels {
			if li%10 != 0 && p < 0.99 {
				continue
			}
			row := []string{f(p, 4)}
			for _, s := range series {
				v := math.NaN()
				if li < len(s.X) {
					v = s.X[li]
				}
				row = append(row, f(v, 3))
			}
			dt.add(row...)
		}
		caption := fmt.Sprintf("%s (%s) latency CDF per cgroup, real (solid) against predicted (dashed), log scale.", kind.name, kind.long)
		if len(ids) > len(shown) {
			caption += fmt.Sprintf(" The %d cgroups with the most requests of %d.", len(shown), len(ids))
		}
		r.figure(&Chart{Name: "latency-" + strings.ToLower(kind.name), Title: kind.name + " latency CDF",
			Caption: caption,
			plot: &svgplot.LineChart{Title: kind.name + " latency CDF per cgroup", X: svgplot.Axis{Label: kind.name + " (ms, log scale)", Log: true},
				Y: svgplot.Axis{Label: "fraction of requests", Min: 0, Max: 1}, Series: series, Legend: legend},
			data: dt})
		r.table(t)
	}
	r.endSection()
}

func seriesNames(ss []svgplot.Series) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// rankBins is how many bins each axis of the dispatch heat map gets.
const rankBins = 120

// dispBins is how many bins the displacement chart gets.
const dispBins = 400

func (r *Report) orderSection() {
	o := &r.res.DispatchOrder
	r.section("order", "Dispatch order")
	n := len(o.Displacement)
	first := "the two orders agree throughout"
	if fd := o.FirstDivergence; fd != nil {
		first = fmt.Sprintf("the orders first differ at position %d (real issued bio %d:%d at %.6f s, the prediction bio %d:%d at %.6f s)",
			fd.Position, fd.Bio.PID, fd.Bio.Index, fd.RealTime.Seconds(), fd.Predicted.PID, fd.Predicted.Index, fd.PredTime.Seconds())
	}
	r.p("%d bios ranked by issue order on both sides. Kendall tau %s (%d discordant pairs), mean |displacement| %s ranks, largest %d (bio %d:%d); %s. %d divergent stretches (windows of bios whose mean |displacement| exceeds %s ranks).",
		o.Bios, f(o.KendallTau, 4), o.Inversions, f(o.MeanDisplacement, 2), o.MaxDisplacement, o.MaxDisplaced.PID, o.MaxDisplaced.Index, esc(first), o.Divergences, f(r.run.DivergenceThreshold, 1))
	var bands []svgplot.Band
	for _, d := range o.Ranked[:min(len(o.Ranked), divergenceRows)] {
		bands = append(bands, svgplot.Band{X0: float64(d.First), X1: float64(d.Last + 1), Label: "#" + strconv.Itoa(d.Rank)})
	}
	// Heat map of (real rank, predicted rank).
	bins := max(min(rankBins, n), 1)
	counts := make([]int, bins*bins)
	for i, d := range o.Displacement {
		p := i + int(d)
		col := i * bins / n
		row := min(max(p*bins/n, 0), bins-1)
		counts[row*bins+col]++
	}
	hi := float64(max(n, 1))
	legend := []svgplot.LegendItem{{Name: "bios in the cell (darker: more)", Colour: 0, Box: true}, {Name: "same rank on both sides", Colour: -1, Dashed: true}}
	if len(bands) > 0 {
		legend = append(legend, svgplot.LegendItem{Name: "divergences (#rank)", Colour: -1, Box: true})
	}
	hm := &svgplot.Heatmap{Title: "Real rank against predicted rank", X: svgplot.Axis{Label: "rank in the real dispatch order", Min: 0, Max: hi},
		Y: svgplot.Axis{Label: "rank in the predicted order", Min: 0, Max: hi}, Cols: bins, Rows: bins, Counts: counts, Diagonal: true, Bands: bands, Legend: legend}
	dt := newTable("real rank from", "real rank to", "predicted rank from", "predicted rank to", "bios")
	for row := 0; row < bins; row++ {
		for col := 0; col < bins; col++ {
			if c := counts[row*bins+col]; c > 0 {
				dt.add(strconv.Itoa(col*n/bins), strconv.Itoa((col+1)*n/bins-1), strconv.Itoa(row*n/bins), strconv.Itoa((row+1)*n/bins-1), strconv.Itoa(c))
			}
		}
	}
	r.figure(&Chart{Name: "dispatch-ranks", Title: "Real rank against predicted rank",
		Caption: fmt.Sprintf("Each bio at (its rank in the real dispatch order, its rank in the predicted one), counted in %d x %d cells; a perfect prediction lies on the diagonal. Shaded: the top divergences.", bins, bins),
		plot:    hm, data: dt})

	// Mean and max |displacement| along the real order.
	k := max(min(dispBins, n), 1)
	xs, mean, mx := make([]float64, k), make([]float64, k), make([]float64, k)
	cnt := make([]int, k)
	for i, d := range o.Displacement {
		b := i * k / n
		a := math.Abs(float64(d))
		mean[b] += a
		mx[b] = math.Max(mx[b], a)
		cnt[b]++
	}
	for b := range xs {
		lo, hi := b*n/k, (b+1)*n/k
		xs[b] = float64(lo+hi) / 2
		if cnt[b] > 0 {
			mean[b] /= float64(cnt[b])
		} else {
			mean[b], mx[b] = math.NaN(), math.NaN()
		}
	}
	series := []svgplot.Series{{Name: "max |displacement|", Colour: 1, X: xs, Y: mx}, {Name: "mean |displacement|", Colour: 0, X: xs, Y: mean}}
	r.figure(&Chart{Name: "dispatch-displacement", Title: "Displacement along the real order",
		Caption: dispCaption(n, k, r.run.DivergenceThreshold),
		plot: &svgplot.LineChart{Title: "Displacement along the real dispatch order", X: svgplot.Axis{Label: "rank in the real dispatch order", Min: 0, Max: hi},
			Y: svgplot.Axis{Label: "|displacement| (ranks)", FromZero: true}, Series: series, Bands: bands, RefY: []float64{r.run.DivergenceThreshold},
			LegendExtra: []svgplot.LegendItem{{Name: "divergence threshold", Colour: -1, Dashed: true}}},
		data: timeSeriesTable("real rank", xs, 0, series, 2)})

	if len(o.Ranked) == 0 {
		r.p("No divergences.")
		r.endSection()
		return
	}
	r.body.WriteString("<h3>Top divergences</h3>\n")
	r.p("Severity = bios in the stretch × their mean |displacement|. Served: what each side issued at those positions, most first.")
	t := newTable("#", "real positions", "bios", "mean |displacement|", "max", "severity", "real time (s)", "predicted time (s)", "real served", "predicted served")
	for _, d := range o.Ranked[:min(len(o.Ranked), divergenceRows)] {
		t.add(strconv.Itoa(d.Rank), fmt.Sprintf("%d–%d", d.First, d.Last), strconv.Itoa(d.Bios), f(d.MeanDisplacement, 1), strconv.Itoa(d.MaxDisplacement), f(d.Severity, 0),
			timeSpan(d.RealStart, d.RealEnd), timeSpan(d.PredStart, d.PredEnd), r.servedText(d.Real), r.servedText(d.Predicted))
	}
	r.table(t)
	r.endSection()
}

func dispCaption(n, bins int, threshold float64) string {
	per := fmt.Sprintf("per bin of %s positions of the real order", f(float64(n)/float64(bins), 1))
	if n <= bins {
		per = "per position of the real order (one bio a bin: the mean is the max)"
	}
	return fmt.Sprintf("|predicted rank - real rank| %s; dashed line: the divergence threshold (%s ranks); shaded: the top divergences.", per, f(threshold, 1))
}

func timeSpan(a, b trace.Time) string {
	if !a.Valid() || !b.Valid() {
		return "–"
	}
	return fmt.Sprintf("%.6f–%.6f", a.Seconds(), b.Seconds())
}

func (r *Report) servedText(s diff.Served) string {
	var parts []string
	for _, c := range s.Cgroups[:min(len(s.Cgroups), 2)] {
		parts = append(parts, fmt.Sprintf("%s ×%d", cgLabel(c.ID, c.Name), c.Bios))
	}
	for _, c := range s.Queues[:min(len(s.Queues), 3)] {
		parts = append(parts, fmt.Sprintf("queue %s ×%d", c.Name, c.Bios))
	}
	return strings.Join(parts, ", ")
}

func (r *Report) thinkSection() {
	res := r.res
	tt := &res.ThinkTime
	r.section("think", "Think time and merges")
	r.p("BFQ's think-time statistic recomputed from each side's own timing (threshold %s ms on the mean): %d sync queues, real short %d, predicted short %d; the classes agree on %s of %d requests compared (confusion real/predicted short/short %d, short/long %d, long/short %d, long/long %d).",
		f(1e3*tt.ThresholdSeconds, 3), tt.Queues, tt.RealShort, tt.PredShort, pct(tt.Agreement), tt.Compared, tt.Confusion[0][0], tt.Confusion[0][1], tt.Confusion[1][0], tt.Confusion[1][1])
	if tt.RealLogged.Points > 0 || tt.PredLogged.Points > 0 {
		logged := func(la diff.LoggedAgreement) string {
			if la.Points == 0 {
				return "no class logged"
			}
			return fmt.Sprintf("%s of %d", pct(la.Agreement), la.Points)
		}
		r.p("Check of the recomputation against the classes the schedulers logged: real %s, predicted %s.", logged(tt.RealLogged), logged(tt.PredLogged))
	}
	qs := slices.Clone(tt.PerQueue)
	slices.SortStableFunc(qs, func(a, b diff.QueueThink) int {
		return cmp.Compare(b.RealRequests+b.PredRequests, a.RealRequests+a.PredRequests)
	})
	end := sideEnd(res.RealSide, res.PredSide)
	comm := r.comms()
	qname := func(q diff.QueueThink) string {
		s := q.Queue
		if c := comm[q.PID]; c != "" {
			s += " " + c
		}
		return s
	}
	var rows []svgplot.Strip
	dt := newTable("queue", "side", "from (s)", "to (s)", "class")
	classNames := []string{"short", "long", "both"}
	for _, q := range qs[:min(len(qs), topQueues)] {
		for side, pts := range [][]diff.ThinkPoint{q.RealSeries, q.PredSeries} {
			label := qname(q) + [2]string{" real", " pred"}[side]
			st := svgplot.Strip{Label: label}
			bins := classStrip(pts, end)
			for b := 0; b < len(bins); {
				e := b
				for e < len(bins) && bins[e] == bins[b] {
					e++
				}
				if bins[b] >= 0 {
					x0, x1 := float64(b)*float64(end)/classBins/1e9, float64(e)*float64(end)/classBins/1e9
					st.Segments = append(st.Segments, svgplot.Segment{X0: x0, X1: x1, Colour: []int{2, 1, 4}[bins[b]]})
					dt.add(qname(q), []string{"real", "predicted"}[side], f(x0, 4), f(x1, 4), classNames[bins[b]])
				}
				b = e
			}
			rows = append(rows, st)
		}
	}
	if len(rows) > 0 {
		r.figure(&Chart{Name: "think-time", Title: "Think-time class over time",
			Caption: fmt.Sprintf("Each sync queue's think-time class after each of its request insertions, real row above predicted row, in %d time bins; the %d queues with the most requests.", classBins, min(len(qs), topQueues)),
			plot: &svgplot.Strips{Title: "Think-time class per sync queue", X: svgplot.Axis{Label: "time since the trace's origin (s)", FromZero: true, Tight: true}, Rows: rows,
				Legend: []svgplot.LegendItem{{Name: "short think time", Colour: 2, Box: true}, {Name: "long think time", Colour: 1, Box: true}, {Name: "both within the bin", Colour: 4, Box: true}}},
			data: dt})
	}
	t := newTable("queue", "real requests", "predicted requests", "real short %", "predicted short %", "real flips", "predicted flips", "logged flips (real/pred)", "final mean real (ms)", "final mean pred (ms)", "agreement")
	for _, q := range qs[:min(len(qs), queueRows)] {
		t.add(qname(q), strconv.Itoa(q.RealRequests), strconv.Itoa(q.PredRequests), f(100*q.RealShortFraction, 1), f(100*q.PredShortFraction, 1),
			strconv.Itoa(q.RealFlips), strconv.Itoa(q.PredFlips), fmt.Sprintf("%d / %d", q.RealLoggedFlips, q.PredLoggedFlips), f(1e3*q.RealFinalMean, 3), f(1e3*q.PredFinalMean, 3), pct(q.Agreement))
	}
	if len(qs) > queueRows {
		r.p("The %d queues with the most requests of %d.", queueRows, len(qs))
	}
	r.table(t)

	// Merges over time.
	m := &res.Merges
	r.body.WriteString("<h3>Merges</h3>\n")
	r.p("Request merges (bios merged into a request): back %d real / %d predicted, front %d / %d. Scheduler queue merges: %d real / %d predicted; scheduled (BFQ \"scheduling merge\"): %d / %d; first shared queue: real %s, predicted %s.",
		m.RealBack, m.PredBack, m.RealFront, m.PredFront, m.RealQueueMerges, m.PredQueueMerges, m.RealScheduledMerges, m.PredScheduledMerges, secOrNone(m.RealSharedFirst), secOrNone(m.PredSharedFirst))
	win := chartWindow(end, lenBios(res.RealSide))
	nw := int(end/win) + 1
	x := windowCentres(win, nw)
	reqMerges := func(s *diff.Side) []float64 {
		out := make([]float64, nw)
		if s == nil {
			return out
		}
		for i := range s.NumBios() {
			bv := s.BioAt(i)
			b := &bv
			if b.Merge != trace.MergeNone && b.Queue.Valid() && b.Queue >= 0 {
				out[min(int(int64(b.Queue)/win), nw-1)]++
			}
		}
		return out
	}
	qMerges := func(l []diff.QueueMerge) []float64 {
		out := make([]float64, nw)
		for _, q := range l {
			if q.Time.Valid() && q.Time >= 0 {
				out[min(int(int64(q.Time)/win), nw-1)]++
			}
		}
		return out
	}
	series := []svgplot.Series{
		{Name: "request merges real", Colour: 0, X: x, Y: reqMerges(res.RealSide)},
		{Name: "request merges predicted", Colour: 0, Dashed: true, X: x, Y: reqMerges(res.PredSide)},
		{Name: "queue merges real", Colour: 3, X: x, Y: qMerges(m.RealList)},
		{Name: "queue merges predicted", Colour: 3, Dashed: true, X: x, Y: qMerges(m.PredList)},
	}
	winLabel := strings.TrimSuffix(fmt.Sprintf("%g", float64(win)/1e6), ".0") + " ms"
	caption := fmt.Sprintf("Bios merged into requests (back or front, counted at the bio's queue time) and scheduler queue merges, per %s window.", winLabel)
	if m.RealBack+m.RealFront+m.PredBack+m.PredFront+m.RealQueueMerges+m.PredQueueMerges == 0 {
		caption += " Neither side merged anything."
	}
	r.figure(&Chart{Name: "merges", Title: "Merges over time",
		Caption: caption,
		plot: &svgplot.LineChart{Title: "Merges per " + winLabel + " window", X: svgplot.Axis{Label: "time since the trace's origin (s)", FromZero: true, Tight: true},
			Y: svgplot.Axis{Label: "merges per window", FromZero: true}, Series: series},
		data: timeSeriesTable("time (s)", x, 4, series, 0)})
	if len(m.Processes) > 0 {
		pt := newTable("pid", "back", "front", "predicted back", "predicted front")
		ps := slices.Clone(m.Processes)
		slices.SortStableFunc(ps, func(a, b diff.ProcessMerges) int {
			return cmp.Compare(b.RealBack+b.RealFront+b.PredBack+b.PredFront, a.RealBack+a.RealFront+a.PredBack+a.PredFront)
		})
		for _, p := range ps[:min(len(ps), processRows)] {
			name := strconv.FormatUint(uint64(p.PID), 10)
			if c := comm[p.PID]; c != "" {
				name += " " + c
			}
			pt.add(name, strconv.Itoa(p.RealBack), strconv.Itoa(p.RealFront), strconv.Itoa(p.PredBack), strconv.Itoa(p.PredFront))
		}
		r.table(pt)
	}
	r.endSection()
}

func secOrNone(t trace.Time) string {
	if !t.Valid() {
		return "none"
	}
	return fmt.Sprintf("%.6f s", t.Seconds())
}
