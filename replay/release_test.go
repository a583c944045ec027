package replay

import (
	"slices"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// TestReleaseTally: the delays of each (releaser, released) pair, by
// hand: 10, 30, 20 and 100 us for pid 5 after pid 4 (sorted 10 20 30 100:
// the lower middle 20 us, the mean 40 us), 7 us once for pid 4 after pid
// 5; the pair with more bios first. Bios that no other process released
// count nowhere.
func TestReleaseTally(t *testing.T) {
	const us = 1000
	by4 := &Record{PID: 4, Comm: "fio"}
	by5 := &Record{PID: 5, Comm: "jbd2/loop0-8"}
	var tl releaseTally
	for _, d := range []int64{10, 30, 20, 100} {
		tl.add(&Record{PID: 5, Comm: "jbd2/loop0-8", ext: &recordExt{after: by4, afterDelay: trace.Time(d * us)}})
	}
	tl.add(&Record{PID: 4, Comm: "fio", ext: &recordExt{after: by5, afterDelay: trace.Time(7 * us)}})
	tl.add(&Record{PID: 4, Comm: "fio"})
	want := []Release{
		{By: 4, PID: 5, ByComm: "fio", Comm: "jbd2/loop0-8", Bios: 4, DelayP50: 20 * time.Microsecond, DelayMean: 40 * time.Microsecond},
		{By: 5, PID: 4, ByComm: "jbd2/loop0-8", Comm: "fio", Bios: 1, DelayP50: 7 * time.Microsecond, DelayMean: 7 * time.Microsecond},
	}
	if got := tl.list(); !slices.Equal(got, want) {
		t.Errorf("releases %+v, want %+v", got, want)
	}
	var empty releaseTally
	if got := empty.list(); got != nil {
		t.Errorf("no releases: %+v, want nil", got)
	}
}
