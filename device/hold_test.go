package device

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestHeldDraw: with a hold of 1 ms, a draw made at 0 by a request
// still on the device holds for the requests issued at 0.5 ms and 1 ms
// (within 1 ms of it, not of each other); the one at 1.5 ms draws anew
// and holds from there, but not for one issued at 2 ms once it has left
// the device.
func TestHeldDraw(t *testing.T) {
	var d heldDraw
	h := trace.Time(time.Millisecond)
	rqs := make([]replay.Request, 6)
	for i, c := range []struct {
		now  trace.Time
		on   bool // the holder is on the device
		u    float64
		want float64
	}{
		{0, false, 0.1, 0.1},
		{500_000, true, 0.2, 0.1},
		{1_000_000, true, 0.3, 0.1},
		{1_500_000, true, 0.4, 0.4},
		{2_000_000, false, 0.5, 0.5},
		{2_400_000, true, 0.6, 0.5},
	} {
		if got := d.hold(c.now, h, &rqs[i], c.on, c.u); got != c.want {
			t.Errorf("hold at %d ns (holder on the device: %v) with u %v: %v, want %v", c.now, c.on, c.u, got, c.want)
		}
	}
}

// TestTimingHold: a write class of 1 ms whose residual is 2u for the
// draw u, with a hold of 1 ms. Issued at 0, 10 us and 2 ms, the first
// two take the first draw (equal D2C, that of the device without the
// hold's first request), the third its own (that of the device without
// the hold's third, whose generator drew as many numbers). Reads keep
// drawing their own: the hold is the write class's.
func TestTimingHold(t *testing.T) {
	mk := func(hold time.Duration) *Model {
		return &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
			Parallelism: 64,
			Read:        &OpTiming{Base: time.Millisecond, Residual: Quantiles{P: []float64{0, 1}, X: []float64{0, 2}}},
			Write:       &OpTiming{Base: time.Millisecond, Residual: Quantiles{P: []float64{0, 1}, X: []float64{0, 2}}, Hold: hold},
		}}
	}
	times := []trace.Time{0, 10_000, 2_000_000}
	d2c := func(m *Model, cat trace.Category) []trace.Time {
		dev := m.NewDevice(7)
		var out []trace.Time
		for i, at := range times {
			rq := &replay.Request{ID: uint64(i + 1), Sector: uint64(i) * 10000, Bytes: 4096, Cat: cat}
			out = append(out, dev.Issue(at, rq)-at)
		}
		return out
	}
	held, free := d2c(mk(time.Millisecond), trace.CatWrite), d2c(mk(0), trace.CatWrite)
	if free[0] == free[1] {
		t.Fatalf("independent draws gave equal D2C %v: the test cannot tell a hold", free)
	}
	if held[0] != free[0] || held[1] != free[0] || held[2] != free[2] {
		t.Errorf("writes with a 1 ms hold: D2C %v, want %v, %v, %v (the free device's %v)", held, free[0], free[0], free[2], free)
	}
	for _, d := range free {
		if d < 0 || d > 2*trace.Time(time.Millisecond) {
			t.Errorf("D2C %v outside [0, 2 ms] for a 1 ms mean and residual 2u", d)
		}
	}
	if r, f := d2c(mk(time.Millisecond), trace.CatRead), d2c(mk(0), trace.CatRead); r[0] != f[0] || r[1] != f[1] || r[2] != f[2] {
		t.Errorf("reads with the writes' hold: D2C %v, want the free device's %v", r, f)
	}
}

// holdSamples returns 200 pairs of 1 ms writes (mean 1 ms, no load),
// the two of a pair issued 5 us apart, the pairs 20 ms apart; the pairs
// slow returns true for take 10 ms (residual 10), the others 1 ms.
func holdSamples(slow func(pair, member int) bool) []sample {
	var ss []sample
	for p := range 200 {
		for j := range 2 {
			d := 1e6
			if slow(p, j) {
				d = 10e6
			}
			at := trace.Time(p)*20_000_000 + trace.Time(j)*5_000
			ss = append(ss, sample{issue: at, done: at + trace.Time(d), d2c: d, k: 1, op: OpWrite, bytes: 4096, write: true})
		}
	}
	return ss
}

