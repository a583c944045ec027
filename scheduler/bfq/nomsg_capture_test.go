package bfq_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
)

// perSecondMiB is the MiB/s a cgroup's bios completed in each whole second
// of a side, from 0 to n-1.
func perSecondMiB(s *diff.Side, cg uint64, n int) []float64 {
	out := make([]float64, n)
	for i := range s.NumBios() {
		b := s.BioAt(i)
		if b.Cgroup != cg || !b.Done.Valid() {
			continue
		}
		if sec := int(b.Done / 1_000_000_000); sec >= 0 && sec < n {
			out[sec] += float64(b.Bytes) / (1 << 20)
		}
	}
	return out
}

// g-bfq-large-nomsg (Linux 6.18, no messages): two fio random readers
// rate-limited to 12k IOPS, cgroups weighted 100 (601) and 900 (621). The
// kernel idled for cg2's queue throughout (the capture's README: cg1
// starves at 5.3 MiB/s, the same untraced), so cg2's think time stayed
// short, and a queue with a short think time never gets a waker
// (bfq_check_waker returns at bfq_bfqq_has_short_ttime). Replayed, cg2's
// queue must get no waker and cg1 must stay at its captured rate every
// second (4.5 to 6.0 MiB/s in the capture), never have its fixed work
// injected at once.
func TestNoWakerLargeNomsg(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded", "g-bfq-large-nomsg")
	base := filepath.Join(dir, "g-bfq-large-nomsg")
	real, w, dm := loadCapture(t, base)
	o := replay.Options{Weights: map[uint64]int{601: 100, 621: 900},
		CgroupPaths: map[uint64]string{1: "/", 601: "/tsched-cg1", 621: "/tsched-cg2"}}
	pred := replayBFQ(t, w, dm, o)
	pn, _ := wakerSets(pred)
	for k, n := range pn {
		if strings.HasPrefix(k, "bfq21857S ") {
			t.Errorf("predicted %d %q: cg2's queue got a waker", n, k)
		}
	}
	const secs = 10
	rs, ps := perSecondMiB(real, 601, secs), perSecondMiB(pred, 601, secs)
	t.Logf("cg1 MiB/s by second: real %.1f, predicted %.1f", rs, ps)
	lo, hi := rs[0], rs[0]
	for _, v := range rs {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < 4 || hi > 7 {
		t.Fatalf("capture: cg1 at %.1f to %.1f MiB/s by second, want its README's steady 5.3", lo, hi)
	}
	for i, v := range ps {
		if v < lo*0.9 || v > hi*1.1 {
			t.Errorf("second %d: cg1 predicted at %.1f MiB/s, outside the capture's %.1f to %.1f (10 %% either side)", i, v, lo, hi)
		}
	}
}
