package device

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// batchModel is flashModel with completions delivered in bunches.
func batchModel() *Model {
	m := flashModel()
	m.NonRotational.Read.Base = 300 * time.Microsecond
	m.NonRotational.Parallelism = 64
	m.NonRotational.Batching = &Batching{JoinLead: 40 * time.Microsecond, JoinWindow: 200 * time.Microsecond, Drain: time.Microsecond}
	return m
}

// TestBatchingPlace checks the bunch rules on a hand-made sequence.
func TestBatchingPlace(t *testing.T) {
	m := batchModel()
	m.NonRotational.Read.Residual = Quantiles{} // exact latencies
	dev := m.NewDevice(1)
	own := trace.Time(300e3 + 2*4096)
	rq := func(id uint64) *replay.Request { return &replay.Request{ID: id, Bytes: 4096, Cat: trace.CatRead} }
	if got := dev.Issue(0, rq(1)); got != own {
		t.Fatalf("opener completes at %d, want its own time %d", got, own)
	}
	// Joiners: n-th one Drain after the instant.
	for i := 1; i <= 3; i++ {
		if got := dev.Issue(trace.Time(i)*10e3, rq(uint64(i+1))); got != own+trace.Time(i)*1000 {
			t.Errorf("joiner %d completes at %d, want %d", i, got, own+trace.Time(i)*1000)
		}
	}
	// Later than the join window after the opener: opens its own bunch.
	if got := dev.Issue(250e3, rq(9)); got <= own+10e3 {
		t.Errorf("request after the join window completes at %d with the bunch", got)
	}
	// Issued less than JoinLead before the instant of the bunch opened last: own bunch.
	dev = m.NewDevice(1)
	dev.Issue(0, rq(1))
	if got := dev.Issue(own-20e3, rq(2)); got != own-20e3+own {
		t.Errorf("late request completes at %d, want its own time %d", got, own-20e3+own)
	}
}

// TestBatchingJoinsOwnClass: a read issued just after a write, within the
// join window and more than JoinLead before the write's instant, completes
// at its own time, not with the write's bunch; a write issued just after a
// read does not complete with the read's. fs-bfq-writeback (6.18, loop):
// the lone 1.25 MiB write dispatched at 2.269547 s completed at 2.273707
// (4.2 ms), the four reads dispatched 43-84 us after it in 0.70-0.73 ms;
// the seven writes dispatched at 2.165467 s completed 4.3 ms later, the
// reads dispatched beside them in 0.1 ms.
func TestBatchingJoinsOwnClass(t *testing.T) {
	m := batchModel()
	m.NonRotational.Read.Residual = Quantiles{}
	m.NonRotational.Write.Residual = Quantiles{}
	m.NonRotational.Write.Base = 4 * time.Millisecond
	m.NonRotational.Write.PerByte = 0
	read := func(id uint64) *replay.Request { return &replay.Request{ID: id, Bytes: 4096, Cat: trace.CatRead} }
	write := func(id uint64) *replay.Request { return &replay.Request{ID: id, Bytes: 1310720, Cat: trace.CatWrite} }

	dev := m.NewDevice(1)
	w := dev.Issue(0, write(1))
	if w < 4e6 {
		t.Fatalf("write completes at %d, want at least its base 4 ms", w)
	}
	// The read takes its own time, Base plus its bytes (the model has no
	// bytes-ahead term), as it would alone on the device.
	own := trace.Time(300e3 + 2*4096)
	if got := dev.Issue(20e3, read(2)); got != 20e3+own {
		t.Errorf("read issued 20 us after the write completes at %d, want its own time %d (the write's bunch is at %d)", got, 20e3+own, w)
	}
	// A write issued 20 us after a read opener: not delivered with the read.
	dev = m.NewDevice(1)
	r := dev.Issue(0, read(1))
	if got := dev.Issue(20e3, write(2)); got <= r+10e3 {
		t.Errorf("write issued 20 us after a read completes at %d, with the read's bunch at %d", got, r)
	}
	// Same class still joins: a second write 20 us after the first.
	dev = m.NewDevice(1)
	w = dev.Issue(0, write(1))
	if got := dev.Issue(20e3, write(2)); got != w+trace.Time(m.NonRotational.Batching.Drain) {
		t.Errorf("second write completes at %d, want with the first's bunch at %d", got, w+trace.Time(m.NonRotational.Batching.Drain))
	}
}

