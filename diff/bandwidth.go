package diff

import (
	"math"
	"slices"
)

const mib = 1 << 20

// Cgroup compares one cgroup's bandwidth on the two sides. Bytes count
// toward the window and the side in which their bio completed.
//
// The headline figures (RealMiBps, PredMiBps, RealShare, PredShare, IOPS,
// latency) are measured over each side's contention window, the time in
// which every compared cgroup had I/O queued or in flight (see window.go):
// what each cgroup received while the cgroups competed. The *Span figures
// are measured over each cgroup's own active span on each side, from its
// first bio's Q to its last bio's C; in a closed-loop replay a favoured
// cgroup finishes early and the others then have the device to themselves,
// which the span figures mix in.
type Cgroup struct {
	ID     uint64 `json:"id"`
	Path   string `json:"path"`
	Weight int    `json:"weight"` // Options.Weights[ID], 0 when unknown
	// Compared says the cgroup is one of those whose overlap defines the
	// contention window.
	Compared bool `json:"compared"`

	RealMiBps      float64 `json:"real_mib_per_s"`      // bytes completed in the real contention window / its length
	PredMiBps      float64 `json:"predicted_mib_per_s"` // the same on the predicted side
	RealShare      float64 `json:"real_share"`          // the cgroup's bytes / all bytes completed in the real window, 0..1
	PredShare      float64 `json:"predicted_share"`     // the same on the predicted side
	RealIOPS       float64 `json:"real_iops"`           // bios completed in the real window / its length
	PredIOPS       float64 `json:"predicted_iops"`
	RealP50        float64 `json:"real_p50_seconds"` // Q2C of the cgroup's bios completed in the real window, s
	PredP50        float64 `json:"predicted_p50_seconds"`
	RealP99        float64 `json:"real_p99_seconds"`
	PredP99        float64 `json:"predicted_p99_seconds"`
	ShareError     float64 `json:"share_error"`     // PredShare - RealShare
	BandwidthError float64 `json:"bandwidth_error"` // (PredMiBps - RealMiBps) / RealMiBps; 0 when RealMiBps is 0

	RealMiBpsSpan float64 `json:"real_mib_per_s_span"`      // bytes / the cgroup's active span on the real side
	PredMiBpsSpan float64 `json:"predicted_mib_per_s_span"` // bytes / the cgroup's active span on the predicted side
	RealShareSpan float64 `json:"real_share_span"`          // RealMiBpsSpan / the sum of RealMiBpsSpan over cgroups
	PredShareSpan float64 `json:"predicted_share_span"`     // PredMiBpsSpan / the sum of PredMiBpsSpan over cgroups
	// Slowdown = RealMiBps / PredMiBps: how much longer the prediction takes
	// to move the cgroup's bytes than the kernel did (>1: model too slow);
	// 0 when either side moved nothing.
	Slowdown float64 `json:"slowdown"`
	// WindowError is the mean over windows of |predicted - real| MiB/s.
	WindowError float64 `json:"window_error_mib_per_s"`
	// KS is the two-sample Kolmogorov-Smirnov distance between the real and
	// predicted per-window MiB/s distributions (0..1).
	KS float64 `json:"ks"`

	RealBytes uint64 `json:"real_bytes"`
	PredBytes uint64 `json:"predicted_bytes"`

	// Series, one value per window of Bandwidth.Window.
	RealSeries      []float64 `json:"real_series_mib_per_s"`
	PredSeries      []float64 `json:"predicted_series_mib_per_s"`
	RealShareSeries []float64 `json:"real_share_series"`
	PredShareSeries []float64 `json:"predicted_share_series"`
}

