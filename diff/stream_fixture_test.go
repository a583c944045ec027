package diff_test

import (
	"bytes"
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// slowed returns evs with the times of every event of the processes whose
// pid is odd stretched by 1.5 and delayed by 30 ms, re-sorted by time: a
// prediction that parts ways with the capture (other windows, other busy
// sets, bios completing in another order).
func slowed(evs []trace.Event) []trace.Event {
	out := slices.Clone(evs)
	for i := range out {
		if out[i].PID%2 == 1 {
			out[i].Time = out[i].Time*3/2 + trace.Time(30*time.Millisecond)
		}
	}
	slices.SortStableFunc(out, func(a, b trace.Event) int { return cmp.Compare(a.Time, b.Time) })
	return out
}

// TestStreamedFiguresMatchTable: the bandwidth and process figures a
// Compare takes from what each Side accumulated as its bios arrived are
// those it measures from the bio tables (the JSON byte for byte), on each
// fixture against itself and against a stretched copy of itself, at the
// default window (the accumulation used) and at another (the tables).
func TestStreamedFiguresMatchTable(t *testing.T) {
	for _, name := range fixtures {
		evs, meta := readFixture(t, name)
		for _, pair := range []struct {
			what string
			pred []trace.Event
		}{{"itself", evs}, {"stretched", slowed(evs)}} {
			for _, opts := range []diff.Options{{}, {Window: 40 * time.Millisecond}} {
				var out [2]bytes.Buffer
				for k := range out {
					real, pred := load(t, evs, meta), load(t, pair.pred, meta)
					if !diff.StreamedForTest(real) || !diff.StreamedForTest(pred) {
						t.Fatalf("%s: the sides kept no figures as their bios arrived", name)
					}
					if k == 1 {
						diff.DropStreamForTest(real)
						diff.DropStreamForTest(pred)
					}
					r := diff.Compare(real, pred, opts)
					if len(r.Cgroups) == 0 || len(r.Processes) == 0 || r.Bandwidth.WindowReal == 0 {
						t.Fatalf("%s against %s: %d cgroups, %d processes, window %v s", name, pair.what, len(r.Cgroups), len(r.Processes), r.Bandwidth.WindowReal)
					}
					if err := r.WriteJSON(&out[k]); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
					t.Errorf("%s against %s, window %v: the accumulated figures differ from the table's", name, pair.what, opts.Window)
				}
			}
		}
	}
}
