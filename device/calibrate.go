package device

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// CalibrateOptions are the settings of Calibrate. The zero value chooses
// the kind from the data with the defaults below.
type CalibrateOptions struct {
	// Kind forces the model kind; KindAuto keeps the kind with the smaller
	// cross-validated demerit.
	Kind Kind
	// Seed seeds the devices that score the candidates.
	Seed uint64
	// Quantiles is the resolution of the residual tables: they hold
	// at most Quantiles+1 entries, placed where the distribution changes fastest (default 1024, at least 16).
	Quantiles int
	// SeqWindow is the largest forward gap, in sectors, that a rotational
	// model serves on its sequential path (default 128, 64 KiB).
	SeqWindow uint64
	// MinRequests is the fewest usable requests Calibrate accepts (default 40).
	MinRequests int
	// NoBatching fits a non-rotational model without completion batching
	// even when the capture's completions come in bunches.
	NoBatching bool
	// NoAhead keeps the bytes-ahead term (OpTiming.Ahead) out of a
	// non-rotational model: step 5 does not consider it.
	NoAhead bool
	// Flat fits a non-rotational model whose latency does not depend on
	// the load: no saturation and no bytes-ahead term (the residual
	// tables carry the capture's spread).
	Flat bool
	// NoSequential keeps the sequential-stream factor (OpTiming.Seq) out
	// of a non-rotational model: step 5 does not consider it.
	NoSequential bool

	ahead bool // fit the bytes-ahead term where the samples allow (step 5)
	// behind: the wait behind large requests (NonRotational.Behind at
	// behindMin), the classes fitted without the requests that waited
	// (step 5).
	behind bool
	// Behind lets step 5 fit the wait behind large requests
	// (NonRotational.Behind) for a non-rotational model whose capture
	// shows its requests served in order (inOrderBehind). Off by
	// default: see the measurements in the commit that added it.
	Behind bool
	seq    bool // fit the sequential-stream factors where the samples allow (step 5)
	// NoCurves keeps the averaged load and the depth curves
	// (NonRotational.DepthWindow and Curves) out of a non-rotational
	// model: step 5 does not consider them.
	NoCurves bool
	// curves: fit the averaged load over depthWindow and the depth
	// curves (step 5); the samples' avg must be set for depthWindow.
	curves      bool
	depthWindow time.Duration
	// HeldDraws fits the held residual draws (OpTiming.Hold) on the
	// chosen non-rotational model (step 7); off, every request draws its
	// own. Off by default: on bench/fidelity (seed 1) it brings sync's
	// bandwidth in recorded-fs/fs-bfq-untar from -34.6 % to -12.2 % and
	// in fs-mqdl-untar from -17.5 % to -5.8 %, and raw-sweep-none within
	// target at seeds 1-3, but raises the D2C demerit of fs-bfq-nested
	// from 10.2 % to 22.6 % (out of target) and of fs-mqdl-pgbench from
	// 45 % to 147 %, and puts the fs-mqdl-untar -> BFQ what-if's sync at
	// 0.61 of the real run's (0.68 without).
	HeldDraws bool
	// NotRotational says the capture's device is known not to be
	// rotational (a rig's manifest with rotational=0): Calibrate then
	// considers the non-rotational kind only, unless Kind forces one.
	NotRotational bool
	// CVSamples bounds the cross-validation (step 2): on a capture with
	// more samples, each candidate is fitted and scored on a window of
	// this many consecutive samples (by issue time) around the capture's
	// middle instead of all of it (default 1<<18; negative: no bound).
	CVSamples int
	// FitSamples bounds the fit (steps 3 and 4): on a capture with more
	// samples, the model is fitted, scored and its completion gaps
	// measured on a window of this many consecutive samples (by issue
	// time) around the capture's middle, which holds the cross-validation's
	// window, instead of all of it, so that a calibration costs about the
	// same on any capture (default 1<<19; negative: no bound).
	FitSamples int
}

// Fit reports how a model was chosen and how well it reproduces the
// capture. Demerits are DiskSim's (see Demerit) over D2C, comparing the
// capture's D2C with the model's when each request is issued at its real
// D time with the real set of requests on the device.
type Fit struct {
	Kind   Kind `json:"kind"`   // kind of Model
	Forced bool `json:"forced"` // the kind was forced by CalibrateOptions.Kind

	N int `json:"n"` // usable requests (issued and completed in the capture)
	// Fitted is the samples of the window the model was fitted and scored
	// on when the capture has more than CalibrateOptions.FitSamples (0:
	// all N). Demerit, ModelMeanD2C and CompletionGaps are then the
	// window's.
	Fitted  int           `json:"fitted,omitempty"`
	Skipped int           `json:"skipped"`     // requests on the device without both a D and a C, or in flight at the start
	MeanD2C time.Duration `json:"mean_d2c_ns"` // mean real D2C
	// ModelMeanD2C is the mean modelled D2C of the same requests (the
	// model fitted on all of the capture, each request issued at its real
	// D time): a model whose mean is off paces closed-loop processes
	// faster or slower than the device did.
	ModelMeanD2C time.Duration `json:"model_mean_d2c_ns"`

	// Demerit compares the capture with the model fitted on all of it (on
	// the window of Fitted samples).
	Demerit         time.Duration `json:"demerit_ns"`
	DemeritFraction float64       `json:"demerit_fraction"` // Demerit / MeanD2C

	// CV is the cross-validation of the chosen kind: fitted on the first
	// half of the capture by time, scored on the second.
	CV Score `json:"cv"`
	// Candidates holds the cross-validation of every kind considered.
	Candidates []Score `json:"candidates"`
	// RuledOut says why a kind was not considered ("" when none was left
	// out but by CalibrateOptions.Kind).
	RuledOut string `json:"ruled_out,omitempty"`

	// SeekCorrelation is Spearman's rank correlation between seek
	// distance and service time (a rotational device shows a clearly
	// positive one), over at most 1<<18 requests spread evenly over the
	// capture; NaN when undefined.
	SeekCorrelation float64 `json:"seek_correlation"`

	// CompletionGaps compares the gaps between consecutive completions of
	// the capture with the model's, every request issued at its real D
	// time (the model fitted on all of the capture): how well it
	// reproduces completion bunching.
	CompletionGaps GapProfile `json:"completion_gaps"`
	// BatchingRejected: completion batching was fitted but cost the D2C
	// distribution more than MaxBatchingCost, so the model has none.
	BatchingRejected bool `json:"batching_rejected"`
	// SizeBands, when the chosen model's classes had size bands to fit
	// (OpTiming.Sizes), says whether they were kept: only where they
	// lower the in-sample demerit (Demerit and DemeritFraction are then
	// the model's with them; the cross-validated figures are without).
	SizeBands *SizeBandsFit `json:"size_bands,omitempty"`
	// Load is the measure of the load on the device the non-rotational
	// model times requests by (step 5): "requests" (the count on the
	// device: saturation factors), "requests, peaked" (the depth curves
	// over the larger of the count and its decaying peak:
	// NonRotational.DepthWindow), "bytes ahead" (OpTiming.Ahead) or
	// "none" (latency independent of the load).
	Load string `json:"load,omitempty"`

	Model *Model `json:"model"`
}

