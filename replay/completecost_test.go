package replay_test

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestCompleteCostDependent: a psync reader (depth 1) on a 10 us device
// that queued 10 us after each completion, 4 us of which was the source
// scheduler's completion. Under a scheduler whose completion takes 20
// us, by hand: the process runs 20 us after each C and thinks the
// other 6 us of its 10, so it queues every 10 + 20 + 6 = 36 us; when
// the completion costs what it cost in the capture (4 us), the replay
// is the capture's, every 20 us.
func TestCompleteCostDependent(t *testing.T) {
	w, err := replay.NewWorkloadFromRecords(psyncRecords(1, 5, 10*us, 10*us, 0))
	if err != nil {
		t.Fatal(err)
	}
	dev := &fixedDevice{lat: 10 * us}
	sub := &replay.SubmitCost{Source: 5 * us, Target: 5 * us, CompleteSource: 4 * us, CompleteTarget: 20 * us}
	if q, want := queueTimes(t, w, dev, sub), times(0, 36, 72, 108, 144); !slices.Equal(q[1], want) {
		t.Errorf("20 us completion: queued at %v, want %v", q[1], want)
	}
	sub.CompleteTarget = 4 * us
	if q, want := queueTimes(t, w, dev, sub), times(0, 20, 40, 60, 80); !slices.Equal(q[1], want) {
		t.Errorf("4 us completion, the source's: queued at %v, want %v", q[1], want)
	}
}

// TestCompleteCostSharedCPU: a process that submits back to back (a
// deep queue, 6 us a submission, nothing waited for) on CPU 0 of a 20 us
// device, whose completions (3 us each) the capture shows on CPU 0 too.
// By hand: Qs at 0, 6, 12, 18, 24 (each holding the CPU to the next; the
// first bio arrives at its captured time, Open, and its C at 20 is not
// charged); C1 at 26 moves the CPU's end from 30 to 33, after Q5's
// arrival was set for 30, so Q5 waits; C2 at 32 moves it to 36 after
// Q5's turn was set for 33: Q5 at 36 (free at 42); C3 at 38 and C4 at
// 44 move it to 48: Q6 at 48; Q7 at 54 (C5 at 56: free at 63), Q8 at 63.
// With the completions on CPU 1 the submissions do not wait: every 6 us.
func TestCompleteCostSharedCPU(t *testing.T) {
	recs := backToBack(1, 0, times(0, 6, 12, 18, 24, 30, 36, 42, 48))
	sub := &replay.SubmitCost{Source: 6 * us, Target: 6 * us, CompleteSource: 3 * us, CompleteTarget: 3 * us}
	for _, tc := range []struct {
		doneCPU uint32
		want    []trace.Time
	}{
		{0, times(0, 6, 12, 18, 24, 36, 48, 54, 63)},
		{1, times(0, 6, 12, 18, 24, 30, 36, 42, 48)},
	} {
		for i := range recs {
			recs[i].DoneCPU = tc.doneCPU
		}
		w, err := replay.NewWorkloadFromRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		if q := queueTimes(t, w, &fixedDevice{lat: 20 * us}, sub); !slices.Equal(q[1], tc.want) {
			t.Errorf("completions on CPU %d: queued at %v, want %v", tc.doneCPU, q[1], tc.want)
		}
	}
}

