package device

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// ProbeOptions are the settings of Probe. The zero value sweeps the default
// grid within DefaultProbeBudget.
type ProbeOptions struct {
	// Budget bounds the whole sweep (default DefaultProbeBudget); every
	// step gets an equal part of it.
	Budget time.Duration
	// Depths are the numbers of requests kept in flight (default 1, 2, 4,
	// 8, 16, 32, 64).
	Depths []int
	// Sizes are the request sizes, bytes, multiples of 4096 (default 4 KiB,
	// 16 KiB, 64 KiB, 256 KiB, 1 MiB).
	Sizes []uint32
	// Writes allows write steps. The caller decides: a target holding data
	// (HoldsData) must not be written unless the user said so.
	Writes bool
	// Passes is how many times the grid is run, each time in another
	// order (default 1); the budget is shared by all the steps of all
	// passes.
	Passes int
	// Region bounds the offsets used, bytes from the start (default: the
	// whole target, at most 4 GiB).
	Region int64
	// Now is the clock (default time.Now); simulated time is not involved,
	// this measures a real device.
	Now func() time.Time
}

// DefaultProbeBudget is Probe's default time budget.
const DefaultProbeBudget = 30 * time.Second

// ProbeStep is one cell of the sweep.
type ProbeStep struct {
	Write      bool
	Sequential bool
	// Flush: one random write of Size, then a flush of the target's cache
	// (fdatasync: REQ_OP_FLUSH on a block device, for a loop device an
	// fsync of its backing file), one at a time. The flushes are the
	// "other" class of the model (a capture's FN requests), which times a
	// replay's flushes; Write is set too.
	Flush bool
	Size  uint32
	Depth int
}

func (s ProbeStep) String() string {
	if s.Flush {
		return fmt.Sprintf("flush after a %dk write", s.Size/1024)
	}
	op, pat := "read", "rand"
	if s.Write {
		op = "write"
	}
	if s.Sequential {
		pat = "seq"
	}
	return fmt.Sprintf("%s %s %dk qd%d", pat, op, s.Size/1024, s.Depth)
}

// ProbeResult is what a sweep measured: one Request per I/O, issued when
// the system call was made and completed when it returned (ns since the
// sweep began, so Calibrate reads them as a capture's D and C), and the
// steps run.
type ProbeResult struct {
	Requests []trace.Request
	Steps    []ProbeStep
	// Spans holds, per step run (parallel to Steps), the first and one
	// past the last index of its requests in Requests, and the time it
	// ran, ns since the sweep began (the first issue to the last
	// completion).
	Spans   []ProbeSpan
	Skipped int // steps left out when the budget ran short
}

// ProbeSpan is where one step's requests are in a ProbeResult.
type ProbeSpan struct {
	First, End  int        // Requests[First:End]
	Start, Stop trace.Time // ns since the sweep began
}

