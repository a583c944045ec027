package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestWorkTimed: a queue-depth-1 reader (pid 1) that the capture's device
// served in 1 ms, 10 us think time, 100 bios from 0 to the capture's last
// completion at 99*1.01 + 1 = 100.99 ms; a second reader (pid 2) that
// stopped half way (50 bios, last completion at 50.49 ms); a writeback
// process (pid 3, asynchronous writes, open) over the whole span; a reader
// that started late (pid 4, 30 bios from 70 ms, as sync(1) after a job). Replayed
// on a device of 100 us: with fixed work pid 1 sends its 100 bios and is
// done at 11 ms. With timed work it goes on at one bio per 110 us (100 us
// of service, its 10 us think) until its next arrival would fall after
// 100.99 ms: arrivals at 0, 110 us, ..., 918*110 = 100.98 ms, 919 bios,
// the 101st on the sector of the first. pid 2 ended long before the
// capture did, pid 4 started long after it, pid 3 is paced by writeback:
// they send their bios once.
func TestWorkTimed(t *testing.T) {
	const us = trace.Time(1000)
	recs := psyncRecords(1, 100, 1000*us, 10*us, 0)
	for _, r := range psyncRecords(2, 50, 1000*us, 10*us, 0) {
		r.Sector += 1 << 30
		recs = append(recs, r)
	}
	for _, r := range psyncRecords(4, 30, 1000*us, 10*us, 70*1000*us) {
		r.Sector += 3 << 30
		recs = append(recs, r)
	}
	for k := 0; k < 20; k++ {
		q := trace.Time(k) * 5000 * us
		recs = append(recs, replay.Record{PID: 3, Sector: 1<<31 + uint64(k)*8, Bytes: 4096, Cat: trace.CatWrite,
			Queue: q, Issue: q, Done: q + 1000*us})
	}
	wl, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	if wl.End != 99*1010*us+1000*us {
		t.Fatalf("workload ends at %v, want 100.99 ms", wl.End)
	}
	run := func(work replay.Work) (map[uint32][]trace.Time, map[uint32][]uint64) {
		q := map[uint32][]trace.Time{}
		sec := map[uint32][]uint64{}
		_, err := replay.Run(wl, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 100 * us},
			Queue: replay.Queue{Depth: 4}, Work: work}, func(e *trace.Event) error {
			if e.Action == trace.ActionQueue {
				q[e.PID] = append(q[e.PID], e.Time)
				sec[e.PID] = append(sec[e.PID], e.Sector)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return q, sec
	}
	q, _ := run(replay.WorkFixed)
	if len(q[1]) != 100 || len(q[2]) != 50 || len(q[3]) != 20 || len(q[4]) != 30 {
		t.Fatalf("fixed work queued %d, %d, %d, %d bios, want 100, 50, 20, 30", len(q[1]), len(q[2]), len(q[3]), len(q[4]))
	}
	q, sec := run(replay.WorkTimed)
	if len(q[1]) != 919 {
		t.Fatalf("timed work: pid 1 queued %d bios, want 919", len(q[1]))
	}
	for k, at := range q[1] {
		if want := trace.Time(k) * 110 * us; at != want {
			t.Fatalf("timed work: pid 1 bio %d queued at %v, want %v", k, at, want)
		}
	}
	if sec[1][100] != sec[1][0] || sec[1][918] != sec[1][18] {
		t.Errorf("timed work: bios 100 and 918 on sectors %d and %d, want those of bios 0 and 18 (%d, %d)",
			sec[1][100], sec[1][918], sec[1][0], sec[1][18])
	}
	if len(q[2]) != 50 || len(q[3]) != 20 || len(q[4]) != 30 {
		t.Errorf("timed work: pids 2, 3, 4 queued %d, %d, %d bios, want their captured 50, 20, 30", len(q[2]), len(q[3]), len(q[4]))
	}
}

// TestWorkTimedDepth: a reader of depth 4 keeps 4 in flight across its
// cycles: on a device of 1 ms with no think time, bios 4k..4k+3 arrive
// together at k ms, in every cycle.
func TestWorkTimedDepth(t *testing.T) {
	const ms = trace.Time(1_000_000)
	recs := qdRecords(1, 40, 4, 2*ms, 0, 0, false)
	wl, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var q []trace.Time
	var start trace.Time = trace.NoTime
	_, err = replay.Run(wl, replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: ms},
		Queue: replay.Queue{Depth: 8}, Work: replay.WorkTimed}, func(e *trace.Event) error {
		if e.Action == trace.ActionQueue {
			if !start.Valid() {
				start = e.Time
			}
			q = append(q, e.Time)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(q) <= 40 {
		t.Fatalf("queued %d bios, want more than the captured 40", len(q))
	}
	for i := 44; i < len(q); i++ {
		if q[i] < q[i-4]+ms {
			t.Fatalf("bio %d queued at %v, less than 1 ms after bio %d (%v): more than 4 in flight", i, q[i], i-4, q[i-4])
		}
	}
}

// TestWorkTimedLongCycle: the cycles of a process with more captured bios
// than the engine queues at a time (recBlock, 1024) are the same as those
// of a short one. A queue-depth-1 reader of 2,500 bios, 1 ms each in the
// capture with 10 us think time, ends at 2499*1.01 + 1 = 2524.99 ms;
// replayed on a device of 100 us it sends one bio every 110 us until its
// next arrival would fall after that: arrivals at k*110 us for k = 0 ..
// 22954 (22954*110 us = 2524.94 ms), 22,955 bios, 9 cycles and 455 bios of
// a tenth, and bio k on the sector of captured bio k mod 2500, across the
// blocks inside each cycle and the cycles' ends.
func TestWorkTimedLongCycle(t *testing.T) {
	const us = trace.Time(1000)
	const n = 2500
	wl, err := replay.NewWorkloadFromRecords(psyncRecords(1, n, 1000*us, 10*us, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := (n-1)*1010*us + 1000*us; wl.End != want {
		t.Fatalf("workload ends at %v, want %v", wl.End, want)
	}
	var q []trace.Time
	var sec []uint64
	res, err := replay.Run(wl, replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: 100 * us},
		Queue: replay.Queue{Depth: 4}, Work: replay.WorkTimed}, func(e *trace.Event) error {
		if e.Action == trace.ActionQueue {
			q = append(q, e.Time)
			sec = append(sec, e.Sector)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 22955 {
		t.Fatalf("queued %d bios, want 22955", len(q))
	}
	for k, at := range q {
		if want := trace.Time(k) * 110 * us; at != want {
			t.Fatalf("bio %d queued at %v, want %v", k, at, want)
		}
		if want := uint64(k%n) * 1000 * 8; sec[k] != want {
			t.Fatalf("bio %d on sector %d, want %d (captured bio %d's)", k, sec[k], want, k%n)
		}
	}
	if got := res.Requests; got != 22955 {
		t.Errorf("result: %d requests, want 22955", got)
	}
}
