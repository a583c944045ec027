package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// captureRecords infers the closed-loop rule on a shared capture and
// returns its records as inferred.
func captureRecords(t *testing.T, group, name string) []Record {
	t.Helper()
	dir := shared.Path(t, "captures", group, name)
	base := filepath.Join(dir, name)
	w, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	return records(t, w)
}

// The fsync chain of fs-bfq-fsync-vs-seqread (README: every fsync is one
// 16 KiB WS of fio, then jbd2's commit: journal blocks, then the commit
// block, PREFLUSH|FUA) runs at 1.1 ms a cycle: fio's own completion comes
// 1 ms before its next write, jbd2's 0.3 ms before its journal blocks. Each
// of fio's 2,139 fsync writes but the first few is released by jbd2's
// commit, and each commit's first journal block by fio's write; the
// commit block by jbd2's own journal blocks, all of them (step 3b), not by
// the completion its depth of five would name.
func TestFsyncChainEdges(t *testing.T) {
	recs := captureRecords(t, "recorded-fs", "fs-bfq-fsync-vs-seqread")
	const fio, jbd2 = 23871, 23778
	var ws, wsEdge, commits, commitAll, first, firstEdge int
	for i := range recs {
		r := &recs[i]
		switch {
		case r.PID == fio && r.Cat.RWBS(r.Bytes) == "WS":
			ws++
			if r.after != nil && r.after.PID == jbd2 && r.after.Cat&trace.CatFlush != 0 {
				wsEdge++
			}
		case r.PID == jbd2 && r.Cat&trace.CatFlush != 0:
			commits++
			if r.DepCount == int64(r.Index) {
				commitAll++
			}
		case r.PID == jbd2 && r.Dep >= 0:
			first++
			if r.after != nil && r.after.PID == fio {
				firstEdge++
			}
		}
	}
	t.Logf("fio WS %d, released by jbd2's commit %d; jbd2 commits %d, after all its I/O %d; first journal blocks %d, released by fio %d",
		ws, wsEdge, commits, commitAll, first, firstEdge)
	if ws != 2139 || commits != 2139 {
		t.Fatalf("%d fio WS and %d commit blocks, want the capture's 2139 and 2139", ws, commits)
	}
	if wsEdge < ws*99/100 {
		t.Errorf("%d of %d fio fsync writes released by jbd2's commit, want at least 99%%", wsEdge, ws)
	}
	if commitAll < commits*99/100 {
		t.Errorf("%d of %d commit blocks wait for all of jbd2's earlier bios, want at least 99%%", commitAll, commits)
	}
	if firstEdge < first*99/100 {
		t.Errorf("%d of %d commits' first journal blocks released by fio's write, want at least 99%%", firstEdge, first)
	}
}

// Eight fio processes writing 4 KiB at random with O_DIRECT
// (c-bfq-8randwrite-root) are independent: one's completion is followed by
// another's write by coincidence, for under 1 % of its writes, which step
// 6 must not take as an edge.
func TestNoEdgesBetweenIndependentWriters(t *testing.T) {
	recs := captureRecords(t, "recorded", "c-bfq-8randwrite-root")
	n := 0
	for i := range recs {
		if recs[i].after != nil {
			n++
		}
	}
	if n != 0 {
		t.Errorf("%d cross-process edges among %d independent writes, want none", n, len(recs))
	}
}

// g-bfq-large-nomsg: fio's cg2 job (pid 21857, rate_iops 12000, iodepth
// 16) queued 6182192 at 1.931853924 s, its third read in flight; BFQ
// held the three (D at 1.939869214, 8 ms later, while it served cg1 after
// cg2's budget timeout) and fio, draining its I/O before its rate sleep,
// queued 4211904 at 1.940058320, 88.677 us after 6182192 completed at
// 1.939969643 and with nothing in flight. Step 3c: that read waited for
// all its process's I/O, not for the completion that freed its depth
// long before; step 3 would replay the hold as 8 ms of think time.
func TestHeldWaitIsNotThinkTime(t *testing.T) {
	recs := captureRecords(t, "recorded", "g-bfq-large-nomsg")
	const cg2 = 21857
	var r, prev *Record
	for i := range recs {
		if recs[i].PID == cg2 && recs[i].Sector == 4211904 && recs[i].Queue == 1_940_058_320 {
			r = &recs[i]
		}
		if recs[i].PID == cg2 && recs[i].Sector == 6182192 && recs[i].Queue == 1_931_853_924 {
			prev = &recs[i]
		}
	}
	if r == nil || prev == nil {
		t.Fatal("the capture's reads 4211904 at 1.940058320 s or 6182192 at 1.931853924 s of pid 21857 not found")
	}
	if prev.Issue != 1_939_869_214 || prev.Done != 1_939_969_643 {
		t.Fatalf("6182192: D %d C %d, want the capture's 1939869214 and 1939969643", prev.Issue, prev.Done)
	}
	if r.Dep != int64(prev.Index) || r.DepCount != int64(r.Index) || r.Think != 88_677 {
		t.Errorf("4211904: Dep %d DepCount %d Think %d ns, want Dep %d (6182192), DepCount %d (every earlier read) and Think 88677",
			r.Dep, r.DepCount, r.Think, prev.Index, r.Index)
	}
}

// f-kyber-mixed's writer (pid 21715: fio, 64 KiB sequential O_DIRECT
// writes, REQ_SYNC without FUA, iodepth=8) reaps its completions in
// bunches: 3,778 of its writes are queued with none of its I/O in flight.
// Each still needs only the completions that leave it its depth of 8
// (step 3), Index+1-8, not all of its earlier writes as a commit record
// would (step 3b): taking them so moved the writer from +3.3 % to -3.9 %.
func TestDirectWriterKeepsItsDepth(t *testing.T) {
	recs := captureRecords(t, "recorded", "f-kyber-mixed")
	const writer = 21715
	n, all := 0, 0
	for i := range recs {
		r := &recs[i]
		if r.PID != writer || r.Index < 8 || r.Dep < 0 {
			continue
		}
		n++
		if r.DepCount != int64(r.Index)+1-8 {
			all++
			if all <= 3 {
				t.Errorf("write %d at %.6f s: DepCount %d, want %d (its iodepth of 8)", r.Index, r.Queue.Seconds(), r.DepCount, r.Index+1-8)
			}
		}
	}
	if n == 0 {
		t.Fatal("no dependent write of pid 21715 in f-kyber-mixed")
	}
	if all > 0 {
		t.Errorf("%d of %d dependent writes need other than Index+1-8 completions", all, n)
	}
}
