package replay_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// fs-mqdl-fsync-vs-seqread: jbd2 (pid 24529) queues each commit's journal
// blocks back to back (four bios within a few microseconds: 0.747066,
// 0.747069, 0.747070, 0.747071 s), the first released by fio's fsync write
// completing (0.745837 s, an edge of step 6, 1.229 ms before), 5.594 ms
// after jbd2's own latest completion (its previous commit, 0.741472 s).
// The edge woke jbd2, so its wake-up delay, which the later bios of the
// batch keep after their DepCount-th completion (step 4), is the edge's
// 1.229 ms, not the 5.594 ms from its own completion: with that one, a
// replay whose fsync cycle runs faster than the capture's held the second
// journal block up to 5.6 ms after its predicted DepCount-th completion,
// long after the first (BFQ on fs-bfq-fsync-vs-seqread's device model: Q
// to Q within a batch p99 4.2 ms, captured 11 us). Replayed on a device of
// 100 us a request (the BFQ capture's write D2C p50 94-102 us), every
// journal block queued within 50 us of the previous one in the capture
// keeps that gap.
func TestEdgeWakeKeepsBatchGaps(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-mqdl-fsync-vs-seqread")
	base := filepath.Join(dir, "fs-mqdl-fsync-vs-seqread")
	const jbd2 = 24529
	open := func() (trace.EventReader, error) { return blktrace.Open(base) }
	w, err := replay.NewWorkload(open)
	if err != nil {
		t.Fatal(err)
	}
	captured := jbd2Queues(t, open, w.Dev)
	var pred []trace.Time
	_, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 100_000},
		Queue: replay.Queue{Rotational: true}}, func(e *trace.Event) error {
		if e.Action == trace.ActionQueue && e.PID == jbd2 && e.Dev == w.Dev {
			pred = append(pred, e.Time)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(captured) != 1679 || len(pred) != len(captured) {
		t.Fatalf("jbd2 queued %d bios in the capture (README: 1,366 WSM + 313 FWFSM = 1679) and %d in the replay", len(captured), len(pred))
	}
	n, off := 0, 0
	for k := 1; k < len(captured); k++ {
		g := captured[k] - captured[k-1]
		if g >= 50_000 {
			continue
		}
		n++
		if pg := pred[k] - pred[k-1]; pg != g {
			off++
			if off <= 3 {
				t.Errorf("jbd2 bio %d: queued %v after the previous one in the replay, %v in the capture", k, pg, g)
			}
		}
	}
	if n < 1000 {
		t.Fatalf("%d back-to-back journal blocks, want the capture's 1051 at least", n)
	}
	if off > 0 {
		t.Errorf("%d of %d back-to-back journal blocks queued at another gap than the capture's", off, n)
	}
}

// jbd2Queues returns the Q times of jbd2 (pid 24529) on dev in the capture.
func jbd2Queues(t *testing.T, open func() (trace.EventReader, error), dev trace.Dev) []trace.Time {
	t.Helper()
	src, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	var out []trace.Time
	for {
		e, err := src.ReadEvent()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Action == trace.ActionQueue && e.PID == 24529 && e.Dev == dev {
			out = append(out, e.Time)
		}
	}
}
