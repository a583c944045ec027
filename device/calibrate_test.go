package device

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// diskCapture is a synthetic capture of diskModel: a rotational-like
// capture, which the recorded captures (all on a fast loop device) lack.
func diskCapture(seed uint64) []trace.Request {
	return Synthesize(diskModel(), Workload{
		Streams: 1, Depth: 2, Requests: 12000, Sizes: []uint32{4096, 16384, 65536, 131072},
		Sequential: 0.3, Near: 0.3, NearSpan: 1 << 20, Writes: 0.3, Think: 2 * time.Millisecond,
	}, seed)
}

// flashCapture is a synthetic capture of flashModel with a varying number
// of requests on the device.
func flashCapture(seed uint64) []trace.Request {
	return Synthesize(flashModel(), Workload{
		Streams: 12, Depth: 1, Requests: 6000, Sizes: []uint32{4096, 16384, 65536},
		Sequential: 0.2, Writes: 0.4, Think: 400 * time.Microsecond,
	}, seed)
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, 100*tol)
	}
}

func TestCalibrateRotationalSynthetic(t *testing.T) {
	reqs := diskCapture(1)
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if m.Kind != KindRotational || fit.Kind != KindRotational || fit.Forced {
		t.Fatalf("chose %s for a rotational capture", m.Kind)
	}
	if fit.N != len(reqs) || fit.Skipped != 0 {
		t.Errorf("fitted %d (skipped %d) of %d requests", fit.N, fit.Skipped, len(reqs))
	}
	if fit.SeekCorrelation < 0.3 {
		t.Errorf("seek correlation %.3f, want clearly positive", fit.SeekCorrelation)
	}
	truth, got := diskModel().Rotational, m.Rotational
	for _, d := range []uint64{1000, 100000, 1 << 20, 4 << 20, 12 << 20} {
		// Rotation (uniform over 8.3 ms) swamps the overhead: allow 10% or 150 us.
		g, w := float64(got.Overhead)+got.Seek(d), float64(truth.Overhead)+truth.Seek(d)
		if math.Abs(g-w) > max(0.1*w, 150e3) {
			t.Errorf("seek+overhead at %d sectors = %.4g ns, want %.4g", d, g, w)
		}
	}
	within(t, "revolution", float64(got.Revolution), float64(truth.Revolution), 0.1)
	within(t, "per byte", got.PerByte, truth.PerByte, 0.1)
	within(t, "sequential base", float64(got.SeqBase), float64(truth.SeqBase), 0.2)
	if math.Abs(float64(got.Write)) > 150e3 {
		t.Errorf("write cost %v, the truth has none", got.Write)
	}
	if fit.DemeritFraction > 0.05 || fit.CV.DemeritFraction > 0.05 {
		t.Errorf("demerit %.1f%%, cross-validated %.1f%%: want under 5%%", 100*fit.DemeritFraction, 100*fit.CV.DemeritFraction)
	}
	nonrot := fit.Candidates[0]
	if nonrot.Kind != KindNonRotational || nonrot.DemeritFraction < 1.3*fit.CV.DemeritFraction {
		t.Errorf("non-rotational candidate %+v not clearly worse than %+v", nonrot, fit.CV)
	}
}

func TestCalibrateNonRotationalSynthetic(t *testing.T) {
	reqs := flashCapture(2)
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if m.Kind != KindNonRotational {
		t.Fatalf("chose %s for a non-rotational capture", m.Kind)
	}
	truth, got := flashModel().NonRotational, m.NonRotational
	if got.Parallelism != truth.Parallelism {
		t.Errorf("parallelism %d, want %d", got.Parallelism, truth.Parallelism)
	}
	within(t, "saturation slope", got.Slope, truth.Slope, 0.15)
	// Residual tables have mean 1 in the truth; compare mean latencies.
	for _, o := range []Op{OpRead, OpWrite} {
		for _, b := range []uint32{4096, 65536} {
			want := truth.op(o).mean(b) * truth.op(o).Residual.Mean()
			have := got.op(o).mean(b) * got.op(o).Residual.Mean()
			within(t, o.String()+" mean latency at "+itoa(uint64(b)), have, want, 0.05)
		}
	}
	if got.Other != nil {
		t.Errorf("fitted an 'other' class the capture lacks")
	}
	if fit.DemeritFraction > 0.05 || fit.CV.DemeritFraction > 0.05 {
		t.Errorf("demerit %.1f%%, cross-validated %.1f%%: want under 5%%", 100*fit.DemeritFraction, 100*fit.CV.DemeritFraction)
	}
}