// TestFitHold: 16 of 200 pairs slow in both members (8 %, so the
// 0.9-quantile of the residuals is 1 and the slow ones are the tail):
// 16 tail requests followed within 10 us, all 16 followers in the tail
// too, nothing in 10-100 us: the hold is 10 us. The same 32 slow
// requests as the first members of 32 pairs, their followers fast: 0 of
// 32, no hold.
func TestFitHold(t *testing.T) {
	n := &NonRotational{Parallelism: 64, Write: &OpTiming{Base: time.Millisecond}}
	fitHold(n, holdSamples(func(p, _ int) bool { return p%12 == 0 && p < 192 }))
	if n.Write.Hold != 10*time.Microsecond {
		t.Errorf("pairs slow together: hold %v, want 10µs", n.Write.Hold)
	}
	fitHold(n, holdSamples(func(p, j int) bool { return j == 0 && p%6 == 0 && p < 192 }))
	if n.Write.Hold != 0 {
		t.Errorf("slow requests followed by fast ones: hold %v, want 0", n.Write.Hold)
	}
}

// TestHoldUntar: fs-bfq-untar and fs-mqdl-untar (ext4 on a loop
// device: tar, then sync, whose 33 writes of 512 KiB the loop device
// completes in issue order 0.07-0.93 ms apart). The capture's writes in
// their slowest tenth are followed within 1 ms by writes in it as well
// about two times in three, so the model holds the writes' draws for
// 1 ms (CalibrateOptions.HeldDraws); the capture's own issues replayed through it (every request at
// its real D with the real requests on the device) must end sync's
// burst as the capture did: the mean over 8 seeds of the largest
// modelled D2C of sync's writes within 15 % of the capture's (13.43 ms,
// 14.34 ms). With independent draws (a hold of 0) the burst ends on its
// slowest draw: 15.56 ms and 18.22 ms.
func TestHoldUntar(t *testing.T) {
	for _, name := range []string{"fs-bfq-untar", "fs-mqdl-untar"} {
		dir := shared.Path(t, "captures", "recorded-fs", name)
		reqs := readRequestsInternal(t, filepath.Join(dir, name))
		var syncPID uint32
		for _, r := range reqs {
			if r.Comm == "sync" {
				syncPID = r.PID
			}
		}
		if syncPID == 0 {
			t.Fatalf("%s: no sync process", name)
		}
		m, _, err := Calibrate(reqs, CalibrateOptions{Seed: 1, HeldDraws: true})
		if err != nil {
			t.Fatal(err)
		}
		n := m.NonRotational
		if n == nil || n.Batching != nil || n.Write == nil {
			t.Fatalf("%s: model %v without a write class, or with batching", name, m.Kind)
		}
		if n.Write.Hold != time.Millisecond {
			t.Errorf("%s: writes' hold %v, want 1ms", name, n.Write.Hold)
		}
		c := prepare(reqs)
		largest := func(d2c func(i int) float64) float64 {
			v := 0.0
			for i, s := range c.samples {
				if c.rqs[s.req].PID == syncPID && s.op == OpWrite {
					v = max(v, d2c(i))
				}
			}
			return v
		}
		real := largest(func(i int) float64 { return c.samples[i].d2c })
		var sum float64
		const seeds = 8
		for seed := uint64(1); seed <= seeds; seed++ {
			p := c.predict(m, seed)
			sum += largest(func(i int) float64 { return p[i] })
		}
		mean := sum / seeds
		t.Logf("%s: hold %v; sync's largest write D2C %.2f ms, model %.2f ms (mean of %d seeds)", name, n.Write.Hold, real/1e6, mean/1e6, seeds)
		if !(mean >= 0.85*real && mean <= 1.15*real) {
			t.Errorf("%s: sync's largest write D2C %.2f ms in the model (mean of %d seeds), capture %.2f ms: want within 15%%", name, mean/1e6, seeds, real/1e6)
		}
	}
}

// TestTimingHoldLeft: a draw holds only while the request that drew it
// is on the device. A write completes (Done) at 5 us; the next, issued
// at 10 us in the same struct with a new ID, draws its own: its D2C is
// the free device's second, not the first.
func TestTimingHoldLeft(t *testing.T) {
	mk := func(hold time.Duration) *Model {
		return &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
			Parallelism: 64,
			Write:       &OpTiming{Base: time.Millisecond, Residual: Quantiles{P: []float64{0, 1}, X: []float64{0, 2}}, Hold: hold},
		}}
	}
	run := func(m *Model) [2]trace.Time {
		dev := m.NewDevice(7)
		rq := &replay.Request{ID: 1, Bytes: 4096, Cat: trace.CatWrite}
		a := dev.Issue(0, rq)
		dev.Done(5_000, rq)
		rq.ID, rq.Sector = 2, 8
		return [2]trace.Time{a, dev.Issue(10_000, rq) - 10_000}
	}
	held, free := run(mk(time.Millisecond)), run(mk(0))
	if free[0] == free[1] {
		t.Fatalf("independent draws gave equal D2C %v", free)
	}
	if held != free {
		t.Errorf("with a 1 ms hold and the holder gone: D2C %v, want the free device's %v", held, free)
	}
}