// TestCompleteGapEvents: Workload.CompleteGap from events, by hand. CPU 0
// completes 120 requests in bunches of 4, 2 us apart within a bunch, the
// bunches 100 us apart (longer than completeBackToBack: not counted), with
// a Q between bunches; CPU 1 completes 120 more, 3 us apart, but each
// after a Q on CPU 1 (a submission in between: not counted), and 61 more
// in one bunch 5 us apart. Gaps: 90 of 2 us and 60 of 5 us, their mean
// (180 + 300) / 150 = 3.2 us. The completing CPU is each bio's DoneCPU.
func TestCompleteGapEvents(t *testing.T) {
	var evs []trace.Event
	rd := trace.CatRead | trace.CatSync
	bio := func(pid uint32, q, c trace.Time, qcpu, ccpu uint32, s uint64) {
		evs = append(evs,
			trace.Event{Time: q, Action: trace.ActionQueue, PID: pid, CPU: qcpu, Sector: s, Bytes: 4096, Cat: rd},
			trace.Event{Time: q + 1, Action: trace.ActionGetRQ, PID: pid, CPU: qcpu, Sector: s, Bytes: 4096, Cat: rd},
			trace.Event{Time: q + 2, Action: trace.ActionIssue, PID: pid, CPU: qcpu, Sector: s, Bytes: 4096, Cat: rd},
			trace.Event{Time: c, Action: trace.ActionComplete, PID: pid, CPU: ccpu, Sector: s, Bytes: 4096, Cat: rd})
	}
	s := uint64(0)
	for b := 0; b < 30; b++ {
		base := trace.Time(b) * 100 * us
		for i := 0; i < 4; i++ {
			// Queued on CPU 1 (before CPU 1's own traffic below starts).
			bio(1, base+trace.Time(i)*100, base+50*us+trace.Time(i)*2*us, 1, 0, s)
			s += 8
		}
	}
	for i := 0; i < 120; i++ {
		at := 10_000*us + trace.Time(i)*10*us
		bio(2, at, at+3*us, 1, 1, s)
		s += 8
	}
	for i := 0; i < 61; i++ {
		bio(3, 20_000*us+trace.Time(i)*100, 21_000*us+trace.Time(i)*5*us, 0, 1, s)
		s += 8
	}
	slices.SortStableFunc(evs, func(a, b trace.Event) int { return cmp.Compare(a.Time, b.Time) })
	w := collected(t, evs)
	if w.CompleteGaps != 150 {
		t.Errorf("%d C-to-C gaps measured, want 150 (90 of CPU 0, 60 of CPU 1)", w.CompleteGaps)
	}
	if want := 3200 * trace.Time(1); w.CompleteGap != want {
		t.Errorf("CompleteGap %v, want %v", w.CompleteGap, want)
	}
	dev := &cpuDevice{cpus: map[uint32][2]uint32{}}
	if _, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: dev}, func(*trace.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	cpus := dev.cpus
	if want := map[uint32][2]uint32{1: {1, 0}, 2: {1, 1}, 3: {0, 1}}; !maps.Equal(cpus, want) {
		t.Errorf("(CPU, DoneCPU) by process %v, want %v", cpus, want)
	}
}

// cpuDevice serves every request in 10 us and notes the CPU and
// DoneCPU of each process's bios.
type cpuDevice struct{ cpus map[uint32][2]uint32 }

func (d *cpuDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	for _, r := range rq.Records() {
		d.cpus[r.PID] = [2]uint32{r.CPU, r.DoneCPU}
	}
	return now + 10*us
}
func (d *cpuDevice) Done(now trace.Time, rq *replay.Request) {}

// TestCompleteGapRecorded: Workload.CompleteGap of the recorded BFQ and
// mq-deadline captures of one job against the mean computed here from
// the events alone (per CPU, the C-to-C gaps of 20 us or less with no Q
// of that CPU between), to the ns; BFQ's completion, with its messages
// traced, costs more than mq-deadline's.
func TestCompleteGapRecorded(t *testing.T) {
	got := map[string]trace.Time{}
	for _, name := range []string{"a-bfq-w100-900", "b-mqdl-w100-900"} {
		path := shared.Path(t, "captures", "recorded", name)
		type last struct {
			t trace.Time
			c bool
		}
		prev := map[uint32]last{}
		var gaps []float64
		c := replay.NewCollector()
		var dev trace.Dev
		fixture.Each(t, path, func(e *trace.Event) {
			c.Add(e)
			if e.Action != trace.ActionQueue && e.Action != trace.ActionComplete {
				return
			}
			if dev == 0 {
				dev = e.Dev
			}
			if e.Dev != dev {
				return
			}
			isC := e.Action == trace.ActionComplete
			if p, ok := prev[e.CPU]; ok && p.c && isC && e.Time >= p.t && e.Time-p.t <= 20*us {
				gaps = append(gaps, float64(e.Time-p.t))
			}
			prev[e.CPU] = last{e.Time, isC}
		})
		w, err := c.Workload()
		if err != nil {
			t.Fatal(err)
		}
		if len(gaps) < 100 {
			t.Fatalf("%s: %d gaps", name, len(gaps))
		}
		sum := 0.0
		for _, g := range gaps {
			sum += g
		}
		mean := sum / float64(len(gaps))
		t.Logf("%s: CompleteGap %v over %d gaps; the events' own mean %.1f ns over %d", name, w.CompleteGap, w.CompleteGaps, mean, len(gaps))
		if w.CompleteGaps != len(gaps) {
			t.Errorf("%s: %d gaps measured, the events show %d", name, w.CompleteGaps, len(gaps))
		}
		if d := math.Abs(float64(w.CompleteGap) - mean); d > 0.5 {
			t.Errorf("%s: CompleteGap %v, the events' mean %.1f ns", name, w.CompleteGap, mean)
		}
		got[name] = w.CompleteGap
	}
	if got["a-bfq-w100-900"] <= got["b-mqdl-w100-900"] {
		t.Errorf("BFQ's completion %v, no more than mq-deadline's %v", got["a-bfq-w100-900"], got["b-mqdl-w100-900"])
	}
}

