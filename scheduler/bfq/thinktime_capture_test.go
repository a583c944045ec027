package bfq_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
)

// fs-bfq-fsync-vs-seqread replayed through the model: the think-time class
// diff recomputes from the prediction's timing agrees with the class the
// model itself logged ("expire (..., short_ttime X)") at every logged
// point, and with the real class on at least 95 % of the sync requests
// (issue 11's target). The fsync writer inserts its next write at the
// instant its in-service queue expires with its budget spent (reason 2):
// the insertion came first in the trace, into a busy queue, so
// bfq_update_io_thinktime takes no sample. Read as after the expiration
// (the measure before), the writer's mean fell below slice_idle/2 and was
// counted short against the kernel's long: 69.1 % agreement here (85.1 %
// with the CLI's replay, warm budgets), and the recomputed class agreed
// with the model's logged one at 75 of 135 points (now 0.9997 and 135).
func TestThinkTimeFsyncCapturePredicted(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-fsync-vs-seqread")
	real, w, dm := loadCapture(t, filepath.Join(dir, "fs-bfq-fsync-vs-seqread"))
	o := replay.Options{Weights: map[uint64]int{661: 300, 681: 700},
		CgroupPaths: map[uint64]string{1: "/", 661: "/tsched-fw", 681: "/tsched-fr"}}
	pred := replayBFQ(t, w, dm, o)
	tt := diff.Compare(real, pred, diff.Options{}).ThinkTime
	t.Logf("agreement %.4f of %d; recomputed vs logged: real %.4f of %d, predicted %.4f of %d",
		tt.Agreement, tt.Compared, tt.RealLogged.Agreement, tt.RealLogged.Points, tt.PredLogged.Agreement, tt.PredLogged.Points)
	if tt.PredLogged.Points < 30 {
		t.Fatalf("the model logged %d think-time classes of sync queues, want 30 or more (the capture: 37)", tt.PredLogged.Points)
	}
	if tt.PredLogged.Agreement != 1 {
		t.Errorf("recomputed predicted class agrees with the model's logged one on %.1f%% of %d, want all", 100*tt.PredLogged.Agreement, tt.PredLogged.Points)
	}
	// 4306: the requests BFQ classified in the capture (its add_request,
	// 4355, less the reader's 49 split parts, not compared).
	if tt.Compared < 4306 || !(tt.Agreement >= 0.95) {
		t.Errorf("think-time agreement %.4f of %d sync requests, want at least 0.95 of the capture's 4306", tt.Agreement, tt.Compared)
	}
}