// Bandwidth holds the per-cgroup comparison's figures over all cgroups.
type Bandwidth struct {
	WindowSeconds float64 `json:"window_seconds"` // width of each window, s: Options.Window, widened to keep within MaxWindows
	Windows       int     `json:"windows"`        // windows in each series, from time 0
	// WorstShareError is the largest |ShareError| over cgroups, and
	// WorstCgroup the id of the first cgroup reaching it.
	WorstShareError float64 `json:"worst_share_error"`
	WorstCgroup     uint64  `json:"worst_cgroup"`
	// Fairness is MQSim's fairness over cgroups applied to the model:
	// min Slowdown / max Slowdown over cgroups with bytes on both sides
	// (1 when the model errs by the same factor for every cgroup; 1 with
	// fewer than two such cgroups).
	Fairness float64 `json:"fairness"`

	// WindowReal and WindowPred are the lengths of the two sides' cgroup
	// contention windows, s.
	WindowReal float64 `json:"window_real"`
	WindowPred float64 `json:"window_predicted"`
	// WindowFallback says a side's compared cgroups or processes never
	// overlapped: that side's window is then its whole active span (first
	// Q to last C over every bio).
	WindowFallback bool `json:"window_fallback"`
	// ComparedCgroups lists the ids whose overlap defines the window.
	ComparedCgroups []uint64 `json:"compared_cgroups"`
	// ProcessWindowReal and ProcessWindowPred are the process contention
	// windows (every compared process busy), s; ComparedProcesses their pids.
	ProcessWindowReal float64  `json:"process_window_real"`
	ProcessWindowPred float64  `json:"process_window_predicted"`
	ComparedProcesses []uint64 `json:"compared_processes"`
	// Real and Pred are the whole device's figures over the cgroup window.
	Real WindowFigures `json:"real"`
	Pred WindowFigures `json:"predicted"`
}

