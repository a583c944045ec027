package device

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestStreams checks the locality rule by hand: a request continues a
// stream when it starts where one of the last SeqRecent requests issued
// ended; a flush neither continues nor ends one.
func TestStreams(t *testing.T) {
	var s streams
	if s.issue(0, 4096) {
		t.Error("the first request continues nothing")
	}
	if !s.issue(8, 4096) { // 0+8 sectors
		t.Error("a request at the end of the previous one is sequential")
	}
	if s.issue(0, 0) {
		t.Error("a flush continues no stream")
	}
	if !s.issue(16, 65536) { // the flush did not end a stream at 0
		t.Error("the flush broke the stream")
	}
	// SeqRecent-1 others in between: the stream at 16+128=144 is still
	// among the last SeqRecent; one more and it is not.
	for i := 0; i < SeqRecent-1; i++ {
		s.issue(uint64(1_000_000+1000*i), 4096)
	}
	if !s.issue(144, 4096) {
		t.Errorf("a stream whose last request is %d issues back is sequential", SeqRecent)
	}
	for i := 0; i < SeqRecent; i++ {
		s.issue(uint64(5_000_000+1000*i), 4096)
	}
	if s.issue(152, 4096) {
		t.Errorf("a stream whose last request is %d issues back is not", SeqRecent+1)
	}
}

// seqModel is flashModel with reads that continue a stream taking 0.2 of
// the others' latency (a host that reads the backing file ahead).
func seqModel() *Model {
	m := flashModel()
	m.NonRotational.Parallelism, m.NonRotational.Slope = 64, 0
	m.NonRotational.Read = &OpTiming{Base: 2 * time.Millisecond, Seq: 0.2,
		Residual:    Quantiles{P: []float64{0, 0.5, 1}, X: []float64{0.9, 1, 1.1}},
		SeqResidual: Quantiles{P: []float64{0, 0.5, 1}, X: []float64{0.8, 1, 1.2}}}
	return m
}

func TestTimingSequential(t *testing.T) {
	dev := seqModel().NewDevice(1)
	rnd := &replay.Request{ID: 1, Sector: 1 << 20, Bytes: 65536, Cat: trace.CatRead}
	seq := &replay.Request{ID: 2, Sector: 1<<20 + 128, Bytes: 65536, Cat: trace.CatRead}
	far := &replay.Request{ID: 3, Sector: 9 << 20, Bytes: 65536, Cat: trace.CatRead}
	d1 := dev.Issue(0, rnd)
	d2 := dev.Issue(0, seq)
	d3 := dev.Issue(0, far)
	// Base 2 ms, residuals within 0.9-1.1 (others) and 0.8-1.2 (streams).
	if d1 < 1800e3 || d1 > 2200e3 || d3 < 1800e3 || d3 > 2200e3 {
		t.Errorf("random reads %v and %v ns, want 1.8-2.2 ms", d1, d3)
	}
	if d2 < 320e3 || d2 > 480e3 {
		t.Errorf("sequential read %v ns, want 0.2 of 2 ms within 0.8-1.2: 320-480 us", d2)
	}
}

// TestCalibrateSequential calibrates a synthetic capture of seqModel:
// reads continuing a stream 0.2 times as long as the others. The fit must
// find the factor and keep it, and a capture without locality must not
// get one.
func TestCalibrateSequential(t *testing.T) {
	w := Workload{Streams: 6, Depth: 1, Requests: 4000, Sizes: []uint32{65536}, Sequential: 0.5, Think: 300 * time.Microsecond}
	m, fit, err := Calibrate(Synthesize(seqModel(), w, 3), CalibrateOptions{Seed: 1, NotRotational: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	rd := m.NonRotational.Read
	if rd.Seq == 0 {
		t.Fatalf("no sequential factor kept: %+v", rd)
	}
	within(t, "sequential factor", rd.Seq, 0.2, 0.1)
	within(t, "random read latency", float64(rd.Base)+rd.PerByte*65536, 2e6, 0.1)
	if fit.CV.DemeritFraction > 0.1 {
		t.Errorf("cross-validated demerit %.1f%%, want under 10%%", 100*fit.CV.DemeritFraction)
	}
	// The same workload without locality.
	flat := seqModel()
	flat.NonRotational.Read.Seq, flat.NonRotational.Read.SeqResidual = 0, Quantiles{}
	m, _, err = Calibrate(Synthesize(flat, w, 3), CalibrateOptions{Seed: 1, NotRotational: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.NonRotational.Read.Seq != 0 {
		t.Errorf("sequential factor %.3f fitted on a device without locality", m.NonRotational.Read.Seq)
	}
	// NoSequential keeps it out.
	m, _, err = Calibrate(Synthesize(seqModel(), w, 3), CalibrateOptions{Seed: 1, NotRotational: true, NoSequential: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.NonRotational.Read.Seq != 0 {
		t.Errorf("NoSequential: factor %.3f", m.NonRotational.Read.Seq)
	}
}

// TestSequentialJSON: the factor survives Save and Load, and Load refuses
// it in a model of an earlier version and beyond its bounds.
func TestSequentialJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := seqModel().Save(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r := got.NonRotational.Read; r.Seq != 0.2 || r.SeqResidual.Len() != 3 {
		t.Errorf("loaded %+v", r)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"version 3", fmt.Sprintf(`"version": %d`, Version), `"version": 3`, "sequential_factor in a version 3 model"},
		{"negative", `"sequential_factor": 0.2`, `"sequential_factor": -1`, "sequential_factor -1"},
		{"too large", `"sequential_factor": 0.2`, `"sequential_factor": 1e9`, "sequential_factor 1e+09 not in"},
	} {
		j := strings.Replace(buf.String(), c.old, c.new, 1)
		if j == buf.String() {
			t.Fatalf("%s: %q not in the saved model", c.name, c.old)
		}
		if _, err := Load(strings.NewReader(j)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load: %v, want %q", c.name, err, c.want)
		}
	}
}
