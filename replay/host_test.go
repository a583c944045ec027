package replay_test

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

const us = trace.Time(1000)

// backToBack builds a process that queues n 4 KiB reads on cpu at the
// given times, completing long after (a deep queue: nothing completes
// before its last Q, so every bio after the first is a back-to-back gap).
func backToBack(pid, cpu uint32, qs []trace.Time) []replay.Record {
	recs := make([]replay.Record, len(qs))
	for i, q := range qs {
		recs[i] = replay.Record{PID: pid, CPU: cpu, Sector: uint64(pid)<<20 + uint64(i)*8, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: q, Issue: q, Done: q + 10_000*us}
	}
	return recs
}

// queueTimes replays w with sub and returns each process's Q times.
func queueTimes(t *testing.T, w *replay.Workload, dev replay.Device, sub *replay.SubmitCost) map[uint32][]trace.Time {
	t.Helper()
	q := map[uint32][]trace.Time{}
	_, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: dev, Submit: sub}, func(e *trace.Event) error {
		if e.Action == trace.ActionQueue {
			q[e.PID] = append(q[e.PID], e.Time)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func times(xs ...trace.Time) []trace.Time {
	for i := range xs {
		xs[i] *= us
	}
	return xs
}

// TestSubmitCostSharedCPU: two processes on one CPU, each queueing a bio
// 5 us after its previous one (the source's cost, all of the gap: no
// think time of their own), replayed under a scheduler whose submission
// holds the CPU 20 us. By hand: the first bios arrive at their captured
// 0 and 2 us (Open); from then on the CPU serves one submission every 20
// us, first come first served, so the two alternate: pid 1 at 20, 60,
// 100, ... and pid 2 at 40, 80, 120, ..., each paced at 40 us, half the
// CPU.
func TestSubmitCostSharedCPU(t *testing.T) {
	recs := append(backToBack(1, 1, times(0, 5, 10, 15, 20, 25)), backToBack(2, 1, times(2, 7, 12, 17, 22, 27))...)
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	dev := &fixedDevice{lat: 10_000 * us}
	q := queueTimes(t, w, dev, &replay.SubmitCost{Source: 5 * us, Target: 20 * us})
	want := map[uint32][]trace.Time{1: times(0, 20, 60, 100, 140, 180), 2: times(2, 40, 80, 120, 160, 200)}
	for pid, wq := range want {
		if !slices.Equal(q[pid], wq) {
			t.Errorf("pid %d queued at %v, want %v", pid, q[pid], wq)
		}
	}
	// On two CPUs they do not share: each is paced by its own 20 us.
	for i := range recs {
		recs[i].CPU = recs[i].PID
	}
	w, err = replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	q = queueTimes(t, w, dev, &replay.SubmitCost{Source: 5 * us, Target: 20 * us})
	want = map[uint32][]trace.Time{1: times(0, 20, 40, 60, 80, 100), 2: times(2, 22, 42, 62, 82, 102)}
	for pid, wq := range want {
		if !slices.Equal(q[pid], wq) {
			t.Errorf("two CPUs: pid %d queued at %v, want %v", pid, q[pid], wq)
		}
	}
	// Without the host model the captured gaps are replayed.
	q = queueTimes(t, w, dev, nil)
	if want := times(0, 5, 10, 15, 20, 25); !slices.Equal(q[1], want) {
		t.Errorf("no host model: pid 1 queued at %v, want %v", q[1], want)
	}
}

// TestSubmitCostCancels: with the same cost under both schedulers (a
// validation), a gap of Source or more is replayed as captured, and a
// shorter one (3 us against 5) is stretched to Source.
func TestSubmitCostCancels(t *testing.T) {
	w, err := replay.NewWorkloadFromRecords(backToBack(1, 0, times(0, 5, 13, 25, 28, 40)))
	if err != nil {
		t.Fatal(err)
	}
	q := queueTimes(t, w, &fixedDevice{lat: 10_000 * us}, &replay.SubmitCost{Source: 5 * us, Target: 5 * us})
	if want := times(0, 5, 13, 25, 30, 42); !slices.Equal(q[1], want) {
		t.Errorf("queued at %v, want %v", q[1], want)
	}
}

// TestSubmitCostDependent: a psync reader (depth 1) that queues 10 us
// after each completion. On a device of 100 us the 20 us submission ends
// long before the completion and changes nothing: Q every 110 us. On a
// device of 10 us the completion comes while the submission still holds
// the process (Q + 10 < Q + 20): it acts on it at Q + 20 and queues its
// 10 us of think time later, every 30 us (20 without the host model).
func TestSubmitCostDependent(t *testing.T) {
	w, err := replay.NewWorkloadFromRecords(psyncRecords(1, 6, 100*us, 10*us, 0))
	if err != nil {
		t.Fatal(err)
	}
	sub := &replay.SubmitCost{Source: 5 * us, Target: 20 * us}
	if q, want := queueTimes(t, w, &fixedDevice{lat: 100 * us}, sub), times(0, 110, 220, 330, 440, 550); !slices.Equal(q[1], want) {
		t.Errorf("100 us device: queued at %v, want %v", q[1], want)
	}
	if q, want := queueTimes(t, w, &fixedDevice{lat: 10 * us}, sub), times(0, 30, 60, 90, 120, 150); !slices.Equal(q[1], want) {
		t.Errorf("10 us device: queued at %v, want %v", q[1], want)
	}
	if q, want := queueTimes(t, w, &fixedDevice{lat: 10 * us}, nil), times(0, 20, 40, 60, 80, 100); !slices.Equal(q[1], want) {
		t.Errorf("10 us device, no host model: queued at %v, want %v", q[1], want)
	}
}

// TestSubmitGapEvents: Workload.SubmitGap from a stream of events, by
// hand. Process 7 queues 150 reads: bio i at 10*i us, each completing 1
// ms after its Q, so the gaps of bios 1-99 (before the first completion
// at 1000 us) are back-to-back, 10 us; from bio 101 on each Q has a
// completion of the process since its previous Q and is not counted.
// Process 8 queues 101 reads 4 us apart that never complete in the
// stream: 100 gaps of 4 us. Process 9's asynchronous writes, 1 us apart,
// are not counted. Gaps: 100 of 4 us and 99 of 10 (bio 100 of process 7
// is queued at 1000 us, with the first completion, which counts as
// between): the median (the 100th of 199) is 4 us, the centre of its 100
// ns bin 4.05 us.
func TestSubmitGapEvents(t *testing.T) {
	var evs []trace.Event
	add := func(e trace.Event) { evs = append(evs, e) }
	for i := 0; i < 150; i++ {
		q := trace.Time(10*i) * us
		s := uint64(i) * 8
		add(trace.Event{Time: q, Action: trace.ActionQueue, PID: 7, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
		add(trace.Event{Time: q + 1, Action: trace.ActionGetRQ, PID: 7, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
		add(trace.Event{Time: q + 2, Action: trace.ActionIssue, PID: 7, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
		add(trace.Event{Time: q + 1000*us, Action: trace.ActionComplete, PID: 7, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
	}
	for i := 0; i <= 100; i++ {
		q := trace.Time(4*i)*us + 500
		s := 1<<30 + uint64(i)*8
		add(trace.Event{Time: q, Action: trace.ActionQueue, PID: 8, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
		add(trace.Event{Time: q + 1, Action: trace.ActionGetRQ, PID: 8, Sector: s, Bytes: 4096, Cat: trace.CatRead | trace.CatSync})
	}
	for i := 0; i < 300; i++ {
		q := trace.Time(i)*us + 700
		s := 2<<30 + uint64(i)*8
		add(trace.Event{Time: q, Action: trace.ActionQueue, PID: 9, Sector: s, Bytes: 4096, Cat: trace.CatWrite})
		add(trace.Event{Time: q + 1, Action: trace.ActionGetRQ, PID: 9, Sector: s, Bytes: 4096, Cat: trace.CatWrite})
	}
	slices.SortStableFunc(evs, func(a, b trace.Event) int { return cmp.Compare(a.Time, b.Time) })
	w := collected(t, evs)
	if w.SubmitGaps != 199 {
		t.Errorf("%d gaps measured, want 199 (100 of process 8, 99 of process 7)", w.SubmitGaps)
	}
	if want := 4*us + 50; w.SubmitGap != want {
		t.Errorf("SubmitGap %v, want %v", w.SubmitGap, want)
	}
}

// TestSubmitGapRecorded: Workload.SubmitGap of the recorded BFQ and
// mq-deadline captures of one job (two 4 KiB random readers, iodepth 16,
// both on CPU 1) against the median computed here from the events alone
// (each process's Q-to-Q gaps with no C of a sector it queued in
// between): 18.5 us under BFQ with its messages on, 5.8 us under
// mq-deadline (docs/whatif.md, "Reading the results").
func TestSubmitGapRecorded(t *testing.T) {
	for _, name := range []string{"a-bfq-w100-900", "b-mqdl-w100-900"} {
		path := shared.Path(t, "captures", "recorded", name)
		lastQ := map[uint32]trace.Time{}
		done := map[uint32]bool{}
		owner := map[uint64]uint32{}
		var gaps []float64
		c := replay.NewCollector()
		fixture.Each(t, path, func(e *trace.Event) {
			c.Add(e)
			switch e.Action {
			case trace.ActionQueue:
				if q, ok := lastQ[e.PID]; ok && !done[e.PID] {
					gaps = append(gaps, float64(e.Time-q))
				}
				lastQ[e.PID], done[e.PID] = e.Time, false
				owner[e.Sector] = e.PID
			case trace.ActionComplete:
				if p, ok := owner[e.Sector]; ok {
					done[p] = true
				}
			}
		})
		w, err := c.Workload()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(gaps)
		med := gaps[(len(gaps)-1)/2]
		t.Logf("%s: SubmitGap %v over %d gaps; median of the events' own %d gaps %.0f ns", name, w.SubmitGap, w.SubmitGaps, len(gaps), med)
		// One 100 ns bin either way (the bin's centre, and the bios the
		// workload leaves out: asynchronous writes, tag sleeps).
		if d := math.Abs(float64(w.SubmitGap) - med); d > 100 {
			t.Errorf("%s: SubmitGap %v, the events' median %.0f ns", name, w.SubmitGap, med)
		}
	}
}

// TestHostCosts: the table's ratio scales the capture's own cost; the
// same scheduler, a missing scheduler or too few gaps turn the model off
// with a reason.
func TestHostCosts(t *testing.T) {
	h, err := replay.LoadHostCosts(strings.NewReader(`{"version": 1, "submit_ns": {"bfq": 9000, "mq-deadline": 4000}}`), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	w := &replay.Workload{SubmitGap: 6 * us, SubmitGaps: 500}
	// 6 us * 9000/4000 = 13.5 us.
	if c, ok, why := h.SubmitCost(w, "mq-deadline", "bfq", false); !ok || c.Source != 6*us || c.Target != 13500 {
		t.Errorf("mq-deadline -> bfq: %+v %v %q, want 6 us -> 13.5 us", c, ok, why)
	}
	if c, ok, why := h.SubmitCost(w, "bfq", "bfq", false); ok || !strings.Contains(why, "keeps the recording scheduler") {
		t.Errorf("bfq -> bfq: %+v %v %q, want no host model (a validation)", c, ok, why)
	}
	// A capture that carries BFQ's messages paid bfq+messages: a what-if
	// that keeps BFQ predicts it untraced, 6 us * 9000/18000 = 3 us; the
	// table made Traced for bfq has one cost for both: none.
	hm, err := replay.LoadHostCosts(strings.NewReader(`{"version": 1, "submit_ns": {"bfq": 9000, "bfq+messages": 18000}}`), "hm.json")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok, why := hm.SubmitCost(w, "bfq", "bfq", true); !ok || c.Source != 6*us || c.Target != 3*us {
		t.Errorf("bfq with messages -> bfq: %+v %v %q, want 6 us -> 3 us", c, ok, why)
	}
	if c, ok, why := hm.SubmitCost(w, "bfq", "bfq", false); ok {
		t.Errorf("bfq without messages -> bfq: %+v %v %q, want no host model", c, ok, why)
	}
	tr, _ := hm.Traced("bfq")
	if c, ok, why := tr.SubmitCost(w, "bfq", "bfq", true); ok {
		t.Errorf("bfq with messages -> bfq traced: %+v %v %q, want no host model", c, ok, why)
	}
	if _, ok, why := h.SubmitCost(w, "none", "bfq", false); ok || !strings.Contains(why, "none") {
		t.Errorf("none -> bfq with no cost for none: ok %v, reason %q", ok, why)
	}
	if _, ok, why := h.SubmitCost(&replay.Workload{SubmitGaps: 12}, "mq-deadline", "bfq", false); ok || !strings.Contains(why, "12") {
		t.Errorf("12 gaps: ok %v, reason %q", ok, why)
	}
	for _, bad := range []struct{ doc, want string }{
		{`{"version": 2, "submit_ns": {"bfq": 1}}`, "version 2"},
		{`{"version": 1, "submit_ns": {}}`, "no scheduler"},
		{`{"version": 1, "submit_ns": {"bfq": -5}}`, `"bfq"`},
		{`{"version": 1, "submit_ns": {"bfq": 5}, "cost": 3}`, "unknown field"},
		{`{"version": 1, "submit_ns": {"bfq": 5`, "h.json"},
		{`{"version": 1 "submit_ns": {}}`, "byte 15"},
		{`{"version": 1, "submit_ns": {"bfq": "fast"}}`, "field submit_ns"},
	} {
		if _, err := replay.LoadHostCosts(strings.NewReader(bad.doc), "h.json"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want one naming %s", bad.doc, err, bad.want)
		}
	}
	d := replay.DefaultHostCosts()
	if !(d.SubmitNS["bfq+messages"] > d.SubmitNS["bfq"] && d.SubmitNS["bfq"] > d.SubmitNS["mq-deadline"] && d.SubmitNS["mq-deadline"] > d.SubmitNS["none"]) {
		t.Errorf("default table %v: want bfq+messages > bfq > mq-deadline > none (wi-host-*)", d.SubmitNS)
	}
}

// TestHostCostsMessages: a capture that carries its scheduler's messages
// was recorded at the NAME+messages cost, so the ratio starts from that
// key; the replayed scheduler's cost is always the plain key's (a
// what-if predicts the scheduler untraced); a table without the key
// falls back to the plain one.
func TestHostCostsMessages(t *testing.T) {
	h, err := replay.LoadHostCosts(strings.NewReader(`{"version": 1, "submit_ns": {"bfq": 7500, "bfq+messages": 15000, "mq-deadline": 5000}}`), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	w := &replay.Workload{SubmitGap: 18 * us, SubmitGaps: 500}
	for _, tc := range []struct {
		rec, tgt string
		msgs     bool
		want     trace.Time
	}{
		{"bfq", "mq-deadline", true, 6 * us},   // 18 us * 5000/15000
		{"bfq", "mq-deadline", false, 12 * us}, // 18 us * 5000/7500
		{"mq-deadline", "bfq", true, 27 * us},  // no mq-deadline+messages: 18 us * 7500/5000
		{"mq-deadline", "bfq", false, 27 * us},
	} {
		c, ok, why := h.SubmitCost(w, tc.rec, tc.tgt, tc.msgs)
		if !ok || c.Source != w.SubmitGap || c.Target != tc.want {
			t.Errorf("%s -> %s, messages %v: %+v %v %q, want target %v", tc.rec, tc.tgt, tc.msgs, c, ok, why, tc.want)
		}
	}
	// Traced: BFQ predicted as it ran with its messages on, in a copy.
	tr, ok := h.Traced("bfq")
	if !ok || tr.SubmitNS["bfq"] != 15000 || h.SubmitNS["bfq"] != 7500 {
		t.Errorf("Traced(bfq): %v %v, and the table it came from %v; want bfq 15000 in the copy only", tr.SubmitNS, ok, h.SubmitNS)
	}
	if c, _, _ := tr.SubmitCost(w, "mq-deadline", "bfq", false); c.Target != 54*us { // 18 us * 15000/5000
		t.Errorf("mq-deadline -> traced bfq: target %v, want 54 us", c.Target)
	}
	if _, ok := h.Traced("mq-deadline"); ok {
		t.Errorf("Traced(mq-deadline): ok with no mq-deadline+messages cost")
	}
}

// TestSubmitCostDeterministic: three processes, two sharing CPU 0, under
// the host model: two runs emit identical events, and the shared CPU
// takes more simulated time than without the model.
func TestSubmitCostDeterministic(t *testing.T) {
	var recs []replay.Record
	recs = append(recs, qdRecords(10, 3000, 8, 300_000, 2_000, 0, false)...)
	recs = append(recs, qdRecords(11, 3000, 4, 300_000, 2_000, 1<<22, true)...)
	recs = append(recs, psyncRecords(12, 1000, 150_000, 3_000, 1_000)...)
	for i := range recs {
		recs[i].CPU = map[uint32]uint32{10: 0, 11: 0, 12: 1}[recs[i].PID]
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var sums [2][32]byte
	var spans [2]trace.Time
	for i := range sums {
		h := newEventHasher()
		res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 20 * us},
			Submit: &replay.SubmitCost{Source: 2 * us, Target: 30 * us}}, h.add)
		if err != nil {
			t.Fatal(err)
		}
		sums[i], spans[i] = h.sum(), res.End-res.Start
	}
	if sums[0] != sums[1] {
		t.Fatalf("runs differ: %x vs %x", sums[0], sums[1])
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 20 * us}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The 5998 bios of CPU 0 after the two processes' first (Open, at
	// their captured times, not held) at 30 us each take 179.94 ms of it.
	if spans[0] < 5998*30*us || spans[0] <= res.End-res.Start {
		t.Errorf("span with the host model %v, without %v; want at least 179.94 ms and longer", spans[0], res.End-res.Start)
	}
}
