package replay

import "testing"

// lockMarks returns step 7's marks on a shared capture's records: openers
// and closers per process.
func lockMarks(t *testing.T, group, name string) (open, close map[uint32]int) {
	t.Helper()
	recs := captureRecords(t, group, name)
	open, close = map[uint32]int{}, map[uint32]int{}
	for i := range recs {
		if recs[i].lockOpen {
			open[recs[i].PID]++
		}
		if recs[i].lockClose {
			close[recs[i].PID]++
		}
	}
	return open, close
}

// TestWALLockInferred (step 7, lock.go): fs-bfq-pgbench's four pgbench
// backends (pids 3033-3036) each write the WAL (WS) and fdatasync it
// (FWS, an empty PREFLUSH) under WALWriteLock: 2,159 sections (552, 526,
// 533 and 548 FWS), two pairs of them overlapping (from the capture's Q
// and C times; the other 7 sections, of postmaster and walwriter, are too
// few to take part). The other 2,155 are locked. Processes that do not share
// a lock get none: fio's fsync writer and its reader
// (fs-bfq-fsync-vs-seqread: the writer's fsyncs are jbd2 commits, no
// empty PREFLUSH of its own in sections), eight independent direct
// writers (c-bfq-8randwrite-root).
func TestWALLockInferred(t *testing.T) {
	open, close := lockMarks(t, "recorded-fs", "fs-bfq-pgbench")
	t.Logf("sections per process: opened %v, closed %v", open, close)
	total := 0
	for _, pid := range []uint32{3033, 3034, 3035, 3036} {
		if open[pid] < 500 || open[pid] != close[pid] {
			t.Errorf("backend %d: %d sections opened, %d closed; want over 500 (it flushes the WAL 526 to 552 times), as many of each", pid, open[pid], close[pid])
		}
		total += open[pid]
	}
	if total != 2155 {
		t.Errorf("%d locked sections of the four backends, want 2,155 (2,159 less the two overlapping pairs)", total)
	}
	for _, c := range []struct{ group, name string }{{"recorded-fs", "fs-bfq-fsync-vs-seqread"}, {"recorded", "c-bfq-8randwrite-root"}, {"recorded-fs", "fs-bfq-untar"}} {
		if open, _ := lockMarks(t, c.group, c.name); len(open) != 0 {
			t.Errorf("%s: sections locked for %v, want none", c.name, open)
		}
	}
}