// TestHostCostsComplete: complete_ns scales the capture's completion cost
// as submit_ns does the submission's; a table without it, or without the
// replayed scheduler in it, models no completion; bad values are refused.
func TestHostCostsComplete(t *testing.T) {
	w := &replay.Workload{SubmitGap: 6 * us, SubmitGaps: 500, CompleteGap: 2 * us, CompleteGaps: 400}
	h, err := replay.LoadHostCosts(strings.NewReader(`{"version": 1, "submit_ns": {"bfq": 9000, "mq-deadline": 6000, "bfq+messages": 12000},
		"complete_ns": {"bfq": 1500, "mq-deadline": 1000, "bfq+messages": 4000}}`), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	c, ok, why := h.SubmitCost(w, "mq-deadline", "bfq", false)
	if !ok || c.CompleteSource != 2*us || c.CompleteTarget != 3*us {
		t.Errorf("mq-deadline -> bfq: %+v %v %q, want a completion of 2 us -> 3 us", c, ok, why)
	}
	if c, _, _ := h.SubmitCost(w, "bfq", "mq-deadline", true); c.CompleteTarget != 500 {
		t.Errorf("bfq with messages -> mq-deadline: completion %v, want 2 us * 1000/4000 = 500 ns", c.CompleteTarget)
	}
	if tr, _ := h.Traced("bfq"); tr.CompleteNS["bfq"] != 4000 || h.CompleteNS["bfq"] != 1500 {
		t.Errorf("Traced: complete_ns bfq %d (want 4000), the original's %d (want 1500)", tr.CompleteNS["bfq"], h.CompleteNS["bfq"])
	}
	noC := h
	noC.CompleteNS = nil
	if c, ok, _ := noC.SubmitCost(w, "mq-deadline", "bfq", false); !ok || c.CompleteSource != 0 || c.CompleteTarget != 0 || c.Target != 9*us {
		t.Errorf("no complete_ns: %+v %v, want the submission alone", c, ok)
	}
	if c, _, _ := h.SubmitCost(&replay.Workload{SubmitGap: 6 * us, SubmitGaps: 500}, "mq-deadline", "bfq", false); c.CompleteTarget != 0 {
		t.Errorf("no C-to-C gaps in the capture: completion %v, want none", c.CompleteTarget)
	}
	for _, bad := range []string{
		`{"version": 1, "submit_ns": {"bfq": 9000}, "complete_ns": {"bfq": 0}}`,
		`{"version": 1, "submit_ns": {"bfq": 9000}, "complete_ns": {"bfq": -5}}`,
		`{"version": 1, "submit_ns": {"bfq": 9000}, "complete_ns": {"bfq": 2000000000}}`,
	} {
		if _, err := replay.LoadHostCosts(strings.NewReader(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "complete_ns") {
			t.Errorf("%s: err %v, want one naming complete_ns", bad, err)
		}
	}
}

// pairRecords builds a process that keeps two 4 KiB reads in flight on
// CPU 0: pairs queued 1 us apart that both complete 50 us after the
// first's Q (on CPU doneCPU), the next pair 5 us after. The first bio of
// a pair is released by a completion (5 us of think time); the second
// follows it back to back, and in a replay where its slot frees later (a
// serial device), waits at the process's full depth for its DepCount-th
// completion and then its wake-up delay (step 4 of the closed-loop rule:
// the 5 us of its pair's first bio).
func pairRecords(n int, doneCPU uint32) []replay.Record {
	recs := make([]replay.Record, n)
	for i := range recs {
		b := trace.Time(i/2) * 55 * us
		q := b + trace.Time(i%2)*us
		recs[i] = replay.Record{PID: 1, CPU: 0, DoneCPU: doneCPU, Sector: uint64(i) * 1000 * 8, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: q, Issue: q, Done: b + 50*us}
	}
	return recs
}

// TestCompleteCostWake: pairRecords replayed on a serial device of 30 us
// a request. The second bio of each pair waits for the process's
// (2j)-th completion (its pair's predecessor's second bio) and then its
// wake-up delay: 5 us without a completion cost, and as much when the
// completion costs what it cost the source (1 us: 1 us of CPU, then the
// 4 us of the application's); 15 us when it costs 11.
func TestCompleteCostWake(t *testing.T) {
	w, err := replay.NewWorkloadFromRecords(pairRecords(20, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sub  replay.SubmitCost
		want trace.Time
	}{
		{replay.SubmitCost{Source: 1 * us, Target: 1 * us}, 5 * us},
		{replay.SubmitCost{Source: 1 * us, Target: 1 * us, CompleteSource: 1 * us, CompleteTarget: 1 * us}, 5 * us},
		{replay.SubmitCost{Source: 1 * us, Target: 1 * us, CompleteSource: 1 * us, CompleteTarget: 11 * us}, 15 * us},
	} {
		q := map[uint64]trace.Time{}
		var done []trace.Time // the process's completions, in order
		_, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: &serialDevice{lat: 30 * us}, Submit: &tc.sub}, func(e *trace.Event) error {
			switch e.Action {
			case trace.ActionQueue:
				q[e.Sector/8000] = e.Time
			case trace.ActionComplete:
				done = append(done, e.Time)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for j := 2; j < 10; j++ {
			k := uint64(2*j + 1)
			if got := q[k] - done[2*j-1]; got != tc.want {
				t.Errorf("%+v: bio %d queued %v after the process's completion %d, want %v", tc.sub, k, got, 2*j, tc.want)
			}
		}
	}
}

// batchRecords builds a process that submits batches of four 4 KiB reads
// 1 us apart on CPU 0, each completing lat after its Q (on CPU doneCPU),
// the next batch 5 us after the previous one's last completion: each
// batch's first bio is released by a completion, the others follow it
// back to back at the process's full depth (the wake-up delay of step 4).
func batchRecords(n int, lat trace.Time, doneCPU uint32) []replay.Record {
	var recs []replay.Record
	t := trace.Time(0)
	for len(recs) < n {
		var last trace.Time
		for i := 0; i < 4 && len(recs) < n; i++ {
			q := t + trace.Time(i)*us
			recs = append(recs, replay.Record{PID: 1, CPU: 0, DoneCPU: doneCPU, Sector: uint64(len(recs)) * 1000 * 8, Bytes: 4096,
				Cat: trace.CatRead | trace.CatSync, Queue: q, Issue: q, Done: q + lat})
			last = q + lat
		}
		t = last + 5*us
	}
	return recs
}

// TestCompleteCostCancels: a completion that costs the replayed scheduler
// what it cost the source (1 us each, on another CPU than the
// submissions) changes nothing, whether the device keeps the capture's
// 50 us or takes 80 (the batch's later bios then wait at the process's
// full depth and keep their wake-up delay); one that costs 11 us makes
// every batch start 10 us later than the source's cost does, and its
// back-to-back bios too.
func TestCompleteCostCancels(t *testing.T) {
	w, err := replay.NewWorkloadFromRecords(batchRecords(40, 50*us, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, lat := range []trace.Time{50 * us, 80 * us} {
		dev := &fixedDevice{lat: lat}
		none := queueTimes(t, w, dev, &replay.SubmitCost{Source: 1 * us, Target: 1 * us})
		same := queueTimes(t, w, dev, &replay.SubmitCost{Source: 1 * us, Target: 1 * us, CompleteSource: 1 * us, CompleteTarget: 1 * us})
		if !slices.Equal(none[1], same[1]) {
			t.Errorf("%v device: the source's completion cost: queued at %v, without a completion cost %v", lat, same[1], none[1])
		}
		more := queueTimes(t, w, dev, &replay.SubmitCost{Source: 1 * us, Target: 1 * us, CompleteSource: 1 * us, CompleteTarget: 11 * us})
		if len(more[1]) != len(none[1]) || len(none[1]) != 40 {
			t.Fatalf("%v device: %d and %d bios queued, want 40", lat, len(more[1]), len(none[1]))
		}
		// By batch: the first bio 10 us later each batch than the last
		// batch moved it; its three others with it.
		for b := 1; b < 10; b++ {
			for i := 0; i < 4; i++ {
				k := 4*b + i
				if d, want := more[1][k]-none[1][k], trace.Time(b)*10*us; d != want {
					t.Errorf("%v device: bio %d (batch %d) queued %v later with an 11 us completion, want %v", lat, k, b, d, want)
				}
			}
		}
	}
}
