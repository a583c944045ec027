package device

import (
	"math"
	"testing"
	"time"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestInFlightBounds checks prepare's in-flight walk on requests whose D
// or C the capture lacks, against counts worked out by hand (times in us):
//
//	X  no D (in flight at the start), C 50,  8 KiB: on the device 0-50
//	   (its C within the largest D2C, 100, of the start)
//	A  D 0,   C 100,  4 KiB
//	B  D 10,  C 60,   4 KiB
//	N  D 200, no C,  64 KiB: on the device 200-210 (D + the median D2C:
//	   of 100, 50, 10 and 10, the lower middle one, 10)
//	S1 D 205, C 215,  4 KiB
//	S2 D 250, C 260,  4 KiB
//	F  no D, C 500,   0 B: the zero-byte completion that ends a flush
//	   sequence, 500 us after the start: never on the device
//
// A sees X and itself (k 2, 8 KiB ahead); B sees X, A and itself (k 3,
// 12 KiB ahead); S1 sees N (k 2, 64 KiB ahead); S2 sees nothing (k 1).
// Before the bounds F was on the device from 0 to 500 and N forever:
// k 3, 4, 4 and 4, and S2 saw N's 64 KiB ahead.
func TestInFlightBounds(t *testing.T) {
	us := func(v float64) trace.Time { return trace.Time(v * 1e3) }
	rq := func(id uint64, sector uint64, bytes uint32, d, c trace.Time) trace.Request {
		r := trace.Request{ID: id, Sector: sector, Bytes: bytes, Cat: trace.CatWrite, Queue: d, Insert: d, Issue: d, Complete: c}
		if !d.Valid() {
			r.Flags |= trace.FlagNoQueue
		}
		if !c.Valid() {
			r.Flags |= trace.FlagIncomplete
		}
		return r
	}
	reqs := []trace.Request{
		rq(1, 1000, 8192, trace.NoTime, us(50)),   // X
		rq(2, 2000, 4096, us(0), us(100)),         // A
		rq(3, 3000, 4096, us(10), us(60)),         // B
		rq(4, 4000, 65536, us(200), trace.NoTime), // N
		rq(5, 5000, 4096, us(205), us(215)),       // S1
		rq(6, 6000, 4096, us(250), us(260)),       // S2
		rq(7, 7000, 0, trace.NoTime, us(500)),     // F
	}
	reqs[6].Cat = trace.CatWrite | trace.CatSync
	if longest, typical := d2cBounds(reqs); longest != us(100) || typical != us(10) {
		t.Fatalf("d2cBounds %v, %v: want 100 and 10 us", longest, typical)
	}
	c := prepare(reqs)
	want := []struct {
		id    uint64
		k     int
		ahead float64
	}{{2, 2, 8192}, {3, 3, 12288}, {5, 2, 65536}, {6, 1, 0}}
	if len(c.samples) != len(want) {
		t.Fatalf("%d samples, want %d", len(c.samples), len(want))
	}
	for i, w := range want {
		s := c.samples[i]
		if r := reqs[w.id-1]; s.issue != r.Issue || s.k != w.k || s.ahead != w.ahead {
			t.Errorf("sample %d (request %d): issue %v k %d ahead %v, want %v, %d, %v", i, w.id, s.issue, s.k, s.ahead, r.Issue, w.k, w.ahead)
		}
	}
	// N's lapse is no completion: S2's service starts at S1's C, and the
	// head before S2 is S1's end.
	s2 := c.samples[3]
	if !s2.hasPrev || s2.service != float64(us(10)) || s2.head != 5000+8 {
		t.Errorf("S2: service %v head %d (known %v), want 10 us after S1 and head 5008", s2.service, s2.head, s2.hasPrev)
	}
}

// TestInFlightRecordedPgbench: in recorded-fs/fs-bfq-pgbench each flush
// sequence ends in a zero-byte completion without a D (2168 of them) and
// no request lacks its C, so the requests on the device at each D are
// exactly those the capture shows issued and not yet completed. Counted
// here straight from the requests, every sample must see that count;
// before the bounds the zero-byte completions stayed on the device from
// the capture's start and k climbed past 2000.
func TestInFlightRecordedPgbench(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-pgbench")
	reqs := fixture.Requests(t, dir+"/fs-bfq-pgbench")
	var noD int
	type span struct {
		d, c trace.Time
		id   uint64
	}
	var spans []span
	for _, r := range reqs {
		if r.Flags&trace.FlagMergedAway != 0 {
			continue
		}
		switch {
		case r.Issue.Valid() && r.Complete.Valid():
			spans = append(spans, span{r.Issue, r.Complete, r.ID})
		case r.Complete.Valid():
			noD++
		case r.Issue.Valid():
			t.Fatalf("request %d has no C: the test's count assumes none", r.ID)
		}
	}
	if noD != 2168 {
		t.Fatalf("%d requests without a D, want the 2168 the capture has", noD)
	}
	c := prepare(reqs)
	maxK, checked := 0, 0
	for i, s := range c.samples {
		maxK = max(maxK, s.k)
		if i%97 != 0 { // a spread of them: the count below is quadratic
			continue
		}
		// On the device just after this D: issued before it and completed
		// after it, or issued at the same time with an ID up to its own
		// (prepare orders equal times by ID, completions first).
		self := uint64(0)
		for _, sp := range spans {
			if sp.d == s.issue && sp.c == s.done && self == 0 {
				self = sp.id
			}
		}
		k := 0
		for _, sp := range spans {
			if (sp.d < s.issue && sp.c > s.issue) || (sp.d == s.issue && sp.id <= self) {
				k++
			}
		}
		if s.k != k {
			t.Errorf("sample %d issued at %v: k %d, want %d", i, s.issue, s.k, k)
		}
		checked++
	}
	if maxK > 64 {
		t.Errorf("the most requests on the device at a D is %d: the zero-byte completions are counted", maxK)
	}
	t.Logf("%d samples checked, the most on the device %d", checked, maxK)
}

// TestAheadLatency times requests on a model with a bytes-ahead term, by
// hand: a 4 KiB write behind a 1 MiB read waits 1 ns per byte ahead after
// its own 30 us + 4 ns/B (no residual); the flush behind both waits for
// their 1 MiB + 4 KiB after its 200 us.
func TestAheadLatency(t *testing.T) {
	m := &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
		Parallelism: 64,
		Read:        &OpTiming{Base: 60 * time.Microsecond, PerByte: 2},
		Write:       &OpTiming{Base: 30 * time.Microsecond, PerByte: 4, Ahead: 1},
		Other:       &OpTiming{Base: 200 * time.Microsecond, Ahead: 1},
	}}
	dev := m.NewDevice(1)
	read := &replay.Request{ID: 1, Sector: 0, Bytes: 1 << 20, Cat: trace.CatRead}
	write := &replay.Request{ID: 2, Sector: 1 << 12, Bytes: 4096, Cat: trace.CatWrite}
	flush := &replay.Request{ID: 3, Cat: trace.CatWrite | trace.CatFlush}
	if got, want := dev.Issue(0, read), trace.Time(60e3+2*(1<<20)); got != want {
		t.Errorf("read done at %v, want %v (nothing ahead)", got, want)
	}
	if got, want := dev.Issue(0, write), trace.Time(30e3+4*4096+(1<<20)); got != want {
		t.Errorf("write done at %v, want %v", got, want)
	}
	if got, want := dev.Issue(0, flush), trace.Time(200e3+(1<<20)+4096); got != want {
		t.Errorf("flush done at %v, want %v", got, want)
	}
	dev.Done(10, read)
	dev.Done(10, write)
	dev.Done(10, flush)
	if got, want := dev.Issue(20, write), trace.Time(20+30e3+4*4096); got != want {
		t.Errorf("write on an empty device done at %v, want %v", got, want)
	}
}

