package device

import (
	"fmt"
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
	Size       uint32
	Depth      int
}

func (s ProbeStep) String() string {
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
	Skipped  int // steps left out when the budget ran short
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

// steps returns the sweep's grid (read and write, random and sequential,
// every size and depth) in a fixed shuffled order, so that any stretch of
// the sweep, such as the halves Calibrate cross-validates on, mixes every
// kind of step.
func (o ProbeOptions) steps() []ProbeStep {
	out := o.grid()
	x := uint64(0x2545F4914F6CDD1D)
	for i := len(out) - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i+1))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (o ProbeOptions) grid() []ProbeStep {
	var out []ProbeStep
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
