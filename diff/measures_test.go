package diff

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

func TestDemeritKnown(t *testing.T) {
	const n = 10000
	a := make([]float64, n+1)
	shift := make([]float64, n+1)
	double := make([]float64, n+1)
	for i := range a {
		a[i] = float64(i) / n
		shift[i] = a[i] + 0.5
		double[i] = 2 * a[i]
	}
	if d := demerit(a, a); d != 0 {
		t.Errorf("self demerit %v", d)
	}
	if d := demerit(a, shift); math.Abs(d-0.5) > 1e-12 {
		t.Errorf("shifted demerit %v, want 0.5", d)
	}
	// quantile_double(q) - quantile_a(q) = q: sqrt(mean q^2) over q = i/N.
	want := math.Sqrt(float64(n+1) * float64(2*n+1) / (6 * float64(n) * float64(n)))
	if d := demerit(double, a); math.Abs(d-want) > 1e-12 {
		t.Errorf("scaled demerit %v, want %v", d, want)
	}
	// Two-point samples: interpolation between them.
	if q := quantile([]float64{1, 3}, 0.25); q != 1.5 {
		t.Errorf("quantile %v", q)
	}
	// Relative demerit in a Compare: D2C doubled.
	p := pair([]float64{1, 1, 1}, []float64{2, 2, 2})
	if p.Demerit != 1 || p.Relative != 1 {
		t.Errorf("pair %+v", p)
	}
}

func TestKS(t *testing.T) {
	if d := ksDistance([]float64{1, 2, 3}, []float64{1, 2, 3}); d != 0 {
		t.Errorf("equal: %v", d)
	}
	if d := ksDistance([]float64{1, 2}, []float64{3, 4}); d != 1 {
		t.Errorf("disjoint: %v", d)
	}
	if d := ksDistance([]float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}); d != 0.5 {
		t.Errorf("half: %v", d)
	}
}

// thinkQueue makes one sync process issuing n requests one at a time: each
// is queued, inserted and issued at t, completes 1 ms later, and the next
// arrives gap after that completion.
func thinkQueue(n int, gap time.Duration) *Side {
	var reqs []trace.Request
	var bios []trace.Bio
	t := trace.Time(1e6)
	for i := 0; i < n; i++ {
		r := trace.Request{ID: uint64(i + 1), PID: 42, Cat: trace.CatRead, Bytes: 4096, Queue: t, Get: t, Insert: t, Issue: t, Complete: t + 1e6, Bios: 1, FirstBio: uint32(i)}
		reqs = append(reqs, r)
		bios = append(bios, trace.Bio{PID: 42, Index: uint32(i), Bytes: 4096, Cat: trace.CatRead, Queue: t, Request: r.ID, Issue: t, Done: r.Complete})
		t = r.Complete + trace.Time(gap)
	}
	return FromData(trace.Meta{}, bios, reqs, nil)
}

// kernelTT is a direct transcription of bfq_update_io_thinktime and the
// has_short_ttime test (5.12+), for a queue idle at each arrival.
func kernelTT(elapsed []uint64, slice uint64) (means []uint64, short []bool) {
	var samples, total uint64
	for _, e := range elapsed {
		e = min(e, 2*slice)
		samples = (7*samples + 256) / 8
		total = (7*total + 256*e) / 8
		mean := (total + 128) / samples
		means = append(means, mean)
		short = append(short, !(samples > 80 && mean > slice>>1))
	}
	return means, short
}

func TestThinkTimeFormula(t *testing.T) {
	const n = 20
	s := thinkQueue(n, 10*time.Millisecond)
	opts := Options{}.withDefaults()
	ts := computeThink(s, opts)
	series := ts.seriesOf(queueID{42, true})
	if len(series) != n {
		t.Fatalf("%d points, want %d", len(series), n)
	}
	el := make([]uint64, n)
	el[0] = 0 // the first arrival: 1 ns after creation at the same time, clamped to 0
	for i := 1; i < n; i++ {
		el[i] = uint64(10 * time.Millisecond)
	}
	means, short := kernelTT(el, uint64(opts.SliceIdle))
	for i, p := range series {
		if uint64(p.Mean) != means[i] || p.Short != short[i] {
			t.Fatalf("insert %d: mean %d short %v, kernel formula %d %v", i, p.Mean, p.Short, means[i], short[i])
		}
	}
	// 10 ms gaps: long from the third sample on (samples 32, 60, 84 > 80).
	if !series[0].Short || !series[1].Short || series[2].Short || series[n-1].Short {
		t.Errorf("classes %v", short)
	}
	// Against a 2 ms-gap prediction: only the first two requests agree.
	r := Compare(s, thinkQueue(n, 2*time.Millisecond), Options{})
	tt := r.ThinkTime
	if tt.Compared != n || math.Abs(tt.Agreement-2.0/n) > 1e-12 {
		t.Errorf("agreement %v over %d", tt.Agreement, tt.Compared)
	}
	if tt.Confusion[1][0] != n-2 || tt.Confusion[0][0] != 2 {
		t.Errorf("confusion %v", tt.Confusion)
	}
	if tt.RealShort != 0 || tt.PredShort != 1 || tt.Queues != 1 {
		t.Errorf("short queues real %d pred %d of %d", tt.RealShort, tt.PredShort, tt.Queues)
	}
	if q := tt.PerQueue[0]; q.RealFlips != 1 || q.PredFlips != 0 {
		t.Errorf("flips %+v", q)
	}
	// Legacy threshold (slice_idle, 8 ms): 10 ms gaps still long, a 6 ms gap short.
	lg := computeThink(thinkQueue(n, 6*time.Millisecond), Options{LegacyThinkTime: true}.withDefaults())
	if p := lg.seriesOf(queueID{42, true}); !p[n-1].Short {
		t.Errorf("legacy 6 ms: long (mean %v)", p[n-1].Mean)
	}
	nl := computeThink(thinkQueue(n, 6*time.Millisecond), opts)
	if p := nl.seriesOf(queueID{42, true}); p[n-1].Short {
		t.Errorf("5.12+ 6 ms: short (mean %v)", p[n-1].Mean)
	}
}