// TestFitClassAhead: latencies made exactly 100 us + 0.5 ns per byte of
// the request + 1.25 ns per byte ahead give those coefficients back; with
// no spread in the bytes ahead there is no term.
func TestFitClassAhead(t *testing.T) {
	var xs, as, ys []float64
	for i := range 200 {
		x := float64([]int{4096, 16384, 65536}[i%3])
		a := float64((i % 7) * 131072)
		xs, as, ys = append(xs, x), append(as, a), append(ys, 100e3+0.5*x+1.25*a)
	}
	base, per, ahead := fitClass(xs, as, ys)
	if math.Abs(base-100e3) > 1 || math.Abs(per-0.5) > 1e-6 || math.Abs(ahead-1.25) > 1e-6 {
		t.Errorf("fit %v + %v/B + %v/B ahead, want 100000 + 0.5 + 1.25", base, per, ahead)
	}
	flat := make([]float64, len(as))
	if _, _, ahead := fitClass(xs, flat, ys); ahead != 0 {
		t.Errorf("no bytes ahead anywhere: ahead %v, want 0", ahead)
	}
}

// TestCalibrateBytesAhead calibrates a device made by hand that serves
// data in turn, as a loop device's worker does: a 1 MiB or 512 KiB read
// takes 60 us + 1 ns per byte, and a 4 KiB write takes 50 us + 1 ns per
// byte of the read ahead of it (none, 512 KiB or 1 MiB, in turn). Counting
// requests, a write behind either read sees k = 2 and takes 0.57 or 1.1
// ms; only the bytes ahead tell them apart, so the model keeps them
// (Fit.Load) with the write's 1 ns per byte.
func TestCalibrateBytesAhead(t *testing.T) {
	var reqs []trace.Request
	id := uint64(0)
	add := func(sector uint64, bytes uint32, cat trace.Category, d, c trace.Time) {
		id++
		reqs = append(reqs, trace.Request{ID: id, PID: 1, Sector: sector, Bytes: bytes, Cat: cat, Queue: d, Insert: d, Issue: d, Complete: c})
	}
	const period = 5 * trace.Time(time.Millisecond)
	for i := range 600 {
		t0 := trace.Time(i) * period
		ahead := uint32([]int{0, 512 << 10, 1 << 20}[i%3])
		if ahead > 0 {
			add(uint64(i)*4096, ahead, trace.CatRead, t0, t0+60e3+trace.Time(ahead))
		}
		add(uint64(i)*4096+3000, 4096, trace.CatWrite, t0+1000, t0+1000+50e3+trace.Time(ahead))
	}
	m, fit, err := Calibrate(reqs, CalibrateOptions{Kind: KindNonRotational, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if fit.Load != "bytes ahead" {
		t.Errorf("load measured by %q, want bytes ahead", fit.Load)
	}
	w := m.NonRotational.Write
	if w == nil || math.Abs(w.Ahead-1) > 0.05 {
		t.Fatalf("write class %+v: want 1 ns per byte ahead", w)
	}
	if b := float64(w.Base) + 4096*w.PerByte; math.Abs(b-50e3) > 2e3 {
		t.Errorf("write alone %v ns, want 50000", b)
	}
}

// TestUnloaded: step 5 considers a flat model only where fewer than 1 in
// 20 samples saw another request on the device.
func TestUnloaded(t *testing.T) {
	ss := make([]sample, 100)
	for i := range ss {
		ss[i].k = 1
	}
	for i := range 4 {
		ss[i].k = 2
	}
	if !unloaded(ss) {
		t.Errorf("4 of 100 loaded: want unloaded")
	}
	ss[4].k = 3
	if unloaded(ss) {
		t.Errorf("5 of 100 loaded: want loaded")
	}
}