// compareBandwidth builds the Cgroup list (sorted by id) and the figures.
func compareBandwidth(real, pred *Side, opts Options) ([]Cgroup, Bandwidth) {
	rl := real.prepared().last
	pl := pred.prepared().last
	end := max(rl, pl, 0)
	win := windowFor(int64(opts.Window), int64(end))
	nw := int(int64(end)/win) + 1
	bw := Bandwidth{WindowSeconds: float64(win) / 1e9, Windows: nw, Fairness: 1}
	cw := contentionOf(real, pred, false, opts.Weights, win)
	bw.WindowReal, bw.WindowPred = cw.real.seconds(), cw.pred.seconds()
	bw.ComparedCgroups = append([]uint64{}, cw.keys...)
	bw.WindowFallback = cw.fallback
	bw.Real, bw.Pred = cw.real.figures(&cw.real.total), cw.pred.figures(&cw.pred.total)

	type acc struct {
		bytes       [2]uint64
		win         [2][]uint64
		first, last [2]int64 // active span: first Q, last C (ns)
	}
	cgs := map[uint64]*acc{}
	var tot [2]uint64
	totWin := [2][]uint64{make([]uint64, nw), make([]uint64, nw)}
	newAcc := func() *acc {
		return &acc{win: [2][]uint64{make([]uint64, nw), make([]uint64, nw)},
			first: [2]int64{math.MaxInt64, math.MaxInt64}, last: [2]int64{math.MinInt64, math.MinInt64}}
	}
	skip := [2]map[int]bool{unfinishedBios(real, pred), unfinishedBios(pred, real)}
	streamed := real.stream.usable(win) && pred.stream.usable(win) && skip[0] == nil && skip[1] == nil
	for side, s := range []*Side{real, pred} {
		if !streamed {
			break
		}
		// The figures accumulated as the bios arrived (stream.go).
		copy(totWin[side], s.stream.total)
		for cg, k := range s.stream.cgroups {
			if k.last == math.MinInt64 { // busy only before time 0
				continue
			}
			a := cgs[cg]
			if a == nil {
				a = newAcc()
				cgs[cg] = a
			}
			a.first[side], a.last[side], a.bytes[side] = k.first, k.last, k.bytes
			copy(a.win[side], k.win)
			tot[side] += k.bytes
		}
	}
	for side, s := range []*Side{real, pred} {
		if streamed {
			break
		}
		for i := range s.NumBios() {
			done := s.bioDone(i)
			if !done.Valid() || done < 0 || skip[side][i] {
				continue
			}
			cg := s.bioCgroup(i)
			a := cgs[cg]
			if a == nil {
				a = newAcc()
				cgs[cg] = a
			}
			if q := s.bioQueue(i); q.Valid() {
				a.first[side] = min(a.first[side], int64(q))
			}
			a.last[side] = max(a.last[side], int64(done))
			w := int(int64(done) / win)
			bytes := uint64(s.bioBytes(i))
			a.bytes[side] += bytes
			a.win[side][w] += bytes
			tot[side] += bytes
			totWin[side][w] += bytes
		}
	}
	ids := make([]uint64, 0, len(cgs))
	for id := range cgs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]Cgroup, 0, len(ids))
	if len(ids) > 0 {
		bw.WorstCgroup = ids[0]
	}
	// Bandwidth over each cgroup's active span, and the sums for the shares.
	rate := func(a *acc, side int) float64 {
		if a.bytes[side] == 0 || a.last[side] <= a.first[side] {
			return 0
		}
		return float64(a.bytes[side]) / mib / (float64(a.last[side]-a.first[side]) / 1e9)
	}
	var sum [2]float64
	for _, id := range ids {
		sum[0] += rate(cgs[id], 0)
		sum[1] += rate(cgs[id], 1)
	}
	minSlow, maxSlow := math.Inf(1), math.Inf(-1)
	ws := float64(win) / 1e9
	for _, id := range ids {
		a := cgs[id]
		c := Cgroup{ID: id, Path: cgroupPath(id, real, pred), Weight: opts.Weights[id], RealBytes: a.bytes[0], PredBytes: a.bytes[1]}
		c.RealMiBpsSpan, c.PredMiBpsSpan = rate(a, 0), rate(a, 1)
		if sum[0] > 0 {
			c.RealShareSpan = c.RealMiBpsSpan / sum[0]
		}
		if sum[1] > 0 {
			c.PredShareSpan = c.PredMiBpsSpan / sum[1]
		}
		c.Compared = slices.Contains(cw.keys, id)
		rf, pf := cw.real.figures(cw.real.keys[id]), cw.pred.figures(cw.pred.keys[id])
		c.RealMiBps, c.RealShare, c.RealIOPS, c.RealP50, c.RealP99 = rf.MiBps, rf.Share, rf.IOPS, rf.P50, rf.P99
		c.PredMiBps, c.PredShare, c.PredIOPS, c.PredP50, c.PredP99 = pf.MiBps, pf.Share, pf.IOPS, pf.P50, pf.P99
		c.ShareError = c.PredShare - c.RealShare
		if c.RealMiBps > 0 {
			c.BandwidthError = (c.PredMiBps - c.RealMiBps) / c.RealMiBps
		}
		if c.RealMiBps > 0 && c.PredMiBps > 0 {
			c.Slowdown = c.RealMiBps / c.PredMiBps
			minSlow = math.Min(minSlow, c.Slowdown)
			maxSlow = math.Max(maxSlow, c.Slowdown)
		}
		c.RealSeries = make([]float64, nw)
		c.PredSeries = make([]float64, nw)
		c.RealShareSeries = make([]float64, nw)
		c.PredShareSeries = make([]float64, nw)
		var errSum float64
		for w := 0; w < nw; w++ {
			c.RealSeries[w] = float64(a.win[0][w]) / mib / ws
			c.PredSeries[w] = float64(a.win[1][w]) / mib / ws
			if totWin[0][w] > 0 {
				c.RealShareSeries[w] = float64(a.win[0][w]) / float64(totWin[0][w])
			}
			if totWin[1][w] > 0 {
				c.PredShareSeries[w] = float64(a.win[1][w]) / float64(totWin[1][w])
			}
			errSum += math.Abs(c.PredSeries[w] - c.RealSeries[w])
		}
		c.WindowError = errSum / float64(nw)
		// KS over each side's own active windows (up to its last completion).
		c.KS = ksDistance(c.RealSeries[:int(int64(max(rl, 0))/win)+1], c.PredSeries[:int(int64(max(pl, 0))/win)+1])
		if math.Abs(c.ShareError) > bw.WorstShareError {
			bw.WorstShareError = math.Abs(c.ShareError)
			bw.WorstCgroup = id
		}
		out = append(out, c)
	}
	if maxSlow > 0 && !math.IsInf(minSlow, 1) {
		bw.Fairness = minSlow / maxSlow
	}
	return out, bw
}

// MaxWindows bounds the windows of each bandwidth series: a capture longer
// than MaxWindows windows of Options.Window is measured in wider windows
// (a whole multiple of Options.Window; Bandwidth.WindowSeconds says which),
// so the series' memory is bounded whatever the span (about 8 bytes per
// window and series, six series per cgroup).
const MaxWindows = 1 << 16

// windowFor returns the window width (ns) for a span ending at end (ns):
// win, or the smallest multiple of it that covers end in MaxWindows
// windows.
func windowFor(win, end int64) int64 {
	if end/win < MaxWindows {
		return win
	}
	k := end/win/MaxWindows + 1
	return k * win
}

// ksDistance returns the two-sample Kolmogorov-Smirnov statistic
// sup_x |F_a(x) - F_b(x)| of two samples; 0 when either is empty.
func ksDistance(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	x := slices.Clone(a)
	y := slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	var d float64
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		v := math.Min(x[i], y[j])
		for i < len(x) && x[i] <= v {
			i++
		}
		for j < len(y) && y[j] <= v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}
