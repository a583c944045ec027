package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Synthetic fio at iodepth 4 on a device of 100 us: four reads 1 us
// apart, each reaped 5 us after its completion (the next group of four
// follows the first completion by 5 us, so each group's first bio reaps
// after 5 us with all four in flight, the process's depth).
const (
	fioDepth = 4
	fioLat   = trace.Time(100_000)
	fioReap  = trace.Time(5_000)
	fioNext  = trace.Time(1_000)
)

// fioRecords returns n bios of such a process. At each bio of host (a
// multiple of 4: a group's first) the process is descheduled: it reaps
// the completion stall after it arrived, not 5 us. At each bio of quiesce
// it drains its I/O and sleeps think (fio's thinktime: io_u_quiesce,
// then usleep): it is queued think after the latest completion.
func fioRecords(n int, host map[int]bool, stall trace.Time, quiesce map[int]bool, think trace.Time) []replay.Record {
	lens := map[int]trace.Time{}
	for k := range host {
		lens[k] = stall
	}
	return fioRecordsLens(n, lens, quiesce, think)
}

// fioRecordsLens is fioRecords with a stall of its own length at each
// bio of host.
func fioRecordsLens(n int, host map[int]trace.Time, quiesce map[int]bool, think trace.Time) []replay.Record {
	recs := make([]replay.Record, n)
	for k := range recs {
		var q trace.Time
		switch {
		case k < fioDepth:
			q = trace.Time(k) * fioNext
		case quiesce[k]:
			q = recs[k-1].Done + think
		case host[k] > 0:
			q = recs[k-fioDepth].Done + host[k]
		default:
			q = max(recs[k-fioDepth].Done+fioReap, recs[k-1].Queue+fioNext)
		}
		recs[k] = replay.Record{PID: 7, Sector: uint64(k%4096) * 8, Bytes: 4096, Cat: trace.CatRead,
			Queue: q, Issue: q, Done: q + fioLat}
	}
	return recs
}

