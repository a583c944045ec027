package device

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// fitJSON is a calibration's outcome as the cache and the replay's JSON
// carry it: the Fit with its model (NaN correlations as null).
func fitJSON(t *testing.T, m *Model, fit *Fit, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if fit.Model != m {
		t.Fatal("the fit does not hold its model")
	}
	b, err := json.Marshal(fit)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSummarizeMatchesPrepare: the compact pass gives what prepare and
// Calibrate derive from the whole capture (samples, skipped, mean D2C,
// seek correlation, the windows' first and last issue), on a rotational
// and a flash capture, with requests that never reached the device, never
// completed or were merged away mixed in.
func TestSummarizeMatchesPrepare(t *testing.T) {
	for name, reqs := range map[string][]trace.Request{"disk": withOddRequests(diskCapture(3)), "flash": withOddRequests(flashCapture(4))} {
		c := prepare(reqs)
		sizes := []int{100, 1001, len(c.samples)}
		sum, bounds, ok := summarize(Pointers(reqs), sizes)
		if !ok {
			t.Fatalf("%s: requests in ID order refused", name)
		}
		if sum.n != len(c.samples) || sum.skipped != c.skipped || c.skipped == 0 {
			t.Errorf("%s: n %d skipped %d, prepare %d and %d (want some skipped)", name, sum.n, sum.skipped, len(c.samples), c.skipped)
		}
		if want := mean(d2cs(c)); sum.meanD2C != want {
			t.Errorf("%s: mean D2C %v, prepare's %v", name, sum.meanD2C, want)
		}
		if want := seekCorrelation(c.samples); sum.seek != want || math.IsNaN(want) {
			t.Errorf("%s: seek correlation %v, prepare's %v", name, sum.seek, want)
		}
		for _, n := range sizes {
			lo := (len(c.samples) - n) / 2
			want := [2]trace.Time{c.samples[lo].issue, c.samples[lo+n-1].issue}
			if bounds[n] != want {
				t.Errorf("%s: window of %d from %v, prepare's %v", name, n, bounds[n], want)
			}
			if got, want := windowSeq(Pointers(reqs), want[0], want[1], 0), window(reqs, c, n); !slices.Equal(got, want) {
				t.Errorf("%s: window of %d: %d requests, window's %d", name, n, len(got), len(want))
			}
		}
	}
	shuffled := flashCapture(5)
	shuffled[10], shuffled[11] = shuffled[11], shuffled[10]
	if _, _, ok := summarize(Pointers(shuffled), nil); ok {
		t.Error("requests out of ID order accepted")
	}
}

// withOddRequests adds, every 97th request, one that is merged away, one
// never issued, one never completed, a passthrough one in flight at the
// start and a completion with no D (a flush sequence's end), IDs kept
// increasing.
func withOddRequests(reqs []trace.Request) []trace.Request {
	var out []trace.Request
	for i, r := range reqs {
		out = append(out, r)
		if i%97 != 50 {
			continue
		}
		merged := r
		merged.Flags |= trace.FlagMergedAway
		unissued := r
		unissued.Issue, unissued.Complete = trace.NoTime, trace.NoTime
		open := r
		open.Complete = trace.NoTime
		open.Flags |= trace.FlagIncomplete
		pc := r
		pc.Cat |= trace.CatPC
		pc.Flags |= trace.FlagNoQueue
		// The zero-byte C that ends a flush sequence: no D, long after the
		// capture's start, so never on the device (prepare's step 1).
		end := r
		end.Issue, end.Bytes = trace.NoTime, 0
		end.Flags |= trace.FlagNoQueue
		out = append(out, merged, unissued, open, pc, end)
	}
	for i := range out {
		out[i].ID = uint64(i + 1)
	}
	return out
}

// TestCalibrateSeqSameFit: CalibrateSeq fits what Calibrate fits, whether
// it takes the compact pass (windows below the capture's samples) or reads
// the requests into a slice (a capture within the windows, requests out of
// ID order, a window bound below MinRequests).
func TestCalibrateSeqSameFit(t *testing.T) {
	disk, flash := withOddRequests(diskCapture(6)), withOddRequests(flashCapture(7))
	shuffled := slices.Clone(flash)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, tc := range []struct {
		name string
		reqs []trace.Request
		opts CalibrateOptions
	}{
		{"disk windowed", disk, CalibrateOptions{Seed: 3, CVSamples: 2000, FitSamples: 4000}},
		{"flash windowed", flash, CalibrateOptions{Seed: 3, CVSamples: 1500, FitSamples: 2500}},
		{"flash forced rotational", flash, CalibrateOptions{Seed: 3, CVSamples: 1500, FitSamples: 2500, Kind: KindRotational}},
		{"flash within the windows", flash, CalibrateOptions{Seed: 3}},
		{"flash shuffled", shuffled, CalibrateOptions{Seed: 3, CVSamples: 1500, FitSamples: 2500}},
		{"flash unbounded fit", flash, CalibrateOptions{Seed: 3, CVSamples: 1500, FitSamples: -1}},
		{"flash window below MinRequests", flash, CalibrateOptions{Seed: 3, CVSamples: 30, FitSamples: 2500}},
	} {
		m, fit, err := Calibrate(tc.reqs, tc.opts)
		want := fitJSON(t, m, fit, err)
		m, fit, err = CalibrateSeq(Pointers(tc.reqs), tc.opts)
		got := fitJSON(t, m, fit, err)
		if got != want {
			t.Errorf("%s: CalibrateSeq\n%s\nCalibrate\n%s", tc.name, got, want)
		}
	}
	if _, _, err := CalibrateSeq(Pointers(flash[:30]), CalibrateOptions{}); err == nil {
		t.Error("30 requests calibrated")
	}
}

// TestCoverageOfSeq: the sequence and the slice give one coverage.
func TestCoverageOfSeq(t *testing.T) {
	reqs := withOddRequests(flashCapture(8))
	a, b := CoverageOf(reqs), CoverageOfSeq(Pointers(reqs))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || a.Requests == 0 {
		t.Errorf("slice %s, sequence %s", ja, jb)
	}
}
