package device

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// openProbe opens path for direct I/O, skipping the test where the file
// system refuses O_DIRECT (tmpfs).
func openProbe(t *testing.T, path string, write bool) *os.File {
	t.Helper()
	f, err := OpenDirect(path, write)
	if errors.Is(err, ErrDirectIO) {
		t.Skipf("%s: direct I/O refused here", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// probeClock returns a clock for Probe that moves 50 us each time it is
// read: a step's length is then a count of the probe's readings, not wall
// time a loaded machine stretches (with time.Now a slow fdatasync could
// leave the last steps no room, and the test failed on a busy machine).
func probeClock() func() time.Time {
	var now time.Time
	return func() time.Time { now = now.Add(50 * time.Microsecond); return now }
}

func TestProbeNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.img")
	if err := CreateZeroFile(path, 16<<20); err != nil {
		t.Fatal(err)
	}
	f := openProbe(t, path, true)
	size, err := TargetSize(f)
	if err != nil || size != 16<<20 {
		t.Fatalf("size %d, %v", size, err)
	}
	if holds, err := HoldsData(f, size); err != nil || holds {
		t.Fatalf("a new zero-filled file holds data: %v %v", holds, err)
	}
	// The probe's clock moves 50 us a reading (probeClock): the budget is
	// shared out in readings, so a loaded machine cannot starve a step.
	clock := probeClock()
	opts := ProbeOptions{Budget: 800 * time.Millisecond, Depths: []int{1, 4}, Sizes: []uint32{4 << 10, 64 << 10}, Writes: true, Now: clock}
	start := clock()
	res, err := Probe(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Each step gets a share of the time left, so the sweep overruns the
	// budget by at most the last step's drain: its requests in flight at
	// the deadline (a flush step's write and flush one after the other),
	// so twice the slowest request, the 2 ms gap, and the readings of
	// the step's end (100 ms is 2,000 of them).
	var slowest time.Duration
	for _, r := range res.Requests {
		slowest = max(slowest, time.Duration(r.Complete-r.Issue))
	}
	if el := clock().Sub(start); el > opts.Budget+2*slowest+100*time.Millisecond {
		t.Errorf("sweep took %v for a budget of %v (slowest request %v)", el, opts.Budget, slowest)
	}
	// 2 ops x 2 patterns x 2 sizes x 2 depths and the flush step: every
	// one runs, the budget shared among them.
	if len(res.Steps) != 17 || res.Skipped != 0 || len(res.Spans) != 17 {
		t.Fatalf("%d steps run (%d spans), %d skipped, want all 17", len(res.Steps), len(res.Spans), res.Skipped)
	}
	flushes := 0
	for _, r := range res.Requests {
		if r.Bytes == 0 && r.Cat&trace.CatFlush != 0 {
			flushes++
		}
	}
	if flushes == 0 {
		t.Error("no flush measured")
	}
	for i, sp := range res.Spans {
		for _, r := range res.Requests[sp.First:sp.End] {
			if r.Issue < sp.Start || r.Complete > sp.Stop {
				t.Fatalf("step %s: request %+v outside its span %+v", res.Steps[i], r, sp)
			}
		}
		if i > 0 && sp.Start <= res.Spans[i-1].Stop {
			t.Errorf("step %s overlaps the one before", res.Steps[i])
		}
	}
	type key struct {
		write bool
		size  uint32
	}
	seen := map[key]int{}
	for _, r := range res.Requests {
		if !r.Issue.Valid() || r.Complete < r.Issue || r.Sector*512+uint64(r.Bytes) > uint64(size) {
			t.Fatalf("bad request %+v", r)
		}
		seen[key{r.Cat.IsWrite(), r.Bytes}]++
	}
	for _, st := range res.Steps {
		if seen[key{st.Write, st.Size}] == 0 {
			t.Errorf("step %s: no request", st)
		}
	}
	cov := CoverageOf(res.Requests)
	// A step keeps at most Depth requests in flight, and a qd4 step more
	// than one.
	qd4 := slices.ContainsFunc(res.Steps, func(s ProbeStep) bool { return s.Depth == 4 })
	if cov.MaxDepth > 4 || qd4 && cov.MaxDepth < 2 {
		t.Errorf("max depth %d, want 2-4", cov.MaxDepth)
	}
	for _, o := range cov.Ops {
		if o.Op == "other" {
			if o.MinBytes != 0 || o.MaxBytes != 0 {
				t.Errorf("flushes of %d-%d bytes", o.MinBytes, o.MaxBytes)
			}
			continue
		}
		if o.MinBytes < 4<<10 || o.MaxBytes > 64<<10 {
			t.Errorf("ops %+v: sizes outside the sweep's", cov.Ops)
		}
	}
	m, _, err := Calibrate(res.Requests, CalibrateOptions{Kind: KindNonRotational, NoBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// The flushes are the model's "other" class, and a replayed flush
	// (the flush step's, each at its measured time) costs what the
	// file's fdatasync measured, not a 4 KiB write.
	if m.NonRotational.Other == nil {
		t.Fatal("no flush class in the model")
	}
	for _, s := range res.StepFits(m, 1) {
		t.Logf("%-24s %6d requests, mean %v, model %v (%+.0f%%)", s.Step, s.Requests, s.Mean, s.ModelMean, 100*s.Error())
		if strings.HasPrefix(s.Step, "flush") && (s.ModelMean > 2*s.Mean || 2*s.ModelMean < s.Mean) {
			t.Errorf("flush step: measured mean %v, model %v", s.Mean, s.ModelMean)
		}
	}
}

func TestHoldsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.img")
	b := make([]byte, 8<<20)
	b[5<<20+17] = 1 // one byte, away from the start
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f := openProbe(t, path, false)
	holds, err := HoldsData(f, int64(len(b)))
	if err != nil || !holds {
		t.Errorf("HoldsData = %v, %v; want true", holds, err)
	}
}

func TestCoverageOutside(t *testing.T) {
	// Calibration: 100 reads of 4 KiB one at a time.
	var cal []trace.Request
	for i := range 100 {
		t0 := trace.Time(i) * 1000
		cal = append(cal, trace.Request{ID: uint64(i + 1), Cat: trace.CatRead, Bytes: 4096, Issue: t0, Complete: t0 + 500})
	}
	// Use: 30 reads of 1 MiB, ten at a time (k = 1..10), and 5 writes.
	var use []trace.Request
	for i := range 30 {
		t0 := trace.Time(i/10) * 10000
		use = append(use, trace.Request{ID: uint64(i + 1), Cat: trace.CatRead, Bytes: 1 << 20, Issue: t0 + trace.Time(i%10), Complete: t0 + 5000})
	}
	for i := range 5 {
		t0 := trace.Time(100000 + i*1000)
		use = append(use, trace.Request{ID: uint64(100 + i), Cat: trace.CatWrite, Bytes: 4096, Issue: t0, Complete: t0 + 500})
	}
	c, u := CoverageOf(cal), CoverageOf(use)
	if c.MaxDepth != 1 || u.MaxDepth != 10 {
		t.Fatalf("max depth %d / %d, want 1 / 10", c.MaxDepth, u.MaxDepth)
	}
	got := c.Outside(u)
	// k = 2..10 for 27 of the 35 requests (three bunches of ten, the first
	// of each alone): 77.1 %; 1 MiB reads against 4 KiB; writes unseen.
	if len(got) != 3 {
		t.Fatalf("Outside = %q, want 3 sentences", got)
	}
	if want := "77.1% of the predicted requests were issued at depths"; got[0][:len(want)] != want {
		t.Errorf("%q", got[0])
	}
	if len(c.Outside(c)) != 0 {
		t.Errorf("a calibration is outside itself: %q", c.Outside(c))
	}
}

func TestPool(t *testing.T) {
	rq := func(id uint64, d, c trace.Time) trace.Request {
		return trace.Request{ID: id, Queue: d, Get: d, Insert: d, Issue: d, Complete: c}
	}
	a := []trace.Request{rq(1, 100, 200), rq(2, 150, 400)}
	b := []trace.Request{rq(1, 50, 90)}
	p := Pool(a, b)
	if len(p) != 3 || p[0].Issue != 0 || p[1].Complete != 300 || p[2].Issue != 300+poolGap || p[2].ID != 3 {
		t.Errorf("%+v", p)
	}
	if a[0].Issue != 100 {
		t.Error("Pool modified its input")
	}
}

// With Passes, every cell of the grid runs that many times, the passes in
// different orders, and StepFits takes a cell's runs together.
func TestProbePasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.img")
	if err := CreateZeroFile(path, 16<<20); err != nil {
		t.Fatal(err)
	}
	f := openProbe(t, path, true)
	clock := probeClock()
	opts := ProbeOptions{Budget: 500 * time.Millisecond, Depths: []int{1}, Sizes: []uint32{4 << 10}, Writes: true, Passes: 2, Now: clock}
	res, err := Probe(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The flush step and read/write x random/sequential, twice.
	if len(res.Steps) != 10 || res.Skipped != 0 {
		t.Fatalf("%d steps, %d skipped, want 10", len(res.Steps), res.Skipped)
	}
	if slices.Equal(res.Steps[:5], res.Steps[5:]) {
		t.Errorf("both passes in the order %v", res.Steps[:5])
	}
	runs := map[string]int{}
	want := map[string]int{}
	for i, st := range res.Steps {
		runs[st.String()]++
		for _, q := range res.Requests[res.Spans[i].First:res.Spans[i].End] {
			if !st.Flush || q.Bytes == 0 {
				want[st.String()]++
			}
		}
	}
	m, _, err := Calibrate(res.Requests, CalibrateOptions{Kind: KindNonRotational, NoBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	fits := res.StepFits(m, 1)
	if len(fits) != 5 {
		t.Fatalf("%d cells, want 5: %+v", len(fits), fits)
	}
	for _, s := range fits {
		if runs[s.Step] != 2 || s.Requests != want[s.Step] || s.IOPS <= 0 || s.Mean <= 0 {
			t.Errorf("%+v: ran %d times, %d requests", s, runs[s.Step], want[s.Step])
		}
	}
}

// A sweep is fitted on all its steps. Two steps of 4 KiB reads one at a
// time: 600,000 of 100 us, then 200,000 of 300 us. Their mean is
// (600000*100 + 200000*300) / 800000 = 150 us, which the model's mean must
// give; Calibrate's default window (the middle 524,288 samples, a capture's
// steady stretch) holds another mix of the two (it gave 124 us).
func TestProbeCalibrateWholeSweep(t *testing.T) {
	res := &ProbeResult{}
	at := trace.Time(0)
	for i, st := range []struct {
		n   int
		lat trace.Time
	}{{600000, 100000}, {200000, 300000}} {
		sp := ProbeSpan{First: len(res.Requests), Start: at}
		for range st.n {
			res.Requests = append(res.Requests, trace.Request{ID: uint64(len(res.Requests) + 1), Cat: trace.CatRead, Bytes: 4096,
				Sector: uint64(len(res.Requests)%100000) * 8, Bios: 1, Queue: at, Get: at, Insert: at, Issue: at, Complete: at + st.lat})
			at += st.lat
		}
		sp.End, sp.Stop = len(res.Requests), at
		res.Steps = append(res.Steps, ProbeStep{Sequential: i == 0, Size: 4096, Depth: 1})
		res.Spans = append(res.Spans, sp)
		at += 2000000
	}
	m, fit, err := res.Calibrate(1, 64)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Fitted != 0 || fit.N != 800000 {
		t.Errorf("fitted %d of %d samples, want all 800000", fit.Fitted, fit.N)
	}
	if got := float64(fit.ModelMeanD2C); math.Abs(got-150000) > 1500 {
		t.Errorf("model mean %v, want 150µs", fit.ModelMeanD2C)
	}
	if m.Coverage == nil || m.Coverage.Requests != 800000 {
		t.Errorf("coverage %+v", m.Coverage)
	}
}

// A budget too short for the grid runs an even spread of it, and always
// the flush step, the model's only flushes.
func TestProbeThinKeepsFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.img")
	if err := CreateZeroFile(path, 16<<20); err != nil {
		t.Fatal(err)
	}
	f := openProbe(t, path, true)
	// 1 flush step + 2 ops x 2 patterns x 3 sizes x 3 depths = 37 steps;
	// 60 ms has room for 5 of 12 ms (10 ms and the 2 ms gap).
	opts := ProbeOptions{Budget: 60 * time.Millisecond, Depths: []int{1, 2, 4}, Sizes: []uint32{4 << 10, 16 << 10, 64 << 10}, Writes: true}
	res, err := Probe(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps)+res.Skipped != 37 || len(res.Steps) > 5 {
		t.Errorf("%d steps run, %d skipped: want at most 5 of 37", len(res.Steps), res.Skipped)
	}
	if !slices.ContainsFunc(res.Steps, func(s ProbeStep) bool { return s.Flush }) {
		t.Errorf("steps %v: no flush step", res.Steps)
	}
}
