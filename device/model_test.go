package device

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// flashModel is a known non-rotational model for tests.
func flashModel() *Model {
	return &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
		Parallelism: 4, Slope: 0.25,
		Read:  &OpTiming{Base: 60 * time.Microsecond, PerByte: 2, Residual: Quantiles{P: []float64{0, 0.25, 0.5, 0.75, 1}, X: []float64{0.8, 0.9, 1, 1.1, 1.2}}},
		Write: &OpTiming{Base: 30 * time.Microsecond, PerByte: 4, Residual: Quantiles{P: []float64{0, 0.5, 1}, X: []float64{0.7, 1, 1.3}}},
	}}
}

// diskModel is a known rotational model for tests: a 7200 rpm disk.
func diskModel() *Model {
	return &Model{Version: Version, Kind: KindRotational, Rotational: &Rotational{
		Overhead: 300 * time.Microsecond, SeekSqrt: 3500, SeekBoundary: 1 << 20,
		SeekLongBase: 2900 * time.Microsecond, SeekLongPerSector: 0.7,
		Revolution: 8333 * time.Microsecond, PerByte: 8, SeqWindow: 128, SeqBase: 50 * time.Microsecond,
	}}
}

func TestSaveLoad(t *testing.T) {
	covered := flashModel() // with the coverage of its calibration, the sustained load included
	covered.Coverage = CoverageOf(closedLoop(4, 10, trace.Time(time.Millisecond), 1000))
	for _, m := range []*Model{flashModel(), diskModel(), covered} {
		var buf bytes.Buffer
		if err := m.Save(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := Load(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Load(Save(%s)): %v\n%s", m.Kind, err, buf.String())
		}
		var again bytes.Buffer
		if err := got.Save(&again); err != nil {
			t.Fatal(err)
		}
		if buf.String() != again.String() {
			t.Errorf("%s: Save(Load(Save(m))) differs:\n%s\n%s", m.Kind, buf.String(), again.String())
		}
		if !strings.Contains(buf.String(), `"kind": "`+m.Kind.String()+`"`) {
			t.Errorf("saved form lacks its kind:\n%s", buf.String())
		}
	}
	bad := map[string]string{
		"version":      `{"version": 10, "kind": "rotational", "rotational": {}}`,
		"v8sustained":  `{"version": 8, "kind": "rotational", "rotational": {}, "coverage": {"requests": 1, "depth_buckets": [1], "max_depth": 1, "ops": [], "sustained_load_windows": [1]}}`,
		"sustainedneg": `{"version": 9, "kind": "rotational", "rotational": {}, "coverage": {"requests": 1, "depth_buckets": [1], "max_depth": 1, "ops": [], "sustained_load_windows": [-1]}}`,
		"sustainedlen": `{"version": 9, "kind": "rotational", "rotational": {}, "coverage": {"requests": 1, "depth_buckets": [1], "max_depth": 1, "ops": [], "sustained_load_windows": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]}}`,
		"v5hold":       `{"version": 5, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "write": {"base_ns": 5, "residual_hold_ns": 1000}}}`,
		"hold":         `{"version": 6, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "write": {"base_ns": 5, "residual_hold_ns": -1}}}`,
		"holdmax":      `{"version": 6, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "write": {"base_ns": 5, "residual_hold_ns": 1000000000000}}}`,
		"v3seq":        `{"version": 3, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "sequential_factor": 0.5}}}`,
		"v2ahead":      `{"version": 2, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "ahead_per_byte_ns": 1}}}`,
		"ahead":        `{"version": 3, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "ahead_per_byte_ns": -1}}}`,
		"aheadmax":     `{"version": 3, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "ahead_per_byte_ns": 1e9}}}`,
		"v7sizes":      `{"version": 7, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "size_factors": [{"bytes": 4096, "factor": 0.2, "n": 1, "residual": {"p": [], "x": []}}, {"bytes": 65536, "factor": 1, "n": 1, "residual": {"p": [], "x": []}}]}}}`,
		"sizeord":      `{"version": 8, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "size_factors": [{"bytes": 65536, "factor": 1, "n": 1, "residual": {"p": [], "x": []}}, {"bytes": 4096, "factor": 0.2, "n": 1, "residual": {"p": [], "x": []}}]}}}`,
		"sizezero":     `{"version": 8, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5, "size_factors": [{"bytes": 4096, "factor": 0, "n": 1, "residual": {"p": [], "x": []}}]}}}`,
		"v1batch":      `{"version": 1, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5}, "batching": {"join_lead_ns": 1}}}`,
		"kind":         `{"version": 1, "kind": "tape"}`,
		"section":      `{"version": 1, "kind": "nonrotational"}`,
		"unknown":      `{"version": 1, "kind": "rotational", "rotational": {}, "extra": 1}`,
		"negative":     `{"version": 1, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": -5}}}`,
		"order":        `{"version": 1, "kind": "rotational", "rotational": {"residual_ns": [3, 1]}}`,
	}
	for name, s := range bad {
		if _, err := Load(strings.NewReader(s)); err == nil {
			t.Errorf("%s: Load accepted %s", name, s)
		}
	}
}

func TestTimingNonRotational(t *testing.T) {
	m := flashModel()
	m.NonRotational.Read.Residual = Quantiles{} // exact latencies
	dev := m.NewDevice(1)
	rq := func(id uint64) *replay.Request {
		return &replay.Request{ID: id, Sector: id * 1000, Bytes: 4096, Cat: trace.CatRead}
	}
	want0 := 60e3 + 2*4096.0
	var rqs []*replay.Request
	for i := range 6 {
		r := rq(uint64(i + 1))
		rqs = append(rqs, r)
		got := dev.Issue(1000, r) - 1000
		k := i + 1
		want := want0
		if k > 4 {
			want *= 1 + 0.25*float64(k-4)
		}
		if float64(got) != want {
			t.Errorf("issue with %d on the device: latency %d, want %v", k, got, want)
		}
	}
	if dev.InFlight() != 6 || dev.Head() != 6000+8 {
		t.Errorf("InFlight %d, Head %d", dev.InFlight(), dev.Head())
	}
	for _, r := range rqs {
		dev.Done(2000, r)
	}
	dev.Done(2000, rqs[0]) // twice: ignored
	if dev.InFlight() != 0 {
		t.Errorf("InFlight after Done = %d", dev.InFlight())
	}
	if got := dev.Issue(5000, rq(9)) - 5000; float64(got) != want0 {
		t.Errorf("latency after the device drained = %d, want %v", got, want0)
	}
}

func TestTimingRotational(t *testing.T) {
	m := diskModel()
	r := m.Rotational
	dev := m.NewDevice(7)
	a := &replay.Request{ID: 1, Sector: 1 << 22, Bytes: 4096, Cat: trace.CatRead}
	ca := dev.Issue(0, a)
	// From sector 0 to 2^22: a long seek.
	lo := float64(r.Overhead) + float64(r.SeekLongBase) + r.SeekLongPerSector*(1<<22) + 8*4096
	if f := float64(ca); f < lo || f >= lo+float64(r.Revolution) {
		t.Errorf("random access took %v ns, want in [%v, %v)", f, lo, lo+float64(r.Revolution))
	}
	// A sequential successor issued at once waits for a and takes no seek.
	b := &replay.Request{ID: 2, Sector: a.End(), Bytes: 4096, Cat: trace.CatRead}
	cb := dev.Issue(0, b)
	if want := ca + trace.Time(r.SeqBase) + 8*4096; cb != want {
		t.Errorf("sequential access completes at %d, want %d", cb, want)
	}
	dev.Done(ca, a)
	dev.Done(cb, b)
	// Issued after the device went idle: starts at once.
	c := &replay.Request{ID: 3, Sector: b.End() + 64, Bytes: 4096, Cat: trace.CatWrite}
	if cc := dev.Issue(cb+1000, c); cc != cb+1000+trace.Time(r.SeqBase)+8*4096 {
		t.Errorf("short forward gap: completes at %d", cc)
	}
}

func TestTimingDeterministic(t *testing.T) {
	run := func(m *Model, seed uint64) []trace.Request {
		return Synthesize(m, Workload{Streams: 3, Depth: 2, Requests: 300, Sequential: 0.3, Writes: 0.3,
			Think: 100 * time.Microsecond, Sizes: []uint32{4096, 65536}}, seed)
	}
	for _, m := range []*Model{flashModel(), diskModel()} {
		a, b, c := run(m, 42), run(m, 42), run(m, 43)
		same := func(x, y []trace.Request) bool {
			for i := range x {
				if x[i] != y[i] {
					return false
				}
			}
			return len(x) == len(y)
		}
		if !same(a, b) {
			t.Errorf("%s: same seed, different replays", m.Kind)
		}
		if same(a, c) {
			t.Errorf("%s: different seeds, same replay", m.Kind)
		}
		for _, r := range a {
			if !r.Complete.Valid() || r.Complete < r.Issue {
				t.Fatalf("%s: request %d completes at %v, issued %v", m.Kind, r.ID, r.Complete, r.Issue)
			}
		}
	}
}

// TestFitHingeSparse: group means on an exact hinge c*(1+slope*(k-p)) at
// scattered in-flight counts up to tens of thousands (a capture whose
// completions are missing) give back p, c and slope.
func TestFitHingeSparse(t *testing.T) {
	const p, c, slope = 8, 2.0, 0.25
	sum := make([]float64, 40001)
	cnt := make([]float64, 40001)
	for _, k := range []int{1, 2, 4, 8, 12, 16, 24, 32, 1000, 40000} {
		cnt[k] = 30
		sum[k] = 30 * c * (1 + slope*float64(max(0, k-p)))
	}
	gp, gc, gs := fitHinge(sum, cnt)
	if gp != p || math.Abs(gc-c) > 1e-9 || math.Abs(gs-slope) > 1e-9 {
		t.Errorf("fitHinge = p %d c %g slope %g, want %d %g %g", gp, gc, gs, p, c, slope)
	}
}
