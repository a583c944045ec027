package stats_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/stats"
	"github.com/tracesched/tracesched/trace"
)

// TestNoQueueKinds: the requests without a Q of
// recorded-fs/fs-bfq-fsync-vs-seqread (an fsync writer and a reader on
// ext4) are told apart by kind, against counts taken from the events
// themselves:
//   - a D of zero bytes with F while no empty flush bio (an fsync's: a Q of
//     zero bytes with F) waits is a flush the kernel made for a PREFLUSH
//     write (blk_kick_flush; one that finds empty flushes waiting serves
//     them all, and is theirs);
//   - a C of zero bytes without F ends a PREFLUSH/FUA write's flush
//     sequence (blk_flush_complete_seq, after the data step's C);
//   - the capture was started before its workload: nothing in flight at
//     its start.
func TestNoQueueKinds(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-fsync-vs-seqread")
	s := stats.NewSummarizer(stats.SummaryOptions{})
	var flushD, endC uint64
	waiting := map[trace.Dev]int{} // empty flush bios queued and not yet issued
	fixture.Each(t, filepath.Join(dir, "fs-bfq-fsync-vs-seqread"), func(e *trace.Event) {
		if e.Bytes == 0 && e.Cat&trace.CatPC == 0 {
			switch {
			case e.Action == trace.ActionQueue && e.Cat&trace.CatFlush != 0:
				waiting[e.Dev]++
			case e.Action == trace.ActionIssue && e.Cat&trace.CatFlush != 0:
				if waiting[e.Dev] == 0 {
					flushD++
				}
				waiting[e.Dev] = 0
			case e.Action == trace.ActionComplete && e.Cat&trace.CatFlush == 0:
				endC++
			}
		}
		s.Add(e)
	})
	q := s.Result().Requests
	if flushD == 0 || endC == 0 {
		t.Fatalf("capture: %d flush D and %d zero-byte C, want some of each", flushD, endC)
	}
	if q.KernelFlushes != flushD || q.FlushSequenceEnds != endC || q.InFlightAtStart != 0 {
		t.Errorf("kernel flushes %d, flush sequence ends %d, in flight at start %d; want %d, %d, 0",
			q.KernelFlushes, q.FlushSequenceEnds, q.InFlightAtStart, flushD, endC)
	}
	if q.NoQueue != q.KernelFlushes+q.FlushSequenceEnds+q.InFlightAtStart {
		t.Errorf("no_queue %d is not the sum of its kinds", q.NoQueue)
	}
}
