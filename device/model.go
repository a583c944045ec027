package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Version is the version of the JSON form Save writes. Load also reads
// version 1 (before completion batching: such a model has no batching),
// version 2 (before the bytes-ahead term, OpTiming.Ahead: 0), version
// 3 (before the sequential-stream factor, OpTiming.Seq: 0) and version 4
// (before the depth curves and the averaged load, NonRotational.Curves
// and DepthWindow: none) and version 5 (before the held residual draw,
// OpTiming.Hold: 0) and version 6 (before the wait behind large
// requests, NonRotational.Behind: 0) and version 7 (before the size
// bands, OpTiming.Sizes: none) and version 8 (before the sustained load
// of the coverage, Coverage.Sustained: not measured).
const Version = 9

// Kind is the kind of timing model.
type Kind uint8

const (
	// KindAuto asks Calibrate to choose the kind from the data.
	KindAuto Kind = iota
	// KindNonRotational: parallel service, no positional cost (flash, loop, virtual disks).
	KindNonRotational
	// KindRotational: one request at a time, seek and rotation costs (disks).
	KindRotational
)

var kindNames = [...]string{KindAuto: "auto", KindNonRotational: "nonrotational", KindRotational: "rotational"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind maps "auto", "nonrotational" (or "ssd") and "rotational" (or
// "hdd") to a Kind.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "auto", "":
		return KindAuto, nil
	case "nonrotational", "ssd":
		return KindNonRotational, nil
	case "rotational", "hdd":
		return KindRotational, nil
	}
	return KindAuto, fmt.Errorf("unknown device model kind %q", s)
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("invalid kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	*k = v
	return err
}

// Op is an operation class the non-rotational model times separately.
type Op uint8

const (
	OpRead  Op = iota // reads with data
	OpWrite           // writes with data
	OpOther           // discards and data-less requests (flushes)
	numOps
)

var opNames = [...]string{OpRead: "read", OpWrite: "write", OpOther: "other"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// OpOf returns the class of a request of category c and size bytes.
func OpOf(c trace.Category, bytes uint32) Op {
	switch {
	case bytes == 0 || c&trace.CatDiscard != 0:
		return OpOther
	case c.IsWrite():
		return OpWrite
	}
	return OpRead
}

// Model is a calibrated device timing model. Exactly the section named by
// Kind is set. A Model is immutable once made; Timing values share it.
type Model struct {
	Version       int            `json:"version"`
	Kind          Kind           `json:"kind"`
	NonRotational *NonRotational `json:"nonrotational,omitempty"`
	Rotational    *Rotational    `json:"rotational,omitempty"`
	// Coverage, when set, is what the calibration saw (see Coverage); a
	// replay states where it drives the model beyond it.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// NonRotational holds the parameters of a non-rotational model.
type NonRotational struct {
	// Parallelism is how many requests the device serves at once without
	// slowing down (k at or below it: no saturation).
	Parallelism int `json:"parallelism"`
	// Slope is the latency growth, as a fraction of the unsaturated
	// latency, per request on the device beyond Parallelism: a request
	// issued with k requests on the device (itself included) takes
	// 1 + Slope*max(0, k-Parallelism) times its unsaturated latency.
	Slope float64 `json:"saturation_slope"`
	// Factors holds the measured latency factor at k = 1, 2, ...
	// requests on the device (entry k-1), for the counts the capture
	// showed often enough; it replaces the Parallelism/Slope line there
	// (it catches, say, a slower idle device at k = 1). Beyond it the line
	// continues from the last entry. Empty: the line everywhere.
	Factors []float64 `json:"inflight_factors,omitempty"`
	// SaturatedBelow, when above 1, is the fewest requests the capture
	// kept on the device for nine tenths of its busy time (see
	// lowDepth): below it the capture does not show how the device
	// behaves, and the model holds the throughput the device delivered
	// there instead of its latency. Once the requests on the device,
	// averaged over saturationCycles (10) SaturationWindows, fall below
	// SaturatedBelow (the replay runs the device at a lower operating
	// point than the capture did), a request issued with k on the device
	// takes max(k, a)/SaturatedBelow of the latency it would have at
	// SaturatedBelow, a their average over one SaturationWindow (while
	// both are below it). A device kept full by a queue its workload
	// never let drain is taken to be saturated, as Little's law reads a
	// closed loop at one operating point: the latency the capture shows
	// is the queue's, and a scheduler that keeps fewer requests in flight
	// (BFQ serving one queue at a time) gets them served faster, not at
	// the same latency with proportionally less throughput. Averages, not
	// the count at the issue, decide: a request issued just after a bunch
	// of completions finds few on a device that stays full, and the slow
	// average keeps a replay at the capture's own operating point on the
	// fitted latencies. 0: the factors and the line hold below it too.
	// Version 2 on.
	SaturatedBelow int `json:"saturated_below,omitempty"`
	// SaturationWindow is the time constant of the fast average, ns:
	// the capture's mean D2C.
	SaturationWindow time.Duration `json:"saturation_window_ns,omitempty"`

	Read  *OpTiming `json:"read,omitempty"`
	Write *OpTiming `json:"write,omitempty"`
	Other *OpTiming `json:"other,omitempty"`

	// Batching, when set, delivers completions in bunches (see Batching);
	// nil: every request completes at its own time. Version 2 on.
	Batching *Batching `json:"batching,omitempty"`

	// DepthWindow, when above 0, is the time constant of the decaying
	// peak of the requests on the device, ns, that the load measure
	// reads: a request issued with k on the device (itself included) is
	// timed at the larger of k and that peak rounded up (load), for the
	// factors, the line, the depth curves and the residual buckets alike
	// (the capture's mean D2C when fitted). 0: k. Version 5 on.
	DepthWindow time.Duration `json:"depth_window_ns,omitempty"`
	// Curves, when set, replaces the shared factor for the reads and the
	// writes with a factor per size band, locality and load (DepthCurve),
	// random before sequential and rising bytes within each class: a
	// request takes the curves of its locality where its class has some
	// (of the other otherwise), and between two bands of its class
	// takes the factors of both interpolated in log size, one outside
	// them the nearest band's, and a class without curves the shared
	// factor. One factor for every size misreads a device whose latency
	// grows with the depth faster for small requests than for large
	// ones (a loop device on a 2-CPU host: 4 KiB reads 69 us at qd1 and
	// 1.5 ms at qd64, 64 KiB reads 104 us and 4.0 ms, recorded-fs/
	// raw-sweep-none). Version 5 on.
	Curves []DepthCurve `json:"depth_curves,omitempty"`

	// Behind, when above 0, is a size in bytes: a request of fewer bytes
	// (a flush included) issued while requests of at least Behind bytes
	// are on the device completes no earlier than a share (BehindScale)
	// of the time left to the modelled completion of the one of them
	// issued last, as on a device that works through the
	// requests issued before it first (a loop device's worker,
	// loop_queue_work: in recorded-fs/fs-mqdl-writeback 402 reads of
	// 4 KiB issued behind writeback writes of up to 1.25 MiB completed
	// at a median 14 us before the last of those writes, 2.2-2.8 ms
	// after their issue where the others took 0.1 ms). 0: none. Version
	// 7 on.
	Behind uint32 `json:"behind_bytes,omitempty"`
	// BehindScale, in (0, 1] with Behind, scales that wait: such a
	// request completes no earlier than now + BehindScale*(done - now),
	// done the modelled completion of the large request issued last of
	// those on the device (Timing.behind). The large requests' own draws
	// overstate the time they have left (they are timed alone, the
	// requests behind them see them as served; fitted on the capture).
	BehindScale float64 `json:"behind_scale,omitempty"`
}

// op returns the timing of class o, falling back to another class the
// capture had when it had none of o.
func (n *NonRotational) op(o Op) *OpTiming {
	all := [numOps]*OpTiming{n.Read, n.Write, n.Other}
	if t := all[o]; t != nil {
		return t
	}
	for _, t := range [...]*OpTiming{n.Read, n.Write, n.Other} {
		if t != nil {
			return t
		}
	}
	return nil
}

func (n *NonRotational) setOp(o Op, t *OpTiming) {
	switch o {
	case OpRead:
		n.Read = t
	case OpWrite:
		n.Write = t
	default:
		n.Other = t
	}
}

// hasAhead reports whether a class has a bytes-ahead term.
func (n *NonRotational) hasAhead() bool {
	for _, t := range [...]*OpTiming{n.Read, n.Write, n.Other} {
		if t != nil && t.Ahead > 0 {
			return true
		}
	}
	return false
}

// hasSeq reports whether a class has a sequential-stream factor.
func (n *NonRotational) hasSeq() bool {
	for _, t := range [...]*OpTiming{n.Read, n.Write, n.Other} {
		if t != nil && t.Seq > 0 {
			return true
		}
	}
	return false
}

// loaded reports whether n's latencies depend on the load at all.
func (n *NonRotational) loaded() bool {
	return n.hasAhead() || n.Slope > 0 || len(n.Factors) > 0 || n.SaturatedBelow > 1 || len(n.Curves) > 0
}

// loadMeasure names what n's latencies grow with (Fit.Load).
func (n *NonRotational) loadMeasure() string {
	switch {
	case n.hasAhead():
		return "bytes ahead"
	case n.DepthWindow > 0:
		return "requests, peaked"
	case n.loaded():
		return "requests"
	}
	return "none"
}

// saturation returns the latency factor with k requests on the device.
func (n *NonRotational) saturation(k int) float64 {
	return n.saturationAvg(k, float64(k), float64(k))
}

// saturationAvg is saturation at k requests on the device when they have
// averaged avg over SaturationWindow and slow over saturationCycles of
// them (SaturatedBelow).
func (n *NonRotational) saturationAvg(k int, avg, slow float64) float64 {
	if s := n.SaturatedBelow; s > 1 && k < s && avg < float64(s) && slow < float64(s) {
		return n.measured(s) * max(float64(max(k, 1)), avg) / float64(s)
	}
	return n.measured(k)
}

// measured returns the factor of the fitted line and the measured factors
// at k requests on the device (saturation without SaturatedBelow).
func (n *NonRotational) measured(k int) float64 {
	if l := len(n.Factors); l > 0 {
		if k <= l {
			return n.Factors[max(k, 1)-1]
		}
		return n.Factors[l-1] * n.hinge(k) / n.hinge(l)
	}
	return n.hinge(k)
}

// hinge returns 1 + Slope*max(0, k-Parallelism).
func (n *NonRotational) hinge(k int) float64 {
	if k <= n.Parallelism {
		return 1
	}
	return 1 + n.Slope*float64(k-n.Parallelism)
}

// OpTiming is the unsaturated service time of one operation class.
type OpTiming struct {
	Base    time.Duration `json:"base_ns"`     // latency of a zero-byte request, ns
	PerByte float64       `json:"per_byte_ns"` // added latency per byte, ns
	// SatExp, when above 0, is the power to which this class raises the
	// saturation factor (the in-flight factors and the line): a request of
	// the class issued where the factor is f takes f^SatExp times its
	// unsaturated latency. The factors are measured on the capture's mix,
	// whose largest class dominates them; a smaller class whose latency
	// grows otherwise with the requests on the device (a 256 KiB write
	// among 4 KiB reads: 2.3 times from 1-2 to 25 or more requests on the
	// device, where the reads grow 10 times, rig/wi-mix3-bfq-a) gets its
	// own exponent (fitSatExp). 0: 1, the factor as it is. Version 2 on.
	SatExp float64 `json:"saturation_exponent,omitempty"`
	// Ahead is the latency added per byte of the other requests on the
	// device at the issue (ns per byte ahead): a device that serves its
	// requests' data in turn, as a loop device's worker does, makes a
	// request wait for the bytes before it, whatever their number (a
	// 4 KiB write or a flush behind a 1.25 MiB read waits for the read;
	// 1.27 ns/B for flushes in recorded-fs/fs-mqdl-fsync-vs-seqread). The
	// wait is added to the request's own latency after the residual draw
	// (the residual is the spread of its own service, fitted on the D2C
	// less the wait), and is at most MaxServiceTime. A model with it
	// measures the load by these bytes alone: no saturation (Parallelism
	// the most requests seen, Slope 0, no Factors). 0: none. Version 3 on.
	Ahead float64 `json:"ahead_per_byte_ns,omitempty"`
	// Seq, when above 0, multiplies the latency (before the Ahead wait)
	// of a request of the class that continues a stream: it starts at
	// the sector where one of the last SeqRecent requests issued to the
	// device ended. A loop device whose backing file the host reads
	// ahead serves such a request from the host's cache: 512 KiB
	// sequential reads took 1.6 ms with 33-64 requests on the device in
	// rig/wi-mix4-mqdl, 64 KiB random reads 7.7 ms and 16 KiB random
	// writes 8.3 ms. Non-sequential requests of the class take the
	// model's latency as it is (its Base and PerByte are fitted on
	// them). 0: no locality. Version 4 on.
	Seq float64 `json:"sequential_factor,omitempty"`
	// SeqResidual, with Seq, is the residual table of the requests that
	// continue a stream (their spread is not the others': 0.22-2.3 times
	// the mean for the sequential reads of rig/wi-mix4-mqdl); Residual
	// and ByInflight are then the other requests'. Version 4 on.
	SeqResidual Quantiles `json:"sequential_residual,omitzero"`
	// Hold, when above 0, is how long a residual draw holds, ns: a
	// request of the class issued within Hold of the one that drew last,
	// while that one is on the device, takes its draw (the same quantile
	// of its own table) instead of one of its own. A device's slow spells (a loop device whose host
	// stalls its worker) hit every request on it together: in
	// recorded-fs/fs-bfq-untar, of the writes issued within 1 ms of a
	// write in the slowest tenth (its D2C over the model's mean), 65 %
	// to 80 % were in the slowest tenth too, against 10 % if they were
	// independent, and a burst of 33 writes with independent draws
	// ends on its slowest one (fitHold). 0: every request draws its
	// own. Version 6 on.
	Hold     time.Duration `json:"residual_hold_ns,omitempty"`
	N        int           `json:"n"`        // requests it was fitted on
	Residual Quantiles     `json:"residual"` // multiplier of Base+PerByte*bytes (times the in-flight factor); empty means 1
	// ByInflight holds, for requests issued with k on the device, the
	// residual table of bucket InflightBucket(k) (k = 1, 2, 3-4, 5-8, ...)
	// where the capture had enough of them; an empty or missing entry
	// falls back to Residual. The spread of D2C changes with the load, not
	// only its mean.
	ByInflight []Quantiles `json:"residual_by_inflight,omitempty"`
	// Sizes, when set, corrects Base+PerByte*bytes for the sizes the
	// capture showed often (fitSizes): a request of a band's size has
	// its Factor times the line's latency, one between two bands the
	// factor interpolated linearly in log size and log factor, one
	// outside them the nearest band's. A line fitted over sizes whose
	// latency is not affine in the size misses the small ones, and one
	// residual table for the class cannot make that up: 4 KiB random
	// reads took 5 us (D2C p50) among 64 KiB random and 1 MiB sequential
	// ones of 150 and 620 us on a fast loop device (rig/wi-mix4-mqdl),
	// where the line gave 125 us. Each band then has a residual table of
	// its own, which replaces ByInflight (left empty) and Residual (the
	// multipliers of the corrected latency over every size) for the
	// requests nearest its size. Bytes rising, Factor positive. Version
	// 8 on.
	Sizes []SizeBand `json:"size_factors,omitempty"`
}

// SizeBand is one size of OpTiming.Sizes: the mean latency of the
// class's requests of Bytes (those whose size rounds to it in log2,
// within a quarter octave), over the line's (times their load factor),
// from N requests, and the residual table of the requests nearest its
// size in log size, which a request nearest it draws from (instead of
// the class's Residual and ByInflight, which fitSizes leaves empty;
// SeqResidual still for a request continuing a stream).
type SizeBand struct {
	Bytes    uint32    `json:"bytes"`
	Factor   float64   `json:"factor"`
	N        int       `json:"n"`
	Residual Quantiles `json:"residual"`
}

// InflightBucket returns the bucket of k requests on the device: 0 for
// k <= 1, then b for 2^(b-1) < k <= 2^b.
func InflightBucket(k int) int {
	if k <= 1 {
		return 0
	}
	return bits.Len(uint(k - 1))
}

// residual returns the residual table for a request issued with k on the
// device, continuing a stream (seq) or not.
func (t *OpTiming) residual(k int, seq bool, bytes uint32) Quantiles {
	if seq && t.Seq > 0 && t.SeqResidual.Len() > 0 {
		return t.SeqResidual
	}
	if len(t.Sizes) > 0 {
		if q := t.Sizes[nearestBand(t.Sizes, bytes)].Residual; q.Len() > 0 {
			return q
		}
	}
	if b := InflightBucket(k); b < len(t.ByInflight) && t.ByInflight[b].Len() > 0 {
		return t.ByInflight[b]
	}
	return t.Residual
}

// sat returns the saturation factor f as the class takes it (SatExp).
func (t *OpTiming) sat(f float64) float64 {
	if t.SatExp <= 0 || t.SatExp == 1 {
		return f
	}
	return math.Pow(f, t.SatExp)
}

// seqScale returns the factor of a request of the class that continues a
// stream (seq) or not: Seq, or 1.
func (t *OpTiming) seqScale(seq bool) float64 {
	if seq && t.Seq > 0 {
		return t.Seq
	}
	return 1
}

// mean returns the unsaturated latency of a request of size bytes with
// nothing else on the device, ns.
func (t *OpTiming) mean(bytes uint32) float64 {
	return (float64(t.Base) + t.PerByte*float64(bytes)) * t.sizeFactor(bytes)
}

// sizeFactor returns the correction of Sizes for a request of bytes: 1
// without Sizes.
func (t *OpTiming) sizeFactor(bytes uint32) float64 { return bandFactor(t.Sizes, bytes) }

// bandFactor returns the factor of bands b (OpTiming.Sizes) for a request
// of bytes: 1 without bands.
func bandFactor(b []SizeBand, bytes uint32) float64 {
	switch {
	case len(b) == 0:
		return 1
	case bytes <= b[0].Bytes:
		return b[0].Factor
	case bytes >= b[len(b)-1].Bytes:
		return b[len(b)-1].Factor
	}
	i := sort.Search(len(b), func(i int) bool { return b[i].Bytes >= bytes })
	lo, hi := b[i-1], b[i]
	f := math.Log(float64(bytes)/float64(lo.Bytes)) / math.Log(float64(hi.Bytes)/float64(lo.Bytes))
	return math.Exp(math.Log(lo.Factor) + f*(math.Log(hi.Factor)-math.Log(lo.Factor)))
}

// wait returns the time a request of the class waits for ahead bytes of
// other requests on the device, ns (the Ahead term, at most
// MaxServiceTime).
func (t *OpTiming) wait(ahead float64) float64 {
	if t.Ahead <= 0 || ahead <= 0 {
		return 0
	}
	return min(t.Ahead*ahead, float64(MaxServiceTime))
}

// Rotational holds the parameters of a rotational model.
type Rotational struct {
	Overhead          time.Duration `json:"overhead_ns"`             // fixed cost of a random access, ns
	SeekSqrt          float64       `json:"seek_sqrt_ns"`            // short seek: ns per sqrt(sector)
	SeekBoundary      uint64        `json:"seek_boundary_sectors"`   // first distance timed as a long seek, sectors
	SeekLongBase      time.Duration `json:"seek_long_base_ns"`       // long seek: fixed part, ns
	SeekLongPerSector float64       `json:"seek_long_per_sector_ns"` // long seek: ns per sector
	Revolution        time.Duration `json:"revolution_ns"`           // one revolution, ns (estimated from the residual spread)
	PerByte           float64       `json:"per_byte_ns"`             // transfer, ns per byte
	Write             time.Duration `json:"write_ns"`                // added cost of a write, ns (may be negative)
	SeqWindow         uint64        `json:"seq_window_sectors"`      // largest forward gap served as sequential, sectors
	SeqBase           time.Duration `json:"seq_base_ns"`             // fixed cost of a sequential access, ns
	Residual          Quantiles     `json:"residual_ns"`             // positional delay of a random access, ns; empty: uniform in [0, Revolution)
	SeqResidual       Quantiles     `json:"seq_residual_ns"`         // added delay of a sequential access, ns; empty: 0
	N                 int           `json:"n"`                       // requests it was fitted on
	NSeq              int           `json:"n_seq"`                   // of which sequential
}

// Seek returns the seek time over d sectors, ns, without rotation or transfer.
func (r *Rotational) Seek(d uint64) float64 {
	if d == 0 {
		return 0
	}
	if d < r.SeekBoundary || r.SeekBoundary == 0 {
		return r.SeekSqrt * math.Sqrt(float64(d))
	}
	return float64(r.SeekLongBase) + r.SeekLongPerSector*float64(d)
}

// sequential reports whether an access at sector after the head at head is
// served on the sequential path.
func (r *Rotational) sequential(head, sector uint64) bool {
	return sector >= head && sector-head <= r.SeqWindow
}

// distance returns the seek distance from head to sector, sectors.
func distance(head, sector uint64) uint64 {
	if sector >= head {
		return sector - head
	}
	return head - sector
}

// Validate reports the first inconsistency of m, or its first value
// outside the physical bounds (MaxServiceTime and bounds.go), or nil.
func (m *Model) Validate() error {
	if m.Version < 1 || m.Version > Version {
		return fmt.Errorf("unsupported device model version %d (want 1 to %d)", m.Version, Version)
	}
	if c := m.Coverage; c != nil {
		if len(c.Sustained) > 0 && m.Version < 9 {
			return fmt.Errorf("coverage sustained_load_windows in a version %d model", m.Version)
		}
		for _, h := range [...]struct {
			name string
			n    []int
			max  int
		}{{"depth_buckets", c.Depths, depthBuckets}, {"sustained_load_windows", c.Sustained, SustainedBins}} {
			if len(h.n) > h.max {
				return fmt.Errorf("coverage %s: %d entries, at most %d", h.name, len(h.n), h.max)
			}
			for _, v := range h.n {
				if v < 0 {
					return fmt.Errorf("coverage %s: negative count %d", h.name, v)
				}
			}
		}
	}
	switch m.Kind {
	case KindNonRotational:
		n := m.NonRotational
		if n == nil {
			return errors.New("nonrotational model without its nonrotational section")
		}
		if n.Parallelism < 1 {
			return fmt.Errorf("nonrotational parallelism %d < 1", n.Parallelism)
		}
		if n.Slope < 0 || math.IsNaN(n.Slope) || math.IsInf(n.Slope, 0) {
			return fmt.Errorf("nonrotational saturation_slope %v not a finite value >= 0", n.Slope)
		}
		for _, f := range n.Factors {
			if !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("nonrotational inflight_factors: %v not a finite value > 0", f)
			}
		}
		if n.SaturatedBelow < 0 || n.SaturatedBelow > maxParallelism {
			return fmt.Errorf("nonrotational saturated_below %d not in 0..%d", n.SaturatedBelow, maxParallelism)
		}
		if n.SaturationWindow < 0 || (n.SaturatedBelow > 1 && n.SaturationWindow == 0) {
			return fmt.Errorf("nonrotational saturation_window_ns %d: want > 0 with saturated_below", n.SaturationWindow)
		}
		if n.Read == nil && n.Write == nil && n.Other == nil {
			return errors.New("nonrotational model without any operation timing")
		}
		if err := n.validateCurves(m.Version); err != nil {
			return err
		}
		if n.Behind > 0 && m.Version < 7 {
			return fmt.Errorf("nonrotational behind_bytes in a version %d model", m.Version)
		}
		if n.Behind > 0 && !(n.BehindScale > 0 && n.BehindScale <= 1) {
			return fmt.Errorf("nonrotational behind_scale %v: want one in (0, 1] with behind_bytes %d", n.BehindScale, n.Behind)
		}
		if b := n.Batching; b != nil {
			if m.Version < 2 {
				return fmt.Errorf("nonrotational batching in a version %d model", m.Version)
			}
			if err := b.validate(); err != nil {
				return fmt.Errorf("nonrotational %w", err)
			}
		}
		for o := Op(0); o < numOps; o++ {
			t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
			if t == nil {
				continue
			}
			if t.Base < 0 || t.PerByte < 0 || math.IsNaN(t.PerByte) || math.IsInf(t.PerByte, 0) {
				return fmt.Errorf("nonrotational %s: negative or non-finite cost (base_ns %d, per_byte_ns %v)", o, t.Base, t.PerByte)
			}
			if t.Ahead < 0 || math.IsNaN(t.Ahead) || math.IsInf(t.Ahead, 0) {
				return fmt.Errorf("nonrotational %s: ahead_per_byte_ns %v not a finite value >= 0", o, t.Ahead)
			}
			if t.Ahead > 0 && m.Version < 3 {
				return fmt.Errorf("nonrotational %s: ahead_per_byte_ns in a version %d model", o, m.Version)
			}
			if t.Seq < 0 || math.IsNaN(t.Seq) || math.IsInf(t.Seq, 0) {
				return fmt.Errorf("nonrotational %s: sequential_factor %v not a finite value >= 0", o, t.Seq)
			}
			if t.Seq > 0 && m.Version < 4 {
				return fmt.Errorf("nonrotational %s: sequential_factor in a version %d model", o, m.Version)
			}
			if t.Hold < 0 {
				return fmt.Errorf("nonrotational %s: negative residual_hold_ns %d", o, t.Hold)
			}
			if t.Hold > 0 && m.Version < 6 {
				return fmt.Errorf("nonrotational %s: residual_hold_ns in a version %d model", o, m.Version)
			}
			if len(t.Sizes) > 0 && m.Version < 8 {
				return fmt.Errorf("nonrotational %s: size_factors in a version %d model", o, m.Version)
			}
			for i, b := range t.Sizes {
				if err := b.Residual.validate(); err != nil {
					return fmt.Errorf("nonrotational %s: size_factors[%d] residual: %w", o, i, err)
				}
				if q := b.Residual; q.Len() > 0 && q.X[0] < 0 {
					return fmt.Errorf("nonrotational %s: size_factors[%d] residual: negative multiplier %v", o, i, q.X[0])
				}
				if b.Bytes == 0 || (i > 0 && b.Bytes <= t.Sizes[i-1].Bytes) {
					return fmt.Errorf("nonrotational %s: size_factors[%d]: bytes %d not above 0 and the previous band's", o, i, b.Bytes)
				}
				if !(b.Factor >= minSizeFactor && b.Factor <= maxSizeFactor) {
					return fmt.Errorf("nonrotational %s: size_factors[%d]: factor %v not in [%g, %g]", o, i, b.Factor, minSizeFactor, maxSizeFactor)
				}
			}
			if t.SatExp < 0 || t.SatExp > maxSatExp || math.IsNaN(t.SatExp) {
				return fmt.Errorf("nonrotational %s: saturation_exponent %v not in [0, %g]", o, t.SatExp, float64(maxSatExp))
			}
			if err := t.Residual.validate(); err != nil {
				return fmt.Errorf("nonrotational %s residual: %w", o, err)
			}
			if t.SeqResidual.Len() > 0 && m.Version < 4 {
				return fmt.Errorf("nonrotational %s: sequential_residual in a version %d model", o, m.Version)
			}
			for _, q := range append([]Quantiles{t.Residual, t.SeqResidual}, t.ByInflight...) {
				if err := q.validate(); err != nil {
					return fmt.Errorf("nonrotational %s residual: %w", o, err)
				}
				if q.Len() > 0 && q.X[0] < 0 {
					return fmt.Errorf("nonrotational %s residual: negative multiplier %v", o, q.X[0])
				}
			}
		}
	case KindRotational:
		r := m.Rotational
		if r == nil {
			return errors.New("rotational model without its rotational section")
		}
		for _, v := range []float64{r.SeekSqrt, r.SeekLongPerSector, r.PerByte} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("rotational: negative or non-finite cost %v", v)
			}
		}
		if r.Revolution < 0 {
			return fmt.Errorf("rotational revolution_ns %d < 0", r.Revolution)
		}
		if err := r.Residual.validate(); err != nil {
			return fmt.Errorf("rotational residual_ns: %w", err)
		}
		if err := r.SeqResidual.validate(); err != nil {
			return fmt.Errorf("rotational seq_residual_ns: %w", err)
		}
	default:
		return fmt.Errorf("invalid device model kind %q", m.Kind)
	}
	return m.checkBounds()
}

// Save writes m as indented JSON (the form doc.go describes).
func (m *Model) Save(w io.Writer) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("saving device model: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// Load reads a model Save wrote, rejecting unknown fields, other versions
// and inconsistent parameters. A version 1 model (no batching) is returned
// as the current Version, which it is a special case of.
func Load(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("reading device model: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("reading device model: %w", err)
	}
	m.Version = Version
	return &m, nil
}