func TestCalibrateForced(t *testing.T) {
	reqs := flashCapture(3)[:1500]
	m, fit, err := Calibrate(reqs, CalibrateOptions{Kind: KindRotational})
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindRotational || !fit.Forced || len(fit.Candidates) != 1 {
		t.Errorf("forced rotational: got %s, forced %v, %d candidates", m.Kind, fit.Forced, len(fit.Candidates))
	}
	// The fit reports itself as JSON with the model inside, loadable again.
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(fit); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Kind            string          `json:"kind"`
		DemeritFraction float64         `json:"demerit_fraction"`
		CV              Score           `json:"cv"`
		Model           json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != "rotational" || back.DemeritFraction != fit.DemeritFraction || back.CV.Test == 0 {
		t.Errorf("fit JSON: %s", buf.String())
	}
	if _, err := Load(bytes.NewReader(back.Model)); err != nil {
		t.Errorf("model in the fit JSON does not load: %v", err)
	}
	if !strings.Contains(fit.String(), "forced") {
		t.Errorf("String lacks 'forced':\n%s", fit)
	}
}

func TestCalibrateSkips(t *testing.T) {
	reqs := flashCapture(4)[:400]
	// A request in flight at the start, one still in flight at the end, and
	// one merged away: none is a sample, but the first two occupy the device.
	reqs[0].Issue, reqs[0].Flags = trace.NoTime, trace.FlagNoQueue
	reqs[1].Complete, reqs[1].Flags = trace.NoTime, trace.FlagIncomplete
	reqs[2].Flags = trace.FlagMergedAway
	_, fit, err := Calibrate(reqs, CalibrateOptions{Kind: KindNonRotational})
	if err != nil {
		t.Fatal(err)
	}
	if fit.N != 397 || fit.Skipped != 2 {
		t.Errorf("n %d skipped %d, want 397 and 2", fit.N, fit.Skipped)
	}
	c := prepare(reqs)
	// The incomplete request stays on the device for the median D2C of
	// the samples (prepare, step 1): every sample issued within it counts it.
	_, bound := d2cBounds(reqs)
	for _, s := range c.samples {
		if s.issue > reqs[1].Issue && s.issue < reqs[1].Issue+bound && s.k < 2 {
			t.Fatalf("sample issued at %v sees k=%d, the incomplete request not counted", s.issue, s.k)
		}
	}
	if _, _, err := Calibrate(reqs[:10], CalibrateOptions{}); !errors.Is(err, ErrTooFew) {
		t.Errorf("10 requests: err %v, want ErrTooFew", err)
	}
}

// TestInFlightMatchesReplay checks that the number of requests on the
// device the fit sees at each D is the one a device sees when replayed.
func TestInFlightMatchesReplay(t *testing.T) {
	c := prepare(flashCapture(5)[:2000])
	m := flashModel()
	m.NonRotational.Read.Residual, m.NonRotational.Write.Residual = Quantiles{}, Quantiles{}
	pred := c.predict(m, 1)
	for i, s := range c.samples {
		want := m.NonRotational.op(s.op).mean(s.bytes) * m.NonRotational.saturation(s.k)
		if math.Abs(pred[i]-want) > 1 {
			t.Fatalf("sample %d (k=%d): predicted %v, want %v", i, s.k, pred[i], want)
		}
	}
}

func itoa(v uint64) string { return strconvU(v) }

func strconvU(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// TestCalibrateFitWindow: with FitSamples below the capture's samples,
// the model is fitted on the middle window (Fit.Fitted, the rest of N
// still counted) and still recovers the generating model as the fit on
// all samples does (TestCalibrateNonRotationalSynthetic's tolerances); a
// bound above the capture leaves the fit on all samples.
func TestCalibrateFitWindow(t *testing.T) {
	reqs := flashCapture(2)
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 5, FitSamples: 2500, CVSamples: 1500})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if fit.N != len(reqs) || fit.Fitted < 2400 || fit.Fitted > 2600 {
		t.Errorf("n %d, fitted %d: want %d and about 2500", fit.N, fit.Fitted, len(reqs))
	}
	if !strings.Contains(fit.String(), "fitted on the middle") {
		t.Errorf("the summary does not say the fit was windowed:\n%s", fit)
	}
	truth, got := flashModel().NonRotational, m.NonRotational
	if m.Kind != KindNonRotational || got.Parallelism != truth.Parallelism {
		t.Fatalf("kind %s parallelism %d, want non-rotational, %d", m.Kind, got.Parallelism, truth.Parallelism)
	}
	within(t, "saturation slope", got.Slope, truth.Slope, 0.15)
	for _, o := range []Op{OpRead, OpWrite} {
		for _, b := range []uint32{4096, 65536} {
			want := truth.op(o).mean(b) * truth.op(o).Residual.Mean()
			have := got.op(o).mean(b) * got.op(o).Residual.Mean()
			within(t, o.String()+" mean latency at "+itoa(uint64(b)), have, want, 0.05)
		}
	}
	_, all, err := Calibrate(reqs, CalibrateOptions{Seed: 5, FitSamples: len(reqs)})
	if err != nil {
		t.Fatal(err)
	}
	if all.Fitted != 0 {
		t.Errorf("fitted %d with a bound above the capture's %d samples: want 0 (all)", all.Fitted, len(reqs))
	}
}