// Score is the demerit of a kind of model on requests it was not fitted on.
type Score struct {
	Kind            Kind          `json:"kind"`
	Split           trace.Time    `json:"split_ns"`    // requests issued before it trained the model
	Train           int           `json:"train"`       // requests fitted
	Test            int           `json:"test"`        // requests scored
	MeanD2C         time.Duration `json:"mean_d2c_ns"` // mean real D2C of the scored requests
	Demerit         time.Duration `json:"demerit_ns"`
	DemeritFraction float64       `json:"demerit_fraction"` // Demerit / MeanD2C
	// Halves is the demerit between the real D2C of the trained and the
	// scored requests: how far apart the capture's own halves are, a floor
	// no model can be expected to beat on small or drifting captures.
	Halves         time.Duration `json:"halves_ns"`
	HalvesFraction float64       `json:"halves_fraction"` // Halves / MeanD2C
}

// MarshalJSON writes NaN correlations as null.
func (f Fit) MarshalJSON() ([]byte, error) {
	type plain Fit
	var corr *float64
	if !math.IsNaN(f.SeekCorrelation) {
		corr = &f.SeekCorrelation
	}
	return json.Marshal(struct {
		plain
		SeekCorrelation *float64 `json:"seek_correlation"`
	}{plain(f), corr})
}

// String summarises the fit on a few lines: kind, parameters, demerits.
func (f *Fit) String() string {
	var b strings.Builder
	how := "chosen by cross-validated demerit"
	for _, c := range f.Candidates {
		if c.Kind != f.Kind && c.DemeritFraction < f.CV.DemeritFraction {
			how = "the lowest cross-validated demerit among the kinds the capture allows"
		}
	}
	if f.Forced {
		how = "forced"
	}
	window := ""
	if f.Fitted > 0 {
		window = fmt.Sprintf(", fitted on the middle %d", f.Fitted)
	}
	fmt.Fprintf(&b, "model %s (%s), n=%d (skipped %d%s), mean D2C %v (model %v, %+.1f%%)\n",
		f.Kind, how, f.N, f.Skipped, window, f.MeanD2C, f.ModelMeanD2C, 100*(float64(f.ModelMeanD2C)/max(float64(f.MeanD2C), 1)-1))
	fmt.Fprintf(&b, "demerit %v (%.1f%% of mean), cross-validated %v (%.1f%%; train %d, test %d; the halves differ by %.1f%%)\n",
		f.Demerit, 100*f.DemeritFraction, f.CV.Demerit, 100*f.CV.DemeritFraction, f.CV.Train, f.CV.Test, 100*f.CV.HalvesFraction)
	for _, c := range f.Candidates {
		note := ""
		if !f.Forced && c.Kind != f.Kind && c.DemeritFraction < f.CV.DemeritFraction && c.Kind == KindRotational && f.SeekCorrelation < MinSeekCorrelation {
			// Step 3's rule, said where its outcome would look wrong.
			note = fmt.Sprintf(", lower but ruled out: service times do not grow with seek distance (rank correlation %.3f < %.2f)", f.SeekCorrelation, MinSeekCorrelation)
		}
		fmt.Fprintf(&b, "  candidate %-13s cross-validated demerit %v (%.1f%%)%s\n", c.Kind, c.Demerit, 100*c.DemeritFraction, note)
	}
	if f.RuledOut != "" {
		fmt.Fprintf(&b, "  not considered: %s\n", f.RuledOut)
	}
	fmt.Fprintf(&b, "seek/service rank correlation %.3f\n", f.SeekCorrelation)
	if f.Load != "" {
		fmt.Fprintf(&b, "load measured by: %s\n", f.Load)
	}
	if f.BatchingRejected {
		fmt.Fprintf(&b, "completion batching fitted but rejected: it cost the D2C distribution more than %.0f%% of the mean\n", 100*MaxBatchingCost)
	}
	if sb := f.SizeBands; sb != nil {
		verdict := "kept"
		if !sb.Kept {
			verdict = "rejected"
		}
		fmt.Fprintf(&b, "size bands fitted, %s: in-sample demerit %.1f%% with them, %.1f%% without; by class and size %.1f%% with, %.1f%% without", verdict, 100*sb.Demerit, 100*sb.Without, 100*sb.BySize, 100*sb.BySizeWithout)
		if sb.BySizeRule {
			fmt.Fprintf(&b, "; held out, by class and size, %.1f%% with, %.1f%% without", 100*sb.HeldOut, 100*sb.HeldOutWithout)
		}
		b.WriteString("\n")
	}
	if g := f.CompletionGaps; len(g.Real) > 0 {
		fmt.Fprintf(&b, "completion gaps under")
		for i, th := range g.UnderNs {
			fmt.Fprintf(&b, " %v: %.3f/%.3f", th, g.Real[i], g.Model[i])
		}
		fmt.Fprintf(&b, " (capture/model)\n")
	}
	if m := f.Model; m != nil {
		switch m.Kind {
		case KindNonRotational:
			n := m.NonRotational
			fmt.Fprintf(&b, "parallelism %d, saturation slope %.4f per request\n", n.Parallelism, n.Slope)
			if n.Behind > 0 {
				fmt.Fprintf(&b, "behind: a request under %d KiB waits %.2f of the time left to the large one issued last ahead of it\n", n.Behind>>10, n.BehindScale)
			}
			if n.SaturatedBelow > 1 {
				fmt.Fprintf(&b, "saturated below %d requests on the device (as many or more for 9 tenths of the busy time): latency scales with the count there\n", n.SaturatedBelow)
			}
			if len(n.Factors) > 0 {
				fmt.Fprintf(&b, "measured in-flight factors (k=1..%d): %.3f\n", len(n.Factors), n.Factors)
			}
			if n.DepthWindow > 0 {
				fmt.Fprintf(&b, "load: the larger of the requests on the device and their peak decaying over %v\n", n.DepthWindow)
			}
			for _, c := range n.Curves {
				loc := "random"
				if c.Sequential {
					loc = "seq"
				}
				fmt.Fprintf(&b, "  depth curve %-5s %-6s %7d bytes: %d loads from %d to %d, factor %.3f to %.3f (n=%d)\n",
					c.Op, loc, c.Bytes, len(c.Depths), c.Depths[0], c.Depths[len(c.Depths)-1], c.Factors[0], c.Factors[len(c.Factors)-1], c.N)
			}
			if bt := n.Batching; bt != nil {
				fmt.Fprintf(&b, "batching: %d bunches (gaps under %v), %.1f%% of requests joined one; join lead %v, drain %v per completion; the other parameters time the bunches' openers\n",
					bt.Bunches, bt.BunchGap, 100*bt.JoinedFraction, bt.JoinLead, bt.Drain)
			}
			for o := range numOps {
				if t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]; t != nil {
					exp := ""
					if t.Ahead > 0 {
						exp = fmt.Sprintf(" + %.4g ns/byte on the device ahead", t.Ahead)
					}
					if t.SatExp > 0 {
						exp += fmt.Sprintf(", in-flight factor to the power %.2f", t.SatExp)
					}
					if t.Seq > 0 {
						exp += fmt.Sprintf(", times %.3g continuing a stream", t.Seq)
					}
					hold := ""
					if t.Hold > 0 {
						hold = fmt.Sprintf(", each draw held %v", t.Hold)
					}
					fmt.Fprintf(&b, "  %-5s base %v + %.4g ns/byte%s (n=%d), residual p1 %.3f p50 %.3f p99 %.3f%s\n",
						Op(o), t.Base, t.PerByte, exp, t.N, t.Residual.At(0.01), t.Residual.At(0.5), t.Residual.At(0.99), hold)
					for _, sb := range t.Sizes {
						fmt.Fprintf(&b, "        %d bytes: %.3g times the line (n=%d), residual p1 %.3f p50 %.3f p99 %.3f\n",
							sb.Bytes, sb.Factor, sb.N, sb.Residual.At(0.01), sb.Residual.At(0.5), sb.Residual.At(0.99))
					}
				}
			}
		case KindRotational:
			r := m.Rotational
			fmt.Fprintf(&b, "overhead %v, seek %.4g ns*sqrt(d) below %d sectors, %v + %.4g ns/sector above\n",
				r.Overhead, r.SeekSqrt, r.SeekBoundary, r.SeekLongBase, r.SeekLongPerSector)
			fmt.Fprintf(&b, "revolution %v, transfer %.4g ns/byte, write %+v, sequential (<= %d sectors) %v (n=%d of %d)\n",
				r.Revolution, r.PerByte, r.Write, r.SeqWindow, r.SeqBase, r.NSeq, r.N)
		}
	}
	return b.String()
}