// TestHostStallsFound: four 5 ms stalls of a process whose every other
// reaping delay is 5 us are host stalls, their captured delays summing to
// 20 ms; none recurs at a period.
func TestHostStallsFound(t *testing.T) {
	host := map[int]bool{400: true, 1204: true, 2600: true, 3308: true}
	w, err := replay.NewWorkloadFromRecords(fioRecords(4000, host, 5_000_000, nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	if w.Stalls().Host != 4 || w.Stalls().HostTime != 20_000_000 || w.Stalls().Periodic != 0 {
		t.Fatalf("host stalls %d (%v), periodic %d; want 4 (20 ms), 0", w.Stalls().Host, w.Stalls().HostTime, w.Stalls().Periodic)
	}
}

// TestPeriodicStallsKept: fio's thinktime every 1500 bios (drain, sleep
// 12 ms) is the application's: the three sleeps at 1500, 3000 and 4500
// recur at one period and are kept; three descheduled reaps off it are
// host stalls.
func TestPeriodicStallsKept(t *testing.T) {
	quiesce := map[int]bool{1500: true, 3000: true, 4500: true}
	host := map[int]bool{700: true, 2204: true, 5100: true}
	w, err := replay.NewWorkloadFromRecords(fioRecords(6000, host, 5_000_000, quiesce, 12_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if w.Stalls().Host != 3 || w.Stalls().HostTime != 15_000_000 || w.Stalls().Periodic != 3 {
		t.Fatalf("host stalls %d (%v), periodic %d; want 3 (15 ms), 3", w.Stalls().Host, w.Stalls().HostTime, w.Stalls().Periodic)
	}
	w, err = replay.NewWorkloadFromRecords(fioRecords(6000, nil, 0, quiesce, 12_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if w.Stalls().Host != 0 || w.Stalls().Periodic != 3 {
		t.Fatalf("host stalls %d, periodic %d; want 0, 3", w.Stalls().Host, w.Stalls().Periodic)
	}
}

// TestStallsPeriodicUnlike: host stalls that recur every 400 bios (a
// process descheduled while its depth completed resumes in whole groups,
// so its stalls fall on multiples of its depth) but last 1.5, 4, 7, 10
// and 13 ms are no sleep of a fixed length: all five are host stalls.
func TestStallsPeriodicUnlike(t *testing.T) {
	host := map[int]trace.Time{400: 1_500_000, 800: 4_000_000, 1200: 7_000_000, 1600: 10_000_000, 2000: 13_000_000}
	w, err := replay.NewWorkloadFromRecords(fioRecordsLens(2400, host, nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	if w.Stalls().Host != 5 || w.Stalls().HostTime != 35_500_000 || w.Stalls().Periodic != 0 {
		t.Fatalf("host stalls %d (%v), periodic %d; want 5 (35.5 ms), 0", w.Stalls().Host, w.Stalls().HostTime, w.Stalls().Periodic)
	}
}

// TestStallsNotFound: a process of depth 1 (psync: its gap after a
// completion may be the application's work) and one whose reaping delays
// are not at the microsecond scale (every 50th a 5 ms one: a regime, 8 %
// of its reaps) keep their gaps.
func TestStallsNotFound(t *testing.T) {
	var psync []replay.Record
	q := trace.Time(0)
	for k := 0; k < 1000; k++ {
		psync = append(psync, replay.Record{PID: 3, Sector: uint64(k) * 8, Bytes: 4096, Cat: trace.CatRead, Queue: q, Issue: q, Done: q + fioLat})
		q += fioLat + fioReap
		if k%100 == 50 {
			q += 5_000_000
		}
	}
	host := map[int]bool{}
	for k := 200; k < 4000; k += 48 {
		host[k] = true
	}
	for name, recs := range map[string][]replay.Record{"psync": psync, "regime": fioRecords(4000, host, 5_000_000, nil, 0)} {
		w, err := replay.NewWorkloadFromRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		if w.Stalls().Host != 0 {
			t.Errorf("%s: %d host stalls, want none", name, w.Stalls().Host)
		}
	}
}

// TestStallsDropReplay: through none on the capture's own device (100
// us), bio 400 (a group's first; bio 396 began the group before, bio 399
// ended it 3 us later) arrives 5 ms after bio 396's completion, 5.097 ms
// after bio 399, under StallsKeep, and, under StallsDrop, the process's
// typical 5 us after that completion: 102 us after bio 399, as between
// any two groups. The replay is then 4 x (5 ms - 5 us) shorter, within 10
// us a stall (the groups that the stall's drain regrouped).
func TestStallsDropReplay(t *testing.T) {
	host := map[int]bool{400: true, 1204: true, 2600: true, 3308: true}
	recs := fioRecords(4000, host, 5_000_000, nil, 0)
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	run := func(st replay.Stalls) ([]trace.Time, replay.Result) {
		var qs []trace.Time
		res, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: fioLat},
			Queue: replay.Queue{Depth: 64}, Stalls: st}, func(e *trace.Event) error {
			if e.Action == trace.ActionQueue {
				qs = append(qs, e.Time)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != len(recs) {
			t.Fatalf("%v: %d Q events, want %d", st, len(qs), len(recs))
		}
		return qs, res
	}
	keep, rk := run(replay.StallsKeep)
	drop, rd := run(replay.StallsDrop)
	if g := keep[400] - keep[399]; g != 5_000_000+fioLat-3*fioNext {
		t.Errorf("keep: bio 400 %v after bio 399, want 5.097 ms (the capture's)", g)
	}
	if g := drop[400] - drop[399]; g != fioLat+fioReap-3*fioNext {
		t.Errorf("drop: bio 400 %v after bio 399, want 102 us", g)
	}
	span := recs[len(recs)-1].Done - recs[0].Queue
	if got := trace.Time(rk.Span()); got != span {
		t.Errorf("keep: span %v, want the capture's %v", got, span)
	}
	want := span - 4*(5_000_000-fioReap)
	if got := trace.Time(rd.Span()); got < want-40_000 || got > want+40_000 {
		t.Errorf("drop: span %v, want %v within 40 us", got, want)
	}
}

// TestStallsRealCaptures: wi-seed000-mqdl (load average 23.5) has fio
// stalls of milliseconds at its full iodepth 64 while its completions
// arrived (cg1's reader, bio 573: 13.8 ms after its previous Q with 64 in
// flight, all 64 completed in the gap); the stall job's capture
// (seed000-stall.fio: cg2 sleeps 12 ms every 1500 reads, at bios 63 +
// 1500 m in the trace) keeps those: periodic, at least 18 of them
// (29,820 reads), and only a few host stalls (load 2.8).
func TestStallsRealCaptures(t *testing.T) {
	w := replay.WIRecording(t, "wi-seed000-mqdl", 23275, 0)
	t.Logf("wi-seed000-mqdl: %d host stalls (%v), %d periodic", w.Stalls().Host, w.Stalls().HostTime, w.Stalls().Periodic)
	if w.Stalls().Host < 10 || w.Stalls().Periodic != 0 {
		t.Errorf("wi-seed000-mqdl: %d host stalls, %d periodic; want at least 10 (cg1 at bio 573 among them) and no period", w.Stalls().Host, w.Stalls().Periodic)
	}
	s := replay.WIRecording(t, "wi-seed000-stall-bfq-10-90-ll0", 22781, 0)
	t.Logf("wi-seed000-stall-bfq-10-90-ll0: %d host stalls (%v), %d periodic", s.Stalls().Host, s.Stalls().HostTime, s.Stalls().Periodic)
	if s.Stalls().Periodic < 18 || s.Stalls().Host > 5 {
		t.Errorf("stall job: %d periodic stalls, %d host ones; want at least 18 (every 1500 reads) and few", s.Stalls().Periodic, s.Stalls().Host)
	}
	// The stall job under mq-deadline at a load average of 7.8: cg2's 33,455
	// reads hold 22 sleeps (bios 63 + 1500 m); its reader and cg1's stall
	// on the host too, their stalls at multiples of their depth of 64.
	m := replay.WIRecording(t, "wi-seed000-stall-mqdl", 0, 33455)
	t.Logf("wi-seed000-stall-mqdl: %d host stalls (%v), %d periodic", m.Stalls().Host, m.Stalls().HostTime, m.Stalls().Periodic)
	if m.Stalls().Periodic < 20 {
		t.Errorf("stall job under mq-deadline: %d periodic stalls, want at least 20 of its 22", m.Stalls().Periodic)
	}
}
