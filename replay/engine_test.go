package replay_test

import (
	"math"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestClosedLoopSlowDevice: a qd1 psync reader replayed on a serial device
// twice as slow as the capture's halves its throughput in Closed mode; in
// Open mode it keeps arriving at the captured rate and its queue grows.
func TestClosedLoopSlowDevice(t *testing.T) {
	const lat, think = 100_000, 0 // ns
	recs := psyncRecords(100, 2000, lat, think, 0)
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	if w.Depth != 1 {
		t.Fatalf("depth %d, want 1", w.Depth)
	}
	run := func(mode replay.Mode, devLat trace.Time) replay.Result {
		res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: devLat}, Mode: mode}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Bios != len(recs) || res.Requests != len(recs) {
			t.Fatalf("%v: %d bios, %d requests, want %d", mode, res.Bios, res.Requests, len(recs))
		}
		return res
	}
	real := w.Processes[0].MiBps()
	same := run(replay.Closed, lat)
	slow := run(replay.Closed, 2*lat)
	open := run(replay.Open, 2*lat)
	sameBW, slowBW, openBW := same.Processes[0].MiBps(), slow.Processes[0].MiBps(), open.Processes[0].MiBps()
	t.Logf("capture %.2f MiB/s; closed same device %.2f, closed 2x slower %.2f (max waiting %d); open 2x slower %.2f (max waiting %d)",
		real, sameBW, slowBW, slow.MaxWaiting, openBW, open.MaxWaiting)
	if math.Abs(sameBW/real-1) > 0.01 {
		t.Errorf("closed loop on the capture's own device: %.3f MiB/s, capture %.3f", sameBW, real)
	}
	if r := slowBW / real; math.Abs(r-0.5) > 0.01 {
		t.Errorf("closed loop, device 2x slower: throughput ratio %.3f, want 0.5", r)
	}
	if slow.MaxWaiting > 1 {
		t.Errorf("closed loop: %d requests waiting, want at most 1", slow.MaxWaiting)
	}
	if open.MaxWaiting != 256 || open.Sleeps < len(recs)/3 {
		t.Errorf("open loop, device 2x slower: at most %d requests waiting, %d bios slept; want the queue to fill nr_requests (256) and bios to sleep", open.MaxWaiting, open.Sleeps)
	}
}

// TestClosedLoopKeepsDepth: a qd4 process keeps 4 in flight on any device.
func TestClosedLoopKeepsDepth(t *testing.T) {
	recs := qdRecords(7, 1000, 4, 200_000, 5_000, 0, false)
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, lat := range []trace.Time{50_000, 200_000, 800_000} {
		res, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: lat}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.MaxInDriver != 4 {
			t.Errorf("device %v ns: %d in flight at most, want 4", lat, res.MaxInDriver)
		}
		iops := float64(res.Requests) / res.Span().Seconds()
		want := 4 / (float64(lat+5_000) / 1e9)
		t.Logf("device %d ns: %.0f IOPS (4/(lat+think) = %.0f)", lat, iops, want)
		if math.Abs(iops/want-1) > 0.05 {
			t.Errorf("device %d ns: %.0f IOPS, want about %.0f", lat, iops, want)
		}
	}
}

// TestDeterminism: two runs emit byte-identical events.
func TestDeterminism(t *testing.T) {
	var recs []replay.Record
	recs = append(recs, qdRecords(10, 3000, 8, 300_000, 20_000, 0, false)...)
	recs = append(recs, qdRecords(11, 3000, 4, 300_000, 20_000, 1<<22, true)...)
	recs = append(recs, psyncRecords(12, 1000, 150_000, 30_000, 1_000)...)
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var sums [2][32]byte
	var counts [2]int
	for i := range sums {
		h := newEventHasher()
		res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 60_000}}, h.add)
		if err != nil {
			t.Fatal(err)
		}
		sums[i], counts[i] = h.sum(), h.n
		if res.Events != h.n {
			t.Errorf("result counts %d events, %d emitted", res.Events, h.n)
		}
	}
	if sums[0] != sums[1] || counts[0] != counts[1] {
		t.Fatalf("runs differ: %x (%d events) vs %x (%d events)", sums[0], counts[0], sums[1], counts[1])
	}
	t.Logf("%d events, sha256 %x", counts[0], sums[0][:8])
}