// TestThinkTimeBusyNotSampled: arrivals while the queue has I/O in flight
// give no sample (5.12+), but do with LegacyThinkTime.
func TestThinkTimeBusyNotSampled(t *testing.T) {
	var reqs []trace.Request
	for i := 0; i < 10; i++ {
		tm := trace.Time(i) * 1e6
		// Each request is in flight 30 ms: the queue is never idle after the first.
		reqs = append(reqs, trace.Request{ID: uint64(i + 1), PID: 7, Cat: trace.CatRead, Queue: tm, Insert: tm, Issue: tm, Complete: tm + 30e6, FirstBio: uint32(i)})
	}
	s := FromData(trace.Meta{}, nil, reqs, nil)
	p := computeThink(s, Options{}.withDefaults()).seriesOf(queueID{7, true})
	if p[len(p)-1].Samples != 32 {
		t.Errorf("samples %d, want one sample (32)", p[len(p)-1].Samples)
	}
	p = computeThink(s, Options{LegacyThinkTime: true}.withDefaults()).seriesOf(queueID{7, true})
	if p[len(p)-1].Samples != 186 { // 32, 60, 84, ..., 186: ten samples
		t.Errorf("legacy samples %d, want every insertion sampled", p[len(p)-1].Samples)
	}
}

// TestThinkTimeInServiceNotSampled: bfq_update_io_thinktime returns when
// bfq_bfqq_busy(bfqq), and the in-service queue stays busy while it idles
// empty (bfq_remove_request deletes an emptied queue from the busy tree
// only when it is not bfqd->in_service_queue; it leaves at its expiration).
// A queue served from 1 ms to 2 ms (set_in_service_queue, expire) with a
// request done at 1.1 ms: one inserted at 1.5 ms, while it idles in
// service, gives no sample; one at 3 ms, after the expiration, does (1.9
// ms since the completion). Before, both were sampled.
func TestThinkTimeInServiceNotSampled(t *testing.T) {
	const ms = trace.Time(1e6)
	reqs := []trace.Request{
		{ID: 1, PID: 7, Cat: trace.CatRead | trace.CatSync, Queue: ms, Insert: ms, Issue: ms, Complete: ms + ms/10, FirstBio: 0},
		{ID: 2, PID: 7, Cat: trace.CatRead | trace.CatSync, Queue: ms + ms/2, Insert: ms + ms/2, Issue: 2*ms + ms/2, Complete: 2*ms + 6*ms/10, FirstBio: 1},
		{ID: 3, PID: 7, Cat: trace.CatRead | trace.CatSync, Queue: 5 * ms, Insert: 5 * ms, Issue: 5 * ms, Complete: 5*ms + ms/10, FirstBio: 2},
	}
	msgs := []Message{
		msg(ms+1, "bfq7S set_in_service_queue, cur-budget = 2048"),
		msg(2*ms, "bfq7S expire (1, slow 0, num_disp 1, short_ttime 1)"),
	}
	p := computeThink(FromData(trace.Meta{}, nil, reqs, msgs), Options{}.withDefaults()).seriesOf(queueID{7, true})
	if len(p) != 3 {
		t.Fatalf("%d points, want 3", len(p))
	}
	// Sample 1 (the first, 0 ns: one sample, 32), none at 1.5 ms, then
	// 5 ms - 2.6 ms = 2.4 ms at 5 ms: samples 32 -> 60.
	if p[0].Samples != 32 || p[1].Samples != 32 || p[2].Samples != 60 {
		t.Errorf("samples %d, %d, %d; want 32, 32 (in service: none), 60", p[0].Samples, p[1].Samples, p[2].Samples)
	}
	el := []uint64{0, uint64(5*ms - (2*ms + 6*ms/10))}
	means, _ := kernelTT(el, uint64(Options{}.withDefaults().SliceIdle))
	if uint64(p[2].Mean) != means[1] {
		t.Errorf("mean %d after the third insertion, kernel formula %d", p[2].Mean, means[1])
	}
}

