package device

import (
	"fmt"
	"math"
	"time"
)

// Physical bounds a device model must keep (Validate checks them), so that
// no value read from a device.json can make a request's service time
// overflow or a replay's span, and everything sized by it, explode.
const (
	// MaxServiceTime bounds every fixed cost of a model (base_ns,
	// overhead_ns, revolution_ns, ...) and every cost term at its bound
	// operand below: the block layer's default request timeout (30 s,
	// BLK_DEFAULT_SG_TIMEOUT / the SCSI disk timeout), past which the
	// kernel aborts a request.
	MaxServiceTime = 30 * time.Second
	// boundBytes is the request size at which PerByte is bounded: 1 MiB
	// may not take more than MaxServiceTime (28.6 us per byte, 35 KB/s).
	boundBytes = 1 << 20
	// boundSectors is the seek distance at which the seek terms are
	// bounded: 2^32 sectors (2 TiB).
	boundSectors = 1 << 32
	// maxFactor bounds the dimensionless multipliers: residual quantiles,
	// in-flight factors, the saturation slope, the sequential-stream
	// factor (which is also at least 1/maxFactor when set).
	maxFactor = 1e4
	// maxParallelism bounds NonRotational.Parallelism (blk-mq tags per
	// hardware queue are at most 10240, BLK_MQ_MAX_DEPTH).
	maxParallelism = 10240
)

// checkBounds reports the first value of m outside the physical bounds.
// Validate calls it after its consistency checks.
func (m *Model) checkBounds() error {
	const max = float64(MaxServiceTime)
	dur := func(name string, d time.Duration, signed bool) error {
		if d > MaxServiceTime || (!signed && d < 0) || (signed && d < -MaxServiceTime) {
			if !signed && d < 0 {
				return fmt.Errorf("%s %d is negative", name, d)
			}
			return fmt.Errorf("%s %d is beyond the physical bound of %v (device.MaxServiceTime)", name, d, MaxServiceTime)
		}
		return nil
	}
	term := func(name string, v, at float64, unit string) error {
		if v*at > max {
			return fmt.Errorf("%s %g gives %.3g s at %g %s, beyond the physical bound of %v (device.MaxServiceTime)", name, v, v*at/1e9, at, unit, MaxServiceTime)
		}
		return nil
	}
	factors := func(name string, q Quantiles) error {
		for _, x := range q.X {
			if math.Abs(x) > maxFactor {
				return fmt.Errorf("%s: multiplier %g beyond %g", name, x, float64(maxFactor))
			}
		}
		return nil
	}
	nsTable := func(name string, q Quantiles) error {
		for _, x := range q.X {
			if math.Abs(x) > max {
				return fmt.Errorf("%s: %g ns beyond the physical bound of %v (device.MaxServiceTime)", name, x, MaxServiceTime)
			}
		}
		return nil
	}
	first := func(errs ...error) error {
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		return nil
	}
	if n := m.NonRotational; m.Kind == KindNonRotational && n != nil {
		if n.Parallelism > maxParallelism {
			return fmt.Errorf("nonrotational parallelism %d beyond %d (BLK_MQ_MAX_DEPTH)", n.Parallelism, maxParallelism)
		}
		if n.Slope > maxFactor {
			return fmt.Errorf("nonrotational saturation_slope %g beyond %g", n.Slope, float64(maxFactor))
		}
		for _, f := range n.Factors {
			if f > maxFactor {
				return fmt.Errorf("nonrotational inflight_factors: %g beyond %g", f, float64(maxFactor))
			}
		}
		for o := Op(0); o < numOps; o++ {
			t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
			if t == nil {
				continue
			}
			if t.Seq > maxFactor || (t.Seq > 0 && t.Seq < 1/maxFactor) {
				return fmt.Errorf("nonrotational %s sequential_factor %g not in [%g, %g]", o, t.Seq, 1/maxFactor, float64(maxFactor))
			}
			if err := first(dur(fmt.Sprintf("nonrotational %s base_ns", o), t.Base, false),
				dur(fmt.Sprintf("nonrotational %s residual_hold_ns", o), t.Hold, false),
				term(fmt.Sprintf("nonrotational %s per_byte_ns", o), t.PerByte, boundBytes, "bytes"),
				term(fmt.Sprintf("nonrotational %s ahead_per_byte_ns", o), t.Ahead, boundBytes, "bytes"),
				factors(fmt.Sprintf("nonrotational %s residual", o), t.Residual),
				factors(fmt.Sprintf("nonrotational %s sequential_residual", o), t.SeqResidual)); err != nil {
				return err
			}
			for _, q := range t.ByInflight {
				if err := factors(fmt.Sprintf("nonrotational %s residual_by_inflight", o), q); err != nil {
					return err
				}
			}
			for i, b := range t.Sizes {
				if err := factors(fmt.Sprintf("nonrotational %s size_factors[%d] residual", o, i), b.Residual); err != nil {
					return err
				}
			}
		}
		if b := n.Batching; b != nil {
			for _, d := range append([]time.Duration{b.JoinLead, b.JoinWindow, b.Drain, b.BunchGap}, append(append(b.OpDrain, b.OpJoinLead...), b.OpJoinWindow...)...) {
				if err := dur("nonrotational batching duration", d, false); err != nil {
					return err
				}
			}
		}
	}
	if r := m.Rotational; m.Kind == KindRotational && r != nil {
		return first(
			dur("rotational overhead_ns", r.Overhead, false),
			dur("rotational seek_long_base_ns", r.SeekLongBase, false),
			dur("rotational seq_base_ns", r.SeqBase, false),
			dur("rotational revolution_ns", r.Revolution, false),
			dur("rotational write_ns", r.Write, true),
			term("rotational seek_sqrt_ns", r.SeekSqrt, math.Sqrt(boundSectors), "sqrt(sectors)"),
			term("rotational seek_long_per_sector_ns", r.SeekLongPerSector, boundSectors, "sectors"),
			term("rotational per_byte_ns", r.PerByte, boundBytes, "bytes"),
			nsTable("rotational residual_ns", r.Residual),
			nsTable("rotational seq_residual_ns", r.SeqResidual))
	}
	return nil
}

