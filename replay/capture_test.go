package replay_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

func source(dir string) replay.Source {
	return func() (trace.EventReader, error) { return blktrace.Open(dir) }
}

type captureReport struct {
	name     string
	sched    string
	bios     int
	procErr  []string
	maxProcE float64
	cgErr    []string
	maxCgE   float64
	tau      float64
	realSpan float64
	predSpan float64
	events   int
}

// replayCapture replays the capture in dir through sched on a device that
// serves each request in the capture's own D2C and compares bandwidth and
// dispatch order.
func replayCapture(t *testing.T, dir string, sched func(replay.Host) (replay.Scheduler, error)) captureReport {
	t.Helper()
	w, err := replay.NewWorkload(source(dir))
	if err != nil {
		t.Fatal(err)
	}
	dev := &captureDevice{fallback: 100_000}
	h := newEventHasher()
	res, err := replay.Run(w, replay.Config{NewScheduler: sched, Device: dev}, h.add)
	if err != nil {
		t.Fatal(err)
	}
	rep := captureReport{name: filepath.Base(dir), sched: res.Scheduler, bios: res.Bios, events: h.n,
		realSpan: (w.End - w.Start).Seconds(), predSpan: res.Span().Seconds()}
	if res.Bios != w.Bios {
		t.Errorf("%s: replayed %d bios, workload has %d", rep.name, res.Bios, w.Bios)
	}
	pred := map[uint32]replay.ProcessStats{}
	for _, p := range res.Processes {
		pred[p.PID] = p
	}
	for _, p := range w.Processes {
		if p.Bytes < 1<<20 {
			continue // processes with a few bios (kworkers) say nothing about bandwidth
		}
		q := pred[p.PID]
		e := q.MiBps()/p.MiBps() - 1
		rep.maxProcE = math.Max(rep.maxProcE, math.Abs(e))
		rep.procErr = append(rep.procErr, fmt.Sprintf("%d %s %.2f→%.2f MiB/s (%+.1f%%)", p.PID, p.Comm, p.MiBps(), q.MiBps(), 100*e))
	}
	predCg := map[uint64]replay.CgroupStats{}
	for _, c := range res.Cgroups {
		predCg[c.ID] = c
	}
	for _, c := range w.Cgroups {
		if c.Bytes < 1<<20 {
			continue
		}
		q := predCg[c.ID]
		e := q.MiBps()/c.MiBps() - 1
		rep.maxCgE = math.Max(rep.maxCgE, math.Abs(e))
		rep.cgErr = append(rep.cgErr, fmt.Sprintf("cg %d %.2f→%.2f MiB/s (%+.1f%%)", c.ID, c.MiBps(), q.MiBps(), 100*e))
	}
	rep.tau = tauOfPairs(dev.pairs)
	t.Logf("%s via %s: %d bios, %d events, span %.3fs→%.3fs, tau %.4f\n  %s\n  %s", rep.name, rep.sched, rep.bios, rep.events,
		rep.realSpan, rep.predSpan, rep.tau, strings.Join(rep.procErr, "\n  "), strings.Join(rep.cgErr, "\n  "))
	return rep
}

// TestFixtureMQDeadline replays the mq-deadline fixture (a qd8 random
// reader and a qd4 random writer at 2000 IOPS each) through mq-deadline.
func TestFixtureMQDeadline(t *testing.T) {
	dir := shared.Fixture(t, "fx-mqdl-rw-nocg")
	rep := replayCapture(t, dir, newMQDL)
	if rep.maxProcE > 0.05 {
		t.Errorf("per-process bandwidth error %.1f%% > 5%%", 100*rep.maxProcE)
	}
	if rep.tau < 0.9 {
		t.Errorf("Kendall tau of dispatch order %.4f < 0.9", rep.tau)
	}
	// Determinism on real data.
	w, err := replay.NewWorkload(source(dir))
	if err != nil {
		t.Fatal(err)
	}
	var sums [2][32]byte
	for i := range sums {
		h := newEventHasher()
		if _, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &captureDevice{fallback: 100_000}}, h.add); err != nil {
			t.Fatal(err)
		}
		sums[i] = h.sum()
	}
	if sums[0] != sums[1] {
		t.Errorf("two replays of the fixture differ")
	}
}

// TestRecordedCaptures replays the recorded mq-deadline, none and kyber
// captures (kyber through mq-deadline, the nearest model) when the shared
// directory is present.
func TestRecordedCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	cases := []struct {
		name  string
		sched func(replay.Host) (replay.Scheduler, error)
	}{
		{"b-mqdl-w100-900", newMQDL},
		{"b-mqdl-w500-500", newMQDL},
		{"f-none-mixed", newNone},
		{"f-kyber-mixed", newMQDL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := shared.Path(t, "captures", "recorded", c.name)
			rep := replayCapture(t, dir, c.sched)
			if rep.maxProcE > 0.10 || rep.maxCgE > 0.10 {
				t.Errorf("bandwidth error: process %.1f%%, cgroup %.1f%%", 100*rep.maxProcE, 100*rep.maxCgE)
			}
		})
	}
}