// MaxBatchingCost is how much completion batching may add to the in-sample
// D2C demerit, as a fraction of the mean D2C, beyond twice the demerit of
// the model without it, before Calibrate drops it (step 4).
const MaxBatchingCost = 0.15

// MinSeekCorrelation is the least rank correlation between seek distance
// and service time for which Calibrate picks a rotational model by itself.
const MinSeekCorrelation = 0.3

// ErrTooFew is returned when a capture has too few requests to fit.
var ErrTooFew = errors.New("too few issued and completed requests to calibrate")

// Calibrate fits a device model to the requests of a capture (as the
// trace package rebuilds them; any order).
//
//  1. Requests with both a D and a C (and a D inside the capture) are the
//     samples; all requests on the device count towards the number in
//     flight at each D.
//  2. The samples are split at the midpoint of their D times. Each kind
//     considered is fitted on the first half and scored on the second: the
//     capture is replayed through the model (every request issued at its
//     real D, completions at their real C) and the modelled D2C of the
//     second half compared with the real one by Demerit. The kinds
//     considered are both, unless opts.Kind forces one or the capture rules
//     the rotational one out: opts.NotRotational, or a seek correlation
//     below MinSeekCorrelation (step 3 would never choose it). On a capture
//     of more than opts.CVSamples samples, the split and the scores are
//     those of a window of that many consecutive samples around the
//     middle (the requests issued within it), so that the cross-validation
//     costs the same on any capture.
//  3. The kind with the smaller cross-validated demerit is refitted on all
//     samples and scored on all of them (on a capture of more than
//     opts.FitSamples samples, on the window of that many consecutive
//     samples around the middle, the requests issued within it, as for
//     the cross-validation; Fit.Fitted); rotational only when service
//     times also grow with seek distance (Fit.SeekCorrelation at least
//     MinSeekCorrelation), so that a loop or virtual device that a FIFO
//     server happens to mimic is not called a disk.
//  4. Completion batching, when fitted, is kept only if the model's
//     in-sample demerit stays within max(2x, +MaxBatchingCost) of the
//     same model without it (Fit.BatchingRejected otherwise).
//  5. The measure of the load (Fit.Load): steps 2-4 fit the count of
//     requests on the device (the saturation factors); the model with
//     the bytes ahead of each request instead (OpTiming.Ahead, where the
//     capture shows them varying; not with opts.NoAhead), then the one
//     with no load dependence at all (opts.Flat; only when fewer than
//     maxLoaded of the samples saw another request on the device),
//     replace it when both their in-sample and their cross-validated
//     demerits are lower. The count is the wrong measure where requests
//     of very different sizes share the device (a 4 KiB write behind a
//     1.25 MiB read waits for the read), and a scheduler that serves one
//     queue at a time leaves too few loaded requests to fit any
//     dependence a replay could extrapolate (in recorded-fs/
//     fs-bfq-fsync-vs-seqread 14 writes of 6425 had a read ahead).
//     Where the capture shows the device at low depths (lowDepth below
//     minSaturatedBelow) and loaded (not unloaded), the depth curves
//     over the peaked load (NonRotational.Curves and DepthWindow, the
//     capture's mean D2C; no batching) are considered last, by the same
//     rule but for the in-sample demerit, which they must bring under
//     curveMargin of the model's, and only when some size band spans
//     depths minCurveSpan apart (curvesSpan; not with opts.NoCurves).
//     With opts.Behind, on the model kept, the wait behind large
//     requests (NonRotational.Behind at behindMin, its scale the best
//     in-sample of behindScales) replaces it where minAheadGroup
//     requests were issued behind a large one and minInOrder of them
//     completed with or after it (inOrderBehind).
//     Then, on the model kept, the sequential-stream factors (locality,
//     OpTiming.Seq; fitSeq; not with opts.NoSequential) replace it when
//     the demerit falls both pooled and split by stream (splitDemerit),
//     in-sample and cross-validated.
//  6. Where the rotational kind won step 2, the non-rotational one is put
//     through steps 3-5 as well and replaces it when its cross-validated
//     demerit, with the load measure step 5 chose, is the lower (its
//     entry in Fit.Candidates then holds that score): step 2 scores the
//     non-rotational kind by the count alone, the wrong measure for a
//     loop device that serves 4 KiB writes behind 1.25 MiB reads
//     (fs-mqdl-fsync1r100-vs-seqread: 55.6% by the count, 38.6% by the
//     bytes ahead, the rotational kind's 48.5%).
func Calibrate(reqs []trace.Request, opts CalibrateOptions) (*Model, *Fit, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	c := prepare(reqs)
	real := d2cs(c)
	sum := summary{n: len(c.samples), skipped: c.skipped, meanD2C: mean(real), seek: seekCorrelation(c.samples)}
	win := func(n int) *capture { return prepare(window(reqs, c, n)) }
	return calibrate(sum, win, func() *capture { return c }, opts)
}