// clampToBounds brings a fitted model within the physical bounds: a fit
// on a capture's own D2C times can extrapolate past them (public/
// hadoop-node8's 1,755 writes fit 168 us per byte, 176 s for 1 MiB), and
// Calibrate must return a model Validate accepts. Each value beyond its
// bound is set to the bound.
func (m *Model) clampToBounds() {
	const max = float64(MaxServiceTime)
	dur := func(d *time.Duration, signed bool) {
		*d = min(*d, MaxServiceTime)
		if signed {
			*d = maxDur(*d, -MaxServiceTime)
		} else {
			*d = maxDur(*d, 0)
		}
	}
	term := func(v *float64, at float64) { *v = math.Min(*v, max/at) }
	table := func(q Quantiles, bound float64) {
		for i := range q.X {
			q.X[i] = math.Min(math.Max(q.X[i], -bound), bound)
		}
	}
	if n := m.NonRotational; n != nil {
		n.Parallelism = min(n.Parallelism, maxParallelism)
		n.Slope = math.Min(n.Slope, maxFactor)
		dur(&n.DepthWindow, false)
		for i := range n.Curves {
			c := &n.Curves[i]
			for j := range c.Factors {
				c.Factors[j] = math.Min(c.Factors[j], maxFactor)
			}
			table(c.Residual, maxFactor)
			for _, q := range c.ByInflight {
				table(q, maxFactor)
			}
		}
		for i := range n.Factors {
			n.Factors[i] = math.Min(n.Factors[i], maxFactor)
		}
		for _, t := range [...]*OpTiming{n.Read, n.Write, n.Other} {
			if t == nil {
				continue
			}
			dur(&t.Base, false)
			dur(&t.Hold, false)
			term(&t.PerByte, boundBytes)
			term(&t.Ahead, boundBytes)
			if t.Seq > 0 {
				t.Seq = math.Min(math.Max(t.Seq, 1/maxFactor), maxFactor)
			}
			table(t.Residual, maxFactor)
			table(t.SeqResidual, maxFactor)
			for _, q := range t.ByInflight {
				table(q, maxFactor)
			}
		}
		if b := n.Batching; b != nil {
			for _, d := range []*time.Duration{&b.JoinLead, &b.JoinWindow, &b.Drain, &b.BunchGap} {
				dur(d, false)
			}
			for _, ds := range [][]time.Duration{b.OpDrain, b.OpJoinLead, b.OpJoinWindow} {
				for i := range ds {
					dur(&ds[i], false)
				}
			}
		}
	}
	if r := m.Rotational; r != nil {
		for _, d := range []*time.Duration{&r.Overhead, &r.SeekLongBase, &r.SeqBase, &r.Revolution} {
			dur(d, false)
		}
		dur(&r.Write, true)
		term(&r.SeekSqrt, math.Sqrt(boundSectors))
		term(&r.SeekLongPerSector, boundSectors)
		term(&r.PerByte, boundBytes)
		table(r.Residual, max)
		table(r.SeqResidual, max)
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