// TestMergesAndPlugging: a sequential writer whose bios come in plugged
// batches of 4 gets one request per batch (plug merges), and sequential
// bios arriving while the device is busy merge in the scheduler.
func TestMergesAndPlugging(t *testing.T) {
	var recs []replay.Record
	for b := 0; b < 50; b++ {
		for i := 0; i < 4; i++ {
			k := b*4 + i
			q := trace.Time(b*1_000_000 + i*1000)
			recs = append(recs, replay.Record{PID: 5, Sector: uint64(k) * 8, Bytes: 4096, Cat: trace.CatWrite | trace.CatSync,
				Queue: q, Issue: q + 10_000, Done: q + 100_000, Plugged: true, PlugEnd: i == 3})
		}
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var acts map[trace.Action]int
	count := func(e *trace.Event) error { acts[e.Action]++; return nil }
	for _, mk := range []func(replay.Host) (replay.Scheduler, error){newNone, newMQDL} {
		acts = map[trace.Action]int{}
		res, err := replay.Run(w, replay.Config{NewScheduler: mk, Device: &fixedDevice{lat: 100_000}, Mode: replay.Open}, count)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 50 || res.BackMerges != 150 {
			t.Errorf("%s: %d requests, %d back merges; want 50, 150", res.Scheduler, res.Requests, res.BackMerges)
		}
		if acts[trace.ActionPlug] != 50 || acts[trace.ActionUnplugIO] != 50 || acts[trace.ActionQueue] != 200 || acts[trace.ActionIssue] != 50 {
			t.Errorf("%s: events %v", res.Scheduler, acts)
		}
	}
	// Unplugged sequential bios, device with one slot busy for long:
	// mq-deadline back-merges the waiting ones into one request.
	recs = recs[:0]
	for k := 0; k < 40; k++ {
		q := trace.Time(k * 1000)
		recs = append(recs, replay.Record{PID: 6, Sector: uint64(k) * 8, Bytes: 4096, Cat: trace.CatRead | trace.CatSync,
			Queue: q, Issue: q, Done: q + 1_000_000})
	}
	w, err = replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 1_000_000},
		Queue: replay.Queue{Depth: 1}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 || res.BackMerges != 38 {
		t.Errorf("mq-deadline, depth 1: %d requests, %d back merges; want 2, 38", res.Requests, res.BackMerges)
	}
	// With none, only the last 8 waiting requests are merge candidates, and
	// every bio extends the single waiting request: still 2 requests.
	res, err = replay.Run(w, replay.Config{NewScheduler: newNone, Device: &serialDevice{lat: 1_000_000},
		Queue: replay.Queue{Depth: 1}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 {
		t.Errorf("none, depth 1: %d requests, want 2", res.Requests)
	}
	// MaxSectors caps merges.
	res, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 1_000_000},
		Queue: replay.Queue{Depth: 1, MaxSectors: 64}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 6 { // 1 + ceil(39/8)
		t.Errorf("mq-deadline, max 64 sectors: %d requests, want 6", res.Requests)
	}
}

// TestNrRequestsLimit: with 4 requests allowed, an open-loop burst sleeps.
func TestNrRequestsLimit(t *testing.T) {
	var recs []replay.Record
	for k := 0; k < 100; k++ {
		recs = append(recs, replay.Record{PID: uint32(100 + k%10), Sector: uint64(k) * 100_000, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: trace.Time(k), Issue: trace.Time(k), Done: trace.Time(k) + 50_000})
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 50_000},
		Queue: replay.Queue{Depth: 2, NrRequests: 4}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 100 || res.Sleeps == 0 || res.MaxWaiting > 4 {
		t.Errorf("%d requests, %d sleeps, max waiting %d", res.Requests, res.Sleeps, res.MaxWaiting)
	}
}

// latDevice serves each bio in its own latency, by sector.
type latDevice struct{ lat map[uint64]trace.Time }

func (d *latDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	return now + d.lat[rq.Records()[0].Sector]
}
func (d *latDevice) Done(now trace.Time, rq *replay.Request) {}

// TestWokenGapBioWaits: a qd2 process submits a dependent bio 9 us after
// the latest completion it saw, then a back-to-back one 5 us later. When
// the replay's completion that frees the second one comes after that gap,
// the process slept at its full depth: the bio arrives the process's wake-up
// delay (9 us) after that completion, not at it.
func TestWokenGapBioWaits(t *testing.T) {
	const us = 1000
	rec := func(i int, q, done trace.Time) replay.Record {
		return replay.Record{PID: 1, Comm: "qd2", Sector: uint64(i) * 8, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: q, Issue: q, Done: done}
	}
	recs := []replay.Record{
		rec(0, 0, 100*us),
		rec(1, 10*us, 101*us),
		rec(2, 110*us, 200*us), // dependent: 9 us after C1, 10 us after C0 (its DepCount-th)
		rec(3, 115*us, 201*us), // back-to-back: needs 2 completions
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	dev := &latDevice{lat: map[uint64]trace.Time{0: 100 * us, 8: 200 * us, 16: 150 * us, 24: 86 * us}}
	queued := map[uint64]trace.Time{}
	_, err = replay.Run(w, replay.Config{NewScheduler: newNone, Device: dev}, func(e *trace.Event) error {
		if e.Action == trace.ActionQueue {
			queued[e.Sector] = e.Time
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Bio 1 completes at 210 us, bio 2 at 260; bio 2 arrives 10 us after the first
	// completion (100 us); bio 3's gap would allow 115 us, but it needs bio
	// 1's completion and then the process's 9 us wake-up.
	if got, want := queued[16], trace.Time(110*us); got != want {
		t.Errorf("bio 2 queued at %v, want %v", got, want)
	}
	if got, want := queued[24], trace.Time(219*us); got != want {
		t.Errorf("bio 3 queued at %v, want %v", got, want)
	}
}