// withDefaults returns opts with its zero fields set to their defaults,
// or an error for an invalid Kind.
func (opts CalibrateOptions) withDefaults() (CalibrateOptions, error) {
	if opts.Quantiles < 16 {
		opts.Quantiles = 1024
	}
	if opts.SeqWindow == 0 {
		opts.SeqWindow = 128
	}
	if opts.MinRequests <= 0 {
		opts.MinRequests = 40
	}
	if opts.Kind > KindRotational {
		return opts, fmt.Errorf("invalid device model kind %d", opts.Kind)
	}
	if opts.CVSamples == 0 {
		opts.CVSamples = 1 << 18
	}
	if opts.FitSamples == 0 {
		opts.FitSamples = 1 << 19
	}
	return opts, nil
}

// summary is what Calibrate reads of the whole capture (every other
// figure comes from a window of it, or from all of it when it is small):
// the number of samples and of skipped requests, the mean D2C (ns) and the
// seek correlation.
type summary struct {
	n, skipped int
	meanD2C    float64
	seek       float64
}

// calibrate is Calibrate's steps over a capture known by its summary, the
// middle window of n samples (win: prepared from the requests issued
// within it) and all of it (full, asked for only when a step is not
// bounded to a window). opts has its defaults.
func calibrate(sum summary, win func(n int) *capture, full func() *capture, opts CalibrateOptions) (*Model, *Fit, error) {
	if sum.n < opts.MinRequests {
		return nil, nil, fmt.Errorf("%w: %d, want %d", ErrTooFew, sum.n, opts.MinRequests)
	}
	fit := &Fit{N: sum.n, Skipped: sum.skipped, Forced: opts.Kind != KindAuto}
	fit.MeanD2C = time.Duration(math.Round(sum.meanD2C))
	fit.SeekCorrelation = sum.seek

	// Step 2: the split.
	var cv *capture
	if opts.CVSamples > 0 && sum.n > opts.CVSamples {
		if w := win(opts.CVSamples); len(w.samples) >= opts.MinRequests {
			cv = w
		}
	}
	if cv == nil {
		cv = full()
	}
	cvReal := d2cs(cv)
	split := cv.samples[0].issue + (cv.samples[len(cv.samples)-1].issue-cv.samples[0].issue)/2
	nTrain := sort.Search(len(cv.samples), func(i int) bool { return cv.samples[i].issue >= split })
	if nTrain < opts.MinRequests/2 || len(cv.samples)-nTrain < opts.MinRequests/2 {
		nTrain = len(cv.samples) / 2 // too lopsided by time: split by count
		split = cv.samples[nTrain].issue
	}
	kinds := []Kind{KindNonRotational, KindRotational}
	switch {
	case opts.Kind != KindAuto:
		kinds = []Kind{opts.Kind}
	case opts.NotRotational:
		kinds = kinds[:1]
		fit.RuledOut = "rotational: the device is known not to be rotational"
	case !(fit.SeekCorrelation >= MinSeekCorrelation):
		kinds = kinds[:1]
		fit.RuledOut = fmt.Sprintf("rotational: seek/service rank correlation %.3f, below %.1f", fit.SeekCorrelation, MinSeekCorrelation)
	}
	for _, k := range kinds {
		m := fitKind(k, cv.samples[:nTrain], opts)
		pred := cv.predict(m, opts.Seed)
		sc := Score{Kind: k, Split: split, Train: nTrain, Test: len(cv.samples) - nTrain}
		sc.MeanD2C, sc.Demerit, sc.DemeritFraction = score(cvReal[nTrain:], pred[nTrain:])
		_, sc.Halves, sc.HalvesFraction = score(cvReal[nTrain:], cvReal[:nTrain])
		fit.Candidates = append(fit.Candidates, sc)
	}
	best := fit.Candidates[0]
	for _, sc := range fit.Candidates[1:] {
		if sc.DemeritFraction < best.DemeritFraction &&
			(sc.Kind != KindRotational || fit.SeekCorrelation >= MinSeekCorrelation) {
			best = sc
		}
	}
	fit.Kind, fit.CV = best.Kind, best

	// Steps 3-5 for a kind, with the fit of best (its cross-validation).
	refine := func(best Score) (*Fit, *Model, []float64, *capture, error) {
		fit := new(*fit)
		fit.Kind, fit.CV = best.Kind, best
		// Step 3, on all samples or on the window of FitSamples.
		var c *capture
		if opts.FitSamples > 0 && sum.n > opts.FitSamples {
			if w := win(opts.FitSamples); len(w.samples) >= opts.MinRequests {
				c = w
				fit.Fitted = len(c.samples)
			}
		}
		if c == nil {
			c = full()
		}
		real := d2cs(c)
		m := fitKind(best.Kind, c.samples, opts)
		if err := m.Validate(); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("internal error: calibrated model invalid: %v", err)
		}
		pred := c.predict(m, opts.Seed)
		_, fit.Demerit, fit.DemeritFraction = score(real, pred)
		// Step 4: completion batching must earn its place. It paces closed-loop
		// processes the way a device that completes in bunches does, at some
		// cost to the D2C distribution; where that cost is large, the bunches
		// were not the device's (BFQ dispatching queues in turn completes their
		// requests in pairs), and the model without batching is kept.
		if m.Kind == KindNonRotational && m.NonRotational.Batching != nil {
			plainOpts := opts
			plainOpts.NoBatching = true
			plain := fitKind(best.Kind, c.samples, plainOpts)
			plainPred := c.predict(plain, opts.Seed)
			_, plainDem, plainFrac := score(real, plainPred)
			if fit.DemeritFraction > max(2*plainFrac, plainFrac+MaxBatchingCost) {
				m, pred, fit.Demerit, fit.DemeritFraction = plain, plainPred, plainDem, plainFrac
				fit.BatchingRejected = true
				// Cross-validate what is kept.
				cvm := fitKind(best.Kind, cv.samples[:nTrain], plainOpts)
				cvPred := cv.predict(cvm, opts.Seed)
				fit.CV.MeanD2C, fit.CV.Demerit, fit.CV.DemeritFraction = score(cvReal[nTrain:], cvPred[nTrain:])
			}
		}
		// Step 5: another measure of the load must earn its place: the bytes
		// ahead instead of the count, then no load dependence at all (flat),
		// each replacing the model where both its in-sample and its
		// cross-validated demerits are lower; then, on the model kept, the
		// sequential-stream factors (locality), by the same rule.
		if m.Kind == KindNonRotational {
			base := opts
			base.NoBatching = opts.NoBatching || fit.BatchingRejected
			var alts []CalibrateOptions
			if !opts.NoAhead {
				o := base
				o.ahead = true
				alts = append(alts, o)
			}
			if m.NonRotational.loaded() && unloaded(c.samples) {
				o := base
				o.Flat = true
				alts = append(alts, o)
			}
			if !opts.NoCurves && lowDepth(c.samples) < minSaturatedBelow && !unloaded(c.samples) {
				o := base
				o.curves, o.depthWindow = true, time.Duration(math.Round(max(sum.meanD2C, 1)))
				o.NoBatching = true // the bunches are what the averaged load reads through
				c.setDepthPeak(o.depthWindow)
				cv.setDepthPeak(o.depthWindow)
				alts = append(alts, o)
			}
			kept := base
			for _, o := range alts {
				alt := fitKind(best.Kind, c.samples, o)
				if o.ahead && !alt.NonRotational.hasAhead() {
					continue // the capture does not show the bytes ahead varying
				}
				if o.curves && !alt.NonRotational.curvesSpan() {
					continue // no band seen over a range of depths
				}
				altPred := c.predict(alt, opts.Seed)
				_, altDem, altFrac := score(real, altPred)
				margin := 1.0
				if o.curves {
					margin = curveMargin
				}
				if altFrac >= margin*fit.DemeritFraction {
					continue
				}
				cvm := fitKind(best.Kind, cv.samples[:nTrain], o)
				cvPred := cv.predict(cvm, opts.Seed)
				cvMean, cvDem, cvFrac := score(cvReal[nTrain:], cvPred[nTrain:])
				if cvFrac >= fit.CV.DemeritFraction {
					continue
				}
				m, pred, fit.Demerit, fit.DemeritFraction = alt, altPred, altDem, altFrac
				fit.CV.MeanD2C, fit.CV.Demerit, fit.CV.DemeritFraction = cvMean, cvDem, cvFrac
				kept = o
			}
			// With opts.Behind, the wait behind large requests, on the model
			// kept, where the capture shows its requests served in order
			// (inOrderBehind). Not by the demerit: the few requests that
			// wait sit in its tail, where the model's draws for the large
			// requests they wait for set their times (in recorded-fs/
			// fs-bfq-fsync-vs-seqread 21 of 10780 samples: in-sample 6.5%
			// without, 8.9% with), while a replay's closed loop runs on them
			// (the fsync writer's chain).
			if n, in := inOrderBehind(c.samples); opts.Behind && n >= minAheadGroup && float64(in) >= minInOrder*float64(n) {
				o := kept
				o.behind = true
				alt, scale := fitKind(best.Kind, c.samples, o), 0.0
				var altPred []float64
				var altDem time.Duration
				altFrac := math.Inf(1)
				for _, sc := range behindScales {
					alt.NonRotational.BehindScale = sc
					p := c.predict(alt, opts.Seed)
					if _, d, f := score(real, p); f < altFrac {
						altPred, altDem, altFrac, scale = p, d, f, sc
					}
				}
				alt.NonRotational.BehindScale = scale
				cvm := fitKind(best.Kind, cv.samples[:nTrain], o)
				cvm.NonRotational.BehindScale = scale
				cvPred := cv.predict(cvm, opts.Seed)
				cvMean, cvDem, cvFrac := score(cvReal[nTrain:], cvPred[nTrain:])
				m, pred, fit.Demerit, fit.DemeritFraction = alt, altPred, altDem, altFrac
				fit.CV.MeanD2C, fit.CV.Demerit, fit.CV.DemeritFraction = cvMean, cvDem, cvFrac
				kept = o
			}
			// The sequential-stream factors, on the model kept, must lower
			// the demerit both pooled and split by stream (splitDemerit),
			// in-sample and cross-validated. The pooled one cannot see a
			// model that times the sequential requests too slow and the
			// others too fast when the errors cancel in the mixture
			// (rig/wi-mix4-mqdl cross-validated: its 512 KiB sequential
			// reads 1.87 ms real, 3.36 ms modelled, the random reads 6.67
			// ms real, 3.54 modelled; split 98 %, 42 % with the factors);
			// the split one alone keeps a locality the capture's own second
			// half does not repeat (the same capture: pooled 31 %, 42 %
			// with the factors), and one that other runs of that job on
			// that device did not show: its sequential 512 KiB reads took
			// 0.21 times the D2C of the 64 KiB random reads with 33-64
			// requests on the device, the 1 MiB ones 0.78 times in
			// rig/wi-mix4-mqdl2 and the 904 KiB ones 1.3 times in
			// rig/wi-mix4-bfq-a (a size line explains those two).
			if o := kept; !opts.NoSequential {
				o.seq = true
				if alt := fitKind(best.Kind, c.samples, o); alt.NonRotational.hasSeq() {
					altPred := c.predict(alt, opts.Seed)
					_, altDem, altFrac := score(real, altPred)
					cvm := fitKind(best.Kind, cv.samples[:nTrain], o)
					cvPred := cv.predict(cvm, opts.Seed)
					cvMean, cvDem, cvFrac := score(cvReal[nTrain:], cvPred[nTrain:])
					if altFrac < fit.DemeritFraction && cvFrac < fit.CV.DemeritFraction &&
						splitDemerit(c.samples, real, altPred) < splitDemerit(c.samples, real, pred) {
						curCV := cv.predict(fitKind(best.Kind, cv.samples[:nTrain], kept), opts.Seed)
						if splitDemerit(cv.samples[nTrain:], cvReal[nTrain:], cvPred[nTrain:]) < splitDemerit(cv.samples[nTrain:], cvReal[nTrain:], curCV[nTrain:]) {
							m, pred, fit.Demerit, fit.DemeritFraction = alt, altPred, altDem, altFrac
							fit.CV.MeanD2C, fit.CV.Demerit, fit.CV.DemeritFraction = cvMean, cvDem, cvFrac
						}
					}
				}
			}
		}
		return fit, m, pred, c, nil
	}
	f, m, pred, c, err := refine(best)
	if err != nil {
		return nil, nil, err
	}
	// Step 6: the kinds compared again in their final forms. Step 2 scores
	// the non-rotational kind with the count as its load measure; where
	// step 5 finds a better measure, the kind that lost step 2 to a
	// rotational model may win with it (fs-mqdl-fsync1r100-vs-seqread,
	// a loop device: 55.6% cross-validated by the count, 38.6% by the
	// bytes ahead, against the rotational model's 48.5%).
	if best.Kind == KindRotational {
		for i, sc := range fit.Candidates {
			if sc.Kind != KindNonRotational {
				continue
			}
			nf, nm, np, nc, err := refine(sc)
			if err != nil {
				return nil, nil, err
			}
			if nf.CV.DemeritFraction < f.CV.DemeritFraction {
				f, m, pred, c = nf, nm, np, nc
				f.Candidates = slices.Clone(f.Candidates)
				f.Candidates[i] = f.CV
			}
		}
	}
	fit = f
	if m.Kind == KindNonRotational {
		fit.Load = m.NonRotational.loadMeasure()
		// Step 7: the held draws, fitted last on the chosen model; the
		// scores above time every request with a draw of its own, so
		// that the choice of the model is the same with them. A
		// batching device's bunches hold its slow spells already.
		use := c.samples
		if n := m.NonRotational; n.DepthWindow > 0 {
			use = withLoad(use, n.DepthWindow)
		}
		// The size bands, fitted on the chosen model and kept where
		// they lower its in-sample demerit (scored as above: every
		// request issued at its real D time), or where they lower the
		// demerit by class and size (sizeSplitDemerit) in-sample and
		// on the held-out half of the split, bands fitted on its first
		// half: the pooled figure is the largest requests', and one
		// table for every read gave rig/wi-mix4-bfq-a's 4 KiB reader,
		// alone on the device, 212 us on average for the real 84
		// (TestSizeBandsHeldOutRule). Their tables replace the class's
		// by in-flight bucket, which a capture's spread may owe more
		// to the load than to the size (rig/wi-mix3-mqdl: 10.1 %
		// without, 88.2 % with).
		openersOf := func(ss []sample) []sample {
			if m.NonRotational.Batching == nil {
				return ss
			}
			// A bunch's members complete with its opener: the bands
			// are the openers' (as the class's line is).
			_, openers := fitBatching(ss)
			if len(openers) == 0 {
				return ss
			}
			out := make([]sample, len(openers))
			for j, i := range openers {
				out[j] = ss[i]
			}
			return out
		}
		if banded := fitSizesOn(m.NonRotational, openersOf(use), opts.Quantiles); banded != nil {
			bm := *m
			bm.NonRotational = banded
			bPred := c.predict(&bm, opts.Seed)
			real := c.d2cs()
			_, bDem, bFrac := score(real, bPred)
			sb := &SizeBandsFit{Demerit: bFrac, Without: fit.DemeritFraction,
				BySize: sizeSplitDemerit(c.samples, real, bPred), BySizeWithout: sizeSplitDemerit(c.samples, real, pred)}
			fit.SizeBands = sb
			sb.Kept = bFrac < fit.DemeritFraction
			if !sb.Kept && sb.BySize < sb.BySizeWithout {
				// The bands time each size as the capture did, at a
				// cost to the pooled figure: kept where bands fitted
				// on the first half of the split do so on the second
				// half too.
				cu := cv.samples[:nTrain]
				if n := m.NonRotational; n.DepthWindow > 0 {
					cu = withLoad(cu, n.DepthWindow)
				}
				if hb := fitSizesOn(m.NonRotational, openersOf(cu), opts.Quantiles); hb != nil {
					hm := *m
					hm.NonRotational = hb
					hp, p0 := cv.predict(&hm, opts.Seed), cv.predict(m, opts.Seed)
					sb.HeldOut = sizeSplitDemerit(cv.samples[nTrain:], cvReal[nTrain:], hp[nTrain:])
					sb.HeldOutWithout = sizeSplitDemerit(cv.samples[nTrain:], cvReal[nTrain:], p0[nTrain:])
					sb.Kept, sb.BySizeRule = sb.HeldOut < sb.HeldOutWithout, true
				}
			}
			if sb.Kept {
				m.NonRotational, pred, fit.Demerit, fit.DemeritFraction = banded, bPred, bDem, bFrac
			}
		}
		if n := m.NonRotational; opts.HeldDraws && n.Batching == nil {
			fitHold(n, use)
		}
	}
	fit.ModelMeanD2C = time.Duration(math.Round(mean(pred)))
	realDone := make([]float64, len(c.samples))
	modelDone := make([]float64, len(c.samples))
	for i, s := range c.samples {
		realDone[i] = float64(s.done)
		modelDone[i] = float64(s.issue) + pred[i]
	}
	fit.CompletionGaps = GapProfile{UnderNs: gapThresholds[:], Real: gapFractions(realDone), Model: gapFractions(modelDone)}
	fit.Model = m
	return m, fit, nil
}