func (o ProbeOptions) withDefaults() ProbeOptions {
	if o.Budget <= 0 {
		o.Budget = DefaultProbeBudget
	}
	if len(o.Depths) == 0 {
		o.Depths = []int{1, 2, 4, 8, 16, 32, 64}
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []uint32{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// steps returns the sweep: the grid (read and write, random and
// sequential, every size and depth) Passes times, each pass in its own
// fixed shuffled order, so that any stretch of the sweep, such as the
// halves Calibrate cross-validates on, mixes every kind of step, and a
// stall of the device that lasts a few steps does not stand for one cell.
func (o ProbeOptions) steps() []ProbeStep {
	var all []ProbeStep
	x := uint64(0x2545F4914F6CDD1D)
	for range max(o.Passes, 1) {
		out := o.grid()
		for i := len(out) - 1; i > 0; i-- {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			j := int(x % uint64(i+1))
			out[i], out[j] = out[j], out[i]
		}
		all = append(all, out...)
	}
	return all
}

func (o ProbeOptions) grid() []ProbeStep {
	var out []ProbeStep
	if o.Writes {
		out = append(out, ProbeStep{Write: true, Flush: true, Size: 4 << 10, Depth: 1})
	}
	for _, w := range []bool{false, true} {
		if w && !o.Writes {
			continue
		}
		for _, seq := range []bool{false, true} {
			for _, sz := range o.Sizes {
				for _, d := range o.Depths {
					out = append(out, ProbeStep{Write: w, Sequential: seq, Size: sz, Depth: d})
				}
			}
		}
	}
	return out
}

// StepFit is how a model reproduces one step of a sweep: what the step
// measured (requests, requests and MiB per second over its span, mean
// latency) beside the model's mean latency for the same requests, each
// issued at its measured time with the measured requests on the device,
// as Calibrate scores a capture. A flush step's requests and latencies
// are its flushes'.
type StepFit struct {
	Step      string        `json:"step"`
	Requests  int           `json:"requests"`
	IOPS      float64       `json:"iops"`
	MiBps     float64       `json:"mib_per_s"`
	Mean      time.Duration `json:"mean_ns"`
	ModelMean time.Duration `json:"model_mean_ns"`
}

// Error is the model's relative error on the step's mean latency.
func (s StepFit) Error() float64 {
	if s.Mean <= 0 {
		return math.NaN()
	}
	return float64(s.ModelMean-s.Mean) / float64(s.Mean)
}

// StepFits scores m on every cell of the sweep r (see StepFit), the runs
// of one cell in several passes taken together, in the order the cells
// first ran. seed seeds the model's draws.
func (r *ProbeResult) StepFits(m *Model, seed uint64) []StepFit {
	c := prepare(r.Requests)
	pred := c.predict(m, seed)
	cell := make([]int, len(r.Spans)) // span -> index in out
	idx := map[ProbeStep]int{}
	var out []StepFit
	var secs, bytes []float64
	for i, sp := range r.Spans {
		j, ok := idx[r.Steps[i]]
		if !ok {
			j = len(out)
			idx[r.Steps[i]] = j
			out = append(out, StepFit{Step: r.Steps[i].String()})
			secs, bytes = append(secs, 0), append(bytes, 0)
		}
		cell[i] = j
		secs[j] += float64(sp.Stop-sp.Start) / 1e9
		for _, q := range r.Requests[sp.First:sp.End] {
			if !r.Steps[i].Flush || q.Bytes == 0 {
				bytes[j] += float64(q.Bytes)
				out[j].IOPS++ // a count until divided below
			}
		}
	}
	for j := range out {
		if secs[j] > 0 {
			out[j].IOPS /= secs[j]
			out[j].MiBps = bytes[j] / secs[j] / (1 << 20)
		} else {
			out[j].IOPS = 0
		}
	}
	sum := make([][2]float64, len(out))
	for i, s := range c.samples {
		k := sort.Search(len(r.Spans), func(k int) bool { return r.Spans[k].Stop >= s.issue })
		if k == len(r.Spans) || s.issue < r.Spans[k].Start || r.Steps[k].Flush && s.op != OpOther {
			continue // a flush step's writes are ordinary qd1 writes
		}
		j := cell[k]
		out[j].Requests++
		sum[j][0] += s.d2c
		sum[j][1] += pred[i]
	}
	for j := range out {
		if n := float64(out[j].Requests); n > 0 {
			out[j].Mean = time.Duration(math.Round(sum[j][0] / n))
			out[j].ModelMean = time.Duration(math.Round(sum[j][1] / n))
		}
	}
	return out
}

// Calibrate fits the non-rotational model to the sweep as Calibrate fits
// one to a capture (seed and quantiles as CalibrateOptions' Seed and
// Quantiles), with two differences, and sets its Coverage:
//   - no completion batching: the sweep's thread reaps completions
//     whenever its system calls return, so bunches of them say nothing of
//     the device, and batching would drop the in-flight dependence the
//     sweep is there to measure;
//   - no window: on a long capture Calibrate fits the middle stretch,
//     which stands for the whole of a steady workload, but a sweep's
//     middle holds only the cells that ran then, so every step is fitted
//     (and cross-validated).
func (r *ProbeResult) Calibrate(seed uint64, quantiles int) (*Model, *Fit, error) {
	m, fit, err := Calibrate(r.Requests, CalibrateOptions{Seed: seed, Kind: KindNonRotational, NoBatching: true,
		Quantiles: quantiles, FitSamples: -1, CVSamples: -1})
	if err != nil {
		return nil, nil, err
	}
	m.Coverage = CoverageOf(r.Requests)
	return m, fit, nil
}
