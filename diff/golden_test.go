package diff_test

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// inProcessDigest hashes the Result fields the JSON leaves out (json:"-"):
// the dispatch sequences and displacements, the BioRefs' indexes and the
// per-queue think-time series, so that changes to them are caught too.
func inProcessDigest(r *diff.Result) string {
	h := sha256.New()
	w := func(v any) { binary.Write(h, binary.LittleEndian, v) }
	o := &r.DispatchOrder
	w(int64(len(o.RealSequence)))
	w(o.RealSequence)
	w(o.PredictedSequence)
	w(o.Displacement)
	w(int64(o.MaxDisplaced.Real))
	w(int64(o.MaxDisplaced.Pred))
	if p := o.FirstDivergence; p != nil {
		w([]int64{int64(p.Bio.Real), int64(p.Bio.Pred), int64(p.Predicted.Real), int64(p.Predicted.Pred)})
	}
	for _, q := range r.ThinkTime.PerQueue {
		for _, s := range [][]diff.ThinkPoint{q.RealSeries, q.PredSeries} {
			w(int64(len(s)))
			for _, p := range s {
				fmt.Fprintf(h, "%d %d %d %v;", p.Time, p.Mean, p.Samples, p.Short)
			}
		}
		for _, s := range [][]diff.LoggedPoint{q.RealLogged, q.PredLogged} {
			w(int64(len(s)))
			for _, p := range s {
				fmt.Fprintf(h, "%d %v;", p.Time, p.Short)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func checkGolden(t *testing.T, name string, r *diff.Result) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&buf, "in-process digest %s\n", inProcessDigest(r))
	path := filepath.Join("testdata", "golden-"+name+".json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		got := buf.Bytes()
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-200)
		t.Errorf("Result differs from %s at byte %d:\n got ...%s\nwant ...%s", path, i, got[lo:min(len(got), i+200)], want[lo:min(len(want), i+200)])
	}
}

// TestGoldenSynthetic: the Result of a fixed synthetic pair is byte for
// byte the recorded one.
func TestGoldenSynthetic(t *testing.T) {
	real := diff.SynthSideForTest(40000, 16, 1)
	pred := diff.SynthSideForTest(40000, 16, 2)
	checkGolden(t, "synthetic", diff.Compare(real, pred, diff.Options{}))
}

// perturb returns a copy of a capture's events with jittered issue and
// completion times and every fifth scheduler message dropped.
func perturb(evs []trace.Event, seed uint64) []trace.Event {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []trace.Event
	nmsg := 0
	for _, e := range evs {
		switch e.Action {
		case trace.ActionMessage:
			nmsg++
			if nmsg%5 == 0 {
				continue
			}
		case trace.ActionIssue:
			e.Time += trace.Time(rng.IntN(40_000))
		case trace.ActionComplete:
			e.Time += trace.Time(40_000 + rng.IntN(400_000))
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b trace.Event) int { return cmp.Compare(a.Time, b.Time) })
	return out
}

// TestGoldenFixtures: each fixture against a perturbed copy of itself, and
// two different fixtures against each other.
func TestGoldenFixtures(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			evs, meta := readFixture(t, name)
			real := load(t, evs, meta)
			pred := load(t, perturb(evs, 5), meta)
			checkGolden(t, name, diff.Compare(real, pred, diff.Options{}))
		})
	}
	t.Run("cross", func(t *testing.T) {
		ea, ma := readFixture(t, fixtures[0])
		eb, mb := readFixture(t, fixtures[2])
		checkGolden(t, "cross", diff.Compare(load(t, ea, ma), load(t, eb, mb), diff.Options{Weights: map[uint64]int{1: 100}}))
	})
}

// TestGoldenUnpacked: the same Results when no key fits packed in 64 bits
// (the comparison-sort fallbacks).
func TestGoldenUnpacked(t *testing.T) {
	defer diff.SetPackBitsForTest(0)()
	if *update {
		t.Skip("not with -update")
	}
	TestGoldenSynthetic(t)
	TestGoldenFixtures(t)
}
