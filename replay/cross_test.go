package replay_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestCrossProcessEdge: the fsync -> jbd2 commit -> fsync return chain of
// fs-mqdl-fsync-vs-seqread (fio's WS completes at 0.021194 s, jbd2 queues
// its journal blocks at 0.021266; jbd2's commit completes at 0.020855,
// fio queues its next write at 0.021047). Captured: fio (pid 1) writes,
// 2 ms later it completes, jbd2 (pid 2) writes 50 us after, 2 ms later it
// completes (its commit), fio writes again 100 us after. Replayed on a device of 3 ms,
// each process, idle for over 1.5 ms since its own last completion, waits
// for the other's predicted completion and keeps only the captured 50 or
// 100 us (step 6 of the rule on Workload), once the pair has been seen
// twice (crossRepeat). Without the edge jbd2 kept its captured gap from
// its own last completion and ran ahead of fio's predicted completion.
func TestCrossProcessEdge(t *testing.T) {
	const ms = trace.Time(1_000_000)
	wl, err := replay.NewWorkloadFromRecords(fsyncRounds(8))
	if err != nil {
		t.Fatal(err)
	}
	q, c := queueCompleteTimes(t, wl, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 3 * ms},
		Queue: replay.Queue{Depth: 4}})
	if len(q[1]) != 8 || len(q[2]) != 8 {
		t.Fatalf("queued %d and %d bios, want 8 and 8", len(q[1]), len(q[2]))
	}
	for k := 3; k < 8; k++ {
		if want := c[1][k] + 50_000; q[2][k] != want {
			t.Errorf("jbd2 bio %d queued at %v, want fio's completion %v + 50us", k, q[2][k], c[1][k])
		}
		if k+1 < 8 {
			if want := c[2][k] + 100_000; q[1][k+1] != want {
				t.Errorf("fio bio %d queued at %v, want jbd2's completion %v + 100us", k+1, q[1][k+1], c[2][k])
			}
		}
	}
}

// Under WorkTimed the fsync chain of TestCrossProcessEdge cycles as a
// pair: 20 captured rounds of 4.15 ms (fio's write 2 ms, jbd2 50 us after
// it, 2 ms, fio 100 us after that) over 83 ms, both processes busy from
// the capture's first 5 % to its last (timedProcess). On a device of 1 ms
// a round takes 2.15 ms, so the pair does at most 83/2.15 = 38 rounds
// before the capture's end (fewer: each cycle's first three rounds keep
// their captured think times, 2.15 ms from the process's own completion),
// where its captured bios were 20 (before, edges kept both at 20: an
// edge made a process fixed). In every cycle,
// from each cycle's fourth round on (the first three carry no edge:
// fio's first bio and the first crossRepeat releases), jbd2's write is
// queued 50 us after fio's write of the same round completes, and fio's
// next write 100 us after jbd2's completes.
func TestCrossProcessEdgeCycles(t *testing.T) {
	const ms = trace.Time(1_000_000)
	const rounds = 20
	wl, err := replay.NewWorkloadFromRecords(fsyncRounds(rounds))
	if err != nil {
		t.Fatal(err)
	}
	q, c := queueCompleteTimes(t, wl, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: ms},
		Queue: replay.Queue{Depth: 4}, Work: replay.WorkTimed})
	t.Logf("fio queued %d writes, jbd2 %d", len(q[1]), len(q[2]))
	if len(q[1]) < 30 || len(q[2]) < 30 || len(q[1]) > 39 || len(q[2]) > 39 {
		t.Fatalf("queued %d and %d bios, want 30 to 38 each (83/2.15 at most)", len(q[1]), len(q[2]))
	}
	n := min(len(q[2]), len(c[1]), len(c[2]))
	for k := 0; k < n; k++ {
		if k%rounds < 3 {
			continue
		}
		if want := c[1][k] + 50_000; q[2][k] != want {
			t.Errorf("jbd2 bio %d queued at %v, want fio's completion %v + 50us", k, q[2][k], c[1][k])
		}
		if k+1 < len(q[1]) && (k+1)%rounds >= 3 {
			if want := c[2][k] + 100_000; q[1][k+1] != want {
				t.Errorf("fio bio %d queued at %v, want jbd2's completion %v + 100us", k+1, q[1][k+1], c[2][k])
			}
		}
	}
}

// fsyncRounds is n rounds of TestCrossProcessEdge's capture: pid 1 writes
// 4 KiB (2 ms on the device), pid 2 writes a metadata block 50 us after
// that completion (2 ms), the next round 100 us after that.
func fsyncRounds(n int) []replay.Record {
	const ms = trace.Time(1_000_000)
	w := trace.CatWrite | trace.CatSync
	var recs []replay.Record
	a := trace.Time(0)
	for k := 0; k < n; k++ {
		recs = append(recs,
			replay.Record{PID: 1, Sector: uint64(1000 + 8*k), Bytes: 4096, Cat: w, Queue: a, Issue: a, Done: a + 2*ms},
			replay.Record{PID: 2, Sector: uint64(900000 + 8*k), Bytes: 4096, Cat: w | trace.CatMeta,
				Queue: a + 2*ms + 50_000, Issue: a + 2*ms + 50_000, Done: a + 4*ms + 50_000})
		a += 4*ms + 150_000
	}
	return recs
}

// queueCompleteTimes replays w with cfg and returns each process's Q and
// C times.
func queueCompleteTimes(t *testing.T, w *replay.Workload, cfg replay.Config) (q, c map[uint32][]trace.Time) {
	t.Helper()
	q, c = map[uint32][]trace.Time{}, map[uint32][]trace.Time{}
	_, err := replay.Run(w, cfg, func(e *trace.Event) error {
		switch e.Action {
		case trace.ActionQueue:
			q[e.PID] = append(q[e.PID], e.Time)
		case trace.ActionComplete:
			c[e.PID] = append(c[e.PID], e.Time)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return q, c
}

// TestCrossProcessReleases: Result.Releases counts the captured bios the
// replay released by another process's completion, with their captured
// delays. In fsyncRounds(8) jbd2 (pid 2) is released by fio's write of
// each round, fio (pid 1) by jbd2's write of the round before. A
// process's first bio is Open, and a pair is followed from its third
// sighting on (crossRepeat 2): jbd2's bios of rounds 3-7 (5, each 50 us
// after fio's completion) and fio's bios 3-7 (5, 100 us after jbd2's),
// listed by the released process when the counts tie. An open-loop
// replay follows none.
func TestCrossProcessReleases(t *testing.T) {
	wl, err := replay.NewWorkloadFromRecords(fsyncRounds(8))
	if err != nil {
		t.Fatal(err)
	}
	cfg := replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 3 * trace.Time(1_000_000)}, Queue: replay.Queue{Depth: 4}}
	res, err := replay.Run(wl, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []replay.Release{
		{By: 2, PID: 1, Bios: 5, DelayP50: 100 * time.Microsecond, DelayMean: 100 * time.Microsecond},
		{By: 1, PID: 2, Bios: 5, DelayP50: 50 * time.Microsecond, DelayMean: 50 * time.Microsecond},
	}
	if !slices.Equal(res.Releases, want) {
		t.Errorf("releases %+v, want %+v", res.Releases, want)
	}
	cfg.Mode = replay.Open
	if res, err = replay.Run(wl, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if res.Releases != nil {
		t.Errorf("open loop: releases %+v, want none", res.Releases)
	}
}