// TestCalibrateBatchingSynthetic recovers a known batching from a capture
// the model made.
func TestCalibrateBatchingSynthetic(t *testing.T) {
	m := batchModel()
	reqs := Synthesize(m, Workload{Streams: 2, Depth: 16, Requests: 20000, Think: 15 * time.Microsecond}, 7)
	got, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 1, Kind: KindNonRotational})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	b := got.NonRotational.Batching
	if b == nil {
		t.Fatal("no batching fitted")
	}
	want := m.NonRotational.Batching
	if d := b.Drain - want.Drain; d < -100 || d > 300 {
		t.Errorf("drain %v, want %v", b.Drain, want.Drain)
	}
	// The capture bounds the join rules: every joiner had at least the
	// true lead and joined within the true window.
	if b.JoinLead < want.JoinLead || b.JoinLead > 300*time.Microsecond {
		t.Errorf("join lead %v, want from %v to the base latency", b.JoinLead, want.JoinLead)
	}
	if b.JoinWindow > want.JoinWindow || b.JoinWindow < 10*time.Microsecond {
		t.Errorf("join window %v, want at most %v", b.JoinWindow, want.JoinWindow)
	}
	if b.JoinedFraction < 0.8 {
		t.Errorf("joined fraction %.3f: the workload keeps 32 requests in each bunch", b.JoinedFraction)
	}
	checkGaps(t, fit.CompletionGaps, 0.03)
	if r := float64(fit.ModelMeanD2C) / float64(fit.MeanD2C); r < 0.95 || r > 1.05 {
		t.Errorf("model mean D2C %v, capture %v: want within 5%%", fit.ModelMeanD2C, fit.MeanD2C)
	}
	if fit.DemeritFraction > 0.10 {
		t.Errorf("demerit %.1f%% of the mean", 100*fit.DemeritFraction)
	}
	// Without batching the same capture's completions spread out.
	_, flat, err := Calibrate(reqs, CalibrateOptions{Seed: 1, Kind: KindNonRotational, NoBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	g, f := fit.CompletionGaps, flat.CompletionGaps
	if math.Abs(f.Real[2]-f.Model[2]) < 3*math.Abs(g.Real[2]-g.Model[2]) {
		t.Errorf("gaps under 5us: capture %.3f, model %.3f with batching, %.3f without: want batching much closer",
			g.Real[2], g.Model[2], f.Model[2])
	}
}

// TestCalibrateBatchingFixture checks that the fixture's model reproduces
// its inter-completion gap distribution: a loop device at low load whose
// completions do not bunch.
func TestCalibrateBatchingFixture(t *testing.T) {
	dir := shared.Fixture(t, "fx-mqdl-rw-nocg")
	reqs := readRequestsInternal(t, filepath.Join(dir, "fx-mqdl-rw-nocg"))
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if m.NonRotational == nil || m.NonRotational.Batching != nil {
		t.Errorf("batching fitted to a capture whose completions do not bunch: %+v", m.NonRotational)
	}
	checkGaps(t, fit.CompletionGaps, 0.03)
	if !strings.Contains(fit.String(), "completion gaps under") {
		t.Errorf("fit summary lacks the gap profile:\n%s", fit)
	}
}

// checkGaps fails when the model's fraction of gaps under a threshold of
// 1 to 20 us is further than tol from the capture's.
func checkGaps(t *testing.T, g GapProfile, tol float64) {
	t.Helper()
	for i, th := range g.UnderNs {
		if th > 20*time.Microsecond {
			break
		}
		if math.Abs(g.Real[i]-g.Model[i]) > tol {
			t.Errorf("completion gaps under %v: capture %.3f, model %.3f", th, g.Real[i], g.Model[i])
		}
	}
}

// readRequestsInternal rebuilds the requests of a capture, as readRequests
// does for the external tests.
func readRequestsInternal(tb testing.TB, name string) []trace.Request {
	tb.Helper()
	in, err := blktrace.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	var reqs []trace.Request
	rb := trace.NewRebuilder(func(r *trace.Request) { reqs = append(reqs, *r) }, nil)
	for {
		e, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("reading %s: %v", name, err)
		}
		rb.Add(&e)
	}
	rb.Close()
	return reqs
}
