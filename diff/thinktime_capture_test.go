package diff_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
)

// TestThinkTimeRecomputedAsLogged: the think-time class recomputed from a
// real BFQ capture's timing agrees with the class the kernel logged in its
// "expire (..., short_ttime X)" messages (ThinkTime.RealLogged). The fsync
// writer of fs-bfq-fsync-vs-seqread inserts its next write while BFQ still
// idles on its empty, in-service queue: busy for bfq_update_io_thinktime,
// so no sample. Sampling those insertions (the recomputation before)
// agreed with the kernel on 27 of 37 logged classes (73.0 %); leaving them
// out, on 35 (94.6 %).
func TestThinkTimeRecomputedAsLogged(t *testing.T) {
	name := "fs-bfq-fsync-vs-seqread"
	path := filepath.Join(shared.Path(t, "captures", "recorded-fs", name), name)
	in, err := blktrace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s, err := diff.Load(in, in.Meta())
	if err != nil {
		t.Fatal(err)
	}
	tt := diff.Compare(s, s, diff.Options{}).ThinkTime
	la := tt.RealLogged
	t.Logf("recomputed vs logged: %.1f%% of %d", 100*la.Agreement, la.Points)
	if la.Points != 37 {
		t.Fatalf("%d logged classes, want the capture's 37", la.Points)
	}
	if la.Agreement < 35.0/37-1e-9 {
		t.Errorf("recomputed class agrees with the kernel's logged one on %.1f%% of %d, want 35 of 37 (94.6%%)", 100*la.Agreement, la.Points)
	}
}