// SizeBandsFit is the verdict on the size bands (Fit.SizeBands): the
// in-sample demerit, as a fraction of the mean D2C, with them and without.
type SizeBandsFit struct {
	Kept    bool    `json:"kept"`
	Demerit float64 `json:"demerit_fraction"`
	Without float64 `json:"without_fraction"`
	// BySize and BySizeWithout are the demerits taken apart by class and
	// size (sizeSplitDemerit), with the bands and without.
	BySize        float64 `json:"by_size_fraction"`
	BySizeWithout float64 `json:"by_size_without_fraction"`
	// BySizeRule: the pooled demerit rose with the bands and the one by
	// size fell, and the bands were judged on the held-out half of the
	// split: HeldOut and HeldOutWithout are its demerits by size with
	// bands fitted on the first half and without them (kept when lower).
	BySizeRule     bool    `json:"by_size_rule,omitempty"`
	HeldOut        float64 `json:"held_out_by_size_fraction,omitempty"`
	HeldOutWithout float64 `json:"held_out_by_size_without_fraction,omitempty"`
}

// sizeSplitDemerit is the demerit of model against real (the D2C of ss,
// ns) taken apart by class and size: each class's requests of one
// quarter octave of sizes (zero-byte ones apart) are scored on their own
// (score), groups of fewer than minSizeBand requests left out, and the
// fractions are averaged weighted by their counts, in the order of the
// groups' keys (the same sum on every run). The pooled demerit is
// a distance in seconds, which the largest requests' latencies set: a
// model whose 4 KiB reads take twice their real time scores almost as
// well as one that times them right, where a closed loop of them runs at
// half the rate.
func sizeSplitDemerit(ss []sample, real, model []float64) float64 {
	type key struct {
		op   Op
		band int
	}
	gs := map[key]*demeritGroup{}
	for i, s := range ss {
		k := key{s.op, -1}
		if s.bytes > 0 {
			k.band = int(math.Round(4 * math.Log2(float64(s.bytes))))
		}
		g := gs[k]
		if g == nil {
			g = &demeritGroup{}
			gs[k] = g
		}
		g.add(real[i], model[i])
	}
	keys := slices.SortedFunc(maps.Keys(gs), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.band, b.band))
	})
	ordered := make([]*demeritGroup, len(keys))
	for i, k := range keys {
		ordered[i] = gs[k]
	}
	return weightedDemerit(ordered, minSizeBand)
}