func TestLoggedShort(t *testing.T) {
	for body, want := range map[string]int{
		"expire (2, slow 0, num_disp 1, short_ttime 1)": 1,
		"expire (3, slow 1, num_disp 4, short_ttime 0)": 0,
		"update_has_short_ttime: has_short_ttime 0":     0,
		"rq_enqueued: has_short_ttime=1 (seeky 0)":      1,
		"set_in_service_queue, cur-budget = 2048":       -1,
	} {
		v, ok := loggedShort(body)
		got := -1
		if ok {
			got = 0
			if v {
				got = 1
			}
		}
		if got != want {
			t.Errorf("%q: %d, want %d", body, got, want)
		}
	}
}

func msg(t trace.Time, text string) Message {
	return Message{Time: t, Text: text, Msg: trace.ParseMessage(text)}
}

func TestDecisionsAndQueueMerges(t *testing.T) {
	real := FromData(trace.Meta{}, nil, nil, []Message{
		msg(1, "bfq10S set_in_service_queue, cur-budget = 2048"),
		msg(2, "bfq10S expire (2, slow 0, num_disp 1, short_ttime 1)"),
		msg(3, "bfq11S set_in_service_queue, cur-budget = 2048"),
		msg(4, "bfq11S may_budget_timeout: wait_request 1 left 0 timeout 0"),
		msg(5, "bfq11S merging with queue 12"),
		msg(6, "bfqSHARED-S add_request 1"),
	})
	pred := FromData(trace.Meta{}, nil, nil, []Message{
		msg(1, "bfq10S set_in_service_queue, cur-budget = 2048"),
		msg(2, "bfq10S expire (3, slow 0, num_disp 1, short_ttime 1)"),
		msg(3, "bfq12S set_in_service_queue, cur-budget = 2048"),
		msg(4, "bfq11S may_budget_timeout: wait_request 0 left 0 timeout 0"),
	})
	r := Compare(real, pred, Options{})
	d := r.Decisions
	if !d.Compared || len(d.Mismatches) != 3 {
		t.Fatalf("decisions %+v", d)
	}
	want := []struct {
		kind, real, pred string
		at               trace.Time
	}{{DecisionExpire, "reason 2", "reason 3", 2}, {DecisionSelect, "bfq11S", "bfq12S", 3}, {DecisionIdle, "idle", "no idle", 4}}
	for i, w := range want {
		m := d.Mismatches[i]
		if m.Kind != w.kind || m.Real != w.real || m.Predicted != w.pred || m.RealTime != w.at {
			t.Errorf("mismatch %d: %+v, want %+v", i, m, w)
		}
	}
	m := r.Merges
	if m.RealQueueMerges != 1 || m.PredQueueMerges != 0 || m.RealSharedFirst != 6 || m.PredSharedFirst.Valid() {
		t.Errorf("merges %+v", m)
	}
}

func TestOutputDeterministic(t *testing.T) {
	a := synthSide(3000, 5, 3)
	b := synthSide(3000, 5, 4) // another random order and timing
	var j1, j2, t1 bytes.Buffer
	r1 := Compare(a, b, Options{})
	if err := r1.WriteJSON(&j1); err != nil {
		t.Fatal(err)
	}
	if err := Compare(a, b, Options{}).WriteJSON(&j2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(j1.Bytes(), j2.Bytes()) {
		t.Error("JSON differs between runs")
	}
	for _, k := range []string{`"scheduler"`, `"kernel"`, `"requests"`, `"wall_seconds"`, `"simulated_seconds"`, `"kendall_tau"`, `"mean_displacement"`, `"divergences"`,
		`"real_mib_per_s"`, `"predicted_mib_per_s"`, `"real_share"`, `"predicted_share"`, `"weight"`, `"path"`,
		`"real_back"`, `"predicted_back"`, `"real_front"`, `"predicted_front"`, `"real_queue_merges"`, `"predicted_queue_merges"`,
		`"agreement"`, `"queues"`, `"real_short"`, `"predicted_short"`, `"d2c_demerit"`, `"q2c_demerit"`} {
		if !bytes.Contains(j1.Bytes(), []byte(k)) {
			t.Errorf("JSON lacks %s", k)
		}
	}
	if err := r1.WriteText(&t1, 80); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(t1.String(), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if r1.DispatchOrder.KendallTau >= 1 {
		t.Errorf("different traces scored tau %v", r1.DispatchOrder.KendallTau)
	}
}

// ttime_samples settles at samplesSettled from a new queue's 0, and stays.
func TestSamplesSettled(t *testing.T) {
	samples := uint64(0)
	for range 64 {
		samples = (7*samples + 256) / 8
	}
	if samples != samplesSettled || (7*samples+256)/8 != samples {
		t.Errorf("samples settle at %d, want %d", samples, samplesSettled)
	}
}

// The think-time preparation counts the insertion events it lays out.
func TestPrepInserts(t *testing.T) {
	s := synthSide(20_000, 5, 4)
	p := s.prepared()
	n := 0
	for _, e := range p.ev {
		if _, kind, _ := p.event(s, e); kind == ttInsert {
			n++
		}
	}
	if n == 0 || p.inserts != n {
		t.Errorf("inserts %d, want the %d insertion events", p.inserts, n)
	}
}