// splitDemerit is the demerit of model against real (the D2C of ss, ns)
// taken apart by stream: for each class, its requests that continue a
// stream and those that do not are scored on their own (score), and the
// fractions are averaged weighted by their counts.
func splitDemerit(ss []sample, real, model []float64) float64 {
	var gs [numOps][2]demeritGroup
	for i, s := range ss {
		gs[s.op][b2i(s.seq)].add(real[i], model[i])
	}
	var ordered []*demeritGroup
	for o := range gs {
		for j := range gs[o] {
			ordered = append(ordered, &gs[o][j])
		}
	}
	return weightedDemerit(ordered, 1)
}

// demeritGroup is the real and modelled D2Cs of one group of requests,
// ns.
type demeritGroup struct{ r, m []float64 }

func (g *demeritGroup) add(real, model float64) {
	g.r = append(g.r, real)
	g.m = append(g.m, model)
}

// weightedDemerit returns the demerit fractions of gs (score), groups of
// fewer than minN requests left out, averaged weighted by their counts in
// the order given; +Inf when no group is scored.
func weightedDemerit(gs []*demeritGroup, minN int) float64 {
	var sum, n float64
	for _, g := range gs {
		if len(g.r) < max(minN, 1) {
			continue
		}
		if _, _, f := score(g.r, g.m); !math.IsNaN(f) && !math.IsInf(f, 0) {
			sum += f * float64(len(g.r))
			n += float64(len(g.r))
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return sum / n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// curveMargin is the fraction of the in-sample demerit that the depth
// curves must come under to replace the model with one shared factor
// (step 5; the cross-validated demerit must be lower, as for the other
// measures). They hold a factor per class, size band and load, tens to
// hundreds of parameters where the shared factor holds one per load,
// and fit the capture's own operating points at some cost to the closed
// loop's: on the rig captures of bench/fidelity/record-fs.sh,
// fs-mqdl-wbpressure's demerits fell from 7.0 % to 6.4 % in-sample and
// 53 % to 38 % cross-validated with a first form of them (the load an
// average, not a peak) and its replayed reader went from 5 % to 21 %
// slow; on recorded-fs/raw-sweep-none (a sweep: each
// depth a phase of its own) the in-sample demerit falls from 13.7 % to
// 8.5 %, and the closed-loop replay's D2C demerit from 44.6 % to 8.9 %.
const curveMargin = 0.75

// maxLoaded is the largest fraction of samples issued with another
// request on the device for which Calibrate's step 5 considers a model
// without load dependence: below it the capture shows almost no load
// (recorded-fs/fs-bfq-fsync-vs-seqread: 69 of 10780, BFQ serving one
// queue at a time), and any dependence fitted on those few is an
// extrapolation a replay that loads the device more would follow.
const maxLoaded = 0.05

// unloaded reports whether fewer than maxLoaded of ss saw another request
// on the device at their issue.
func unloaded(ss []sample) bool {
	n := 0
	for _, s := range ss {
		if s.k >= 2 {
			n++
		}
	}
	return float64(n) < maxLoaded*float64(len(ss))
}

// d2cs returns the real D2C of c's samples, ns.
func d2cs(c *capture) []float64 {
	out := make([]float64, len(c.samples))
	for i, s := range c.samples {
		out[i] = s.d2c
	}
	return out
}

// window returns the requests of reqs issued within a window of n
// consecutive samples of c around its middle, as c's samples (in issue
// order) place them, with the requests without a D that complete within
// it.
func window(reqs []trace.Request, c *capture, n int) []trace.Request {
	lo := (len(c.samples) - n) / 2
	return windowSeq(Pointers(reqs), c.samples[lo].issue, c.samples[lo+n-1].issue, n+n/8)
}

func fitKind(k Kind, ss []sample, opts CalibrateOptions) *Model {
	m := &Model{Version: Version, Kind: k}
	switch k {
	case KindRotational:
		m.Rotational = fitRotational(ss, opts.SeqWindow, opts.Quantiles)
	default:
		var b *Batching
		use := ss
		if !opts.NoBatching {
			var openers []int
			if b, openers = fitBatching(ss); b != nil {
				use = make([]sample, len(openers))
				for j, i := range openers {
					use[j] = ss[i]
				}
			}
		}
		if opts.curves {
			use = withLoad(use, opts.depthWindow)
		}
		if opts.behind {
			// The requests that waited behind a large one time that one,
			// not their own service (Timing.behind adds the wait).
			own := make([]sample, 0, len(use))
			for _, s := range use {
				if !s.behind {
					own = append(own, s)
				}
			}
			use = own
			defer func() { m.NonRotational.Behind, m.NonRotational.BehindScale = behindMin, 1 }()
		}
		m.NonRotational = fitNonRotational(use, opts.Quantiles)
		if opts.curves {
			m.NonRotational.DepthWindow = opts.depthWindow
			fitCurves(m.NonRotational, use, opts.Quantiles)
		}
		if b != nil {
			// The bunches carry the load: an opener's latency does not
			// depend on the requests on the device (the openers seldom see
			// many, so a fit of that dependence would extrapolate).
			flatten(m.NonRotational, use, opts.Quantiles, false)
		}
		if opts.Flat {
			flatten(m.NonRotational, use, opts.Quantiles, false)
		} else if opts.ahead {
			// The other measure of the load: the bytes on the device
			// ahead of a request instead of their count (step 5 keeps
			// the better of the two).
			n := fitNonRotational(use, opts.Quantiles)
			if flatten(n, use, opts.Quantiles, true); n.hasAhead() {
				m.NonRotational = n
			}
		}
		if opts.seq {
			fitSeq(m.NonRotational, use, opts.Quantiles)
		}
		m.NonRotational.Batching = b
		// SaturatedBelow is the count measure's: the bytes ahead hold the
		// throughput at a lower depth by themselves (fewer bytes ahead,
		// less wait), and a flat model has no load to hold it by.
		if k := lowDepth(ss); k >= minSaturatedBelow && !opts.Flat && !m.NonRotational.hasAhead() && !opts.curves {
			m.NonRotational.SaturatedBelow = k
			var sum float64
			for _, s := range ss {
				sum += s.d2c
			}
			m.NonRotational.SaturationWindow = time.Duration(math.Round(sum / float64(len(ss))))
		}
	}
	m.clampToBounds()
	return m
}

// behindMin is the size of the requests, bytes, that the smaller ones
// issued behind them wait for when step 5 fits the wait
// (NonRotational.Behind): 256 KiB, above the 4-16 KiB requests that
// waited for the 1.25 MiB ones in recorded-fs/fs-mqdl-writeback and
// fs-bfq-fsync-vs-seqread and below those.
const behindMin = 256 << 10

// behindScales are the NonRotational.BehindScale step 5 tries, the one
// of the lowest in-sample demerit kept.
var behindScales = [...]float64{0.25, 0.5, 0.75, 1}

// minInOrder is the fraction of the requests behind a large one that
// must have completed with or after it (inOrderBehind) for step 5 to fit
// the wait (NonRotational.Behind).
const minInOrder = 0.9

// inOrderBehind returns how many of ss (in issue order) were issued
// behind a sample of at least behindMin bytes still on the device
// (sample.behind, with that sample found among the behindLookBack issued
// before it), and how many of those completed no earlier than a tenth
// of its D2C before the one of them issued last. Loop devices serve in
// order: 366 of 402 in recorded-fs/fs-mqdl-writeback, 20 of 21 in
// fs-bfq-fsync-vs-seqread, 128 of 129 in fs-mqdl-fsync-vs-seqread; not
// fs-bfq-writeback's, 28 of 85.
func inOrderBehind(ss []sample) (n, in int) {
	for i, s := range ss {
		if !s.behind {
			continue
		}
		for j := i - 1; j >= 0 && j >= i-behindLookBack; j-- {
			p := ss[j]
			if p.done > s.issue && p.bytes >= behindMin {
				n++
				if float64(s.done) >= float64(p.done)-0.1*float64(p.done-p.issue) {
					in++
				}
				break
			}
		}
	}
	return n, in
}

// behindLookBack is how many samples inOrderBehind looks back for the
// large request a sample was issued behind.
const behindLookBack = 5000

// score returns the mean of real and the demerit of model against it (ns
// in, durations out) and as a fraction of that mean.
func score(real, model []float64) (time.Duration, time.Duration, float64) {
	r := make([]float64, len(real))
	m := make([]float64, len(model))
	for i := range real {
		r[i] = real[i] / 1e9
	}
	for i := range model {
		m[i] = model[i] / 1e9
	}
	d := Demerit(r, m)
	mu := mean(r)
	return time.Duration(math.Round(mu * 1e9)), time.Duration(math.Round(d * 1e9)), d / mu
}

// seekCorrelation returns Spearman's rank correlation between the seek
// distance from the previous completion and the service time, over every
// sample with a previous completion, or over an even spread of
// maxSeekPairs of them (every k-th) when there are more.
func seekCorrelation(ss []sample) float64 {
	n := 0
	for i := range ss {
		if ss[i].hasPrev {
			n++
		}
	}
	stride := (n + maxSeekPairs - 1) / maxSeekPairs
	d := make([]float64, 0, n/max(stride, 1)+1)
	s := make([]float64, 0, cap(d))
	j := 0
	for _, x := range ss {
		if !x.hasPrev {
			continue
		}
		if j%stride == 0 {
			d = append(d, float64(distance(x.head, x.sector)))
			s = append(s, x.service)
		}
		j++
	}
	return seekCorrelationOf(d, s)
}

// seekCorrelationOf is Spearman's rank correlation of seek distances d and
// service times s (pairs), NaN for fewer than 3.
func seekCorrelationOf(d, s []float64) float64 {
	if len(d) < 3 {
		return math.NaN()
	}
	return pearson(ranks(d), ranks(s))
}

// maxSeekPairs bounds the pairs seekCorrelation ranks.
const maxSeekPairs = 1 << 18

// ranks returns the ranks of xs, ties sharing their mean rank.
func ranks(xs []float64) []float64 {
	// Ties share their mean rank, so the order among them does not
	// matter: an unstable sort of (value, index) pairs will do.
	type vi struct {
		v float64
		i int
	}
	idx := make([]vi, len(xs))
	for i, x := range xs {
		idx[i] = vi{x, i}
	}
	slices.SortFunc(idx, func(a, b vi) int { return cmp.Compare(a.v, b.v) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1].v == idx[i].v {
			j++
		}
		avg := float64(i+j) / 2
		for k := i; k <= j; k++ {
			r[idx[k].i] = avg
		}
		i = j + 1
	}
	return r
}

func pearson(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

// d2cs returns the D2C of c's samples, ns.
func (c *capture) d2cs() []float64 {
	r := make([]float64, len(c.samples))
	for i, s := range c.samples {
		r[i] = s.d2c
	}
	return r
}
