package bfq_test

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

// serialDevice serves one request at a time: a fixed cost plus a cost per sector.
type serialDevice struct {
	free          trace.Time
	fixed, perSec trace.Time
}

func (d *serialDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	if d.free < now {
		d.free = now
	}
	d.free += d.fixed + d.perSec*trace.Time(rq.Bytes>>9)
	return d.free
}
func (d *serialDevice) Done(now trace.Time, rq *replay.Request) {}

func replayFixture(t *testing.T, name string, o replay.Options, dev replay.Device) (replay.Result, []trace.Event) {
	t.Helper()
	dir := shared.Fixture(t, name)
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(dir) })
	if err != nil {
		t.Fatal(err)
	}
	var msgs []trace.Event
	res, err := replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, o) },
		Device:       dev,
	}, func(e *trace.Event) error {
		if e.Action == trace.ActionMessage {
			msgs = append(msgs, *e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, msgs
}

// fx-bfq-2cg-w100-900: two cgroups (1181 weight 100, 1201 weight 900),
// one 1 MiB qd4 random reader each; BFQ gives the heavier group the larger
// share while both are backlogged.
func TestFixture2cgWeights(t *testing.T) {
	o := replay.Options{Set: map[string]string{"rotational": "1"}, Weights: map[uint64]int{1181: 100, 1201: 900},
		CgroupPaths: map[uint64]string{1181: "/tsched-cg1", 1201: "/tsched-cg2"}}
	res, msgs := replayFixture(t, "fx-bfq-2cg-w100-900", o, &serialDevice{fixed: 2 * trace.Time(1e6), perSec: 2000})
	var light, heavy replay.CgroupStats
	for _, c := range res.Cgroups {
		switch c.ID {
		case 1181:
			light = c
		case 1201:
			heavy = c
		}
	}
	t.Logf("requests %d, messages %d; cg1181 %d bytes %.2f MiB/s, cg1201 %d bytes %.2f MiB/s",
		res.Requests, len(msgs), light.Bytes, light.MiBps(), heavy.Bytes, heavy.MiBps())
	if heavy.MiBps() <= light.MiBps() {
		t.Errorf("weight 900 group %.2f MiB/s not above weight 100 group %.2f", heavy.MiBps(), light.MiBps())
	}
	sawCg := false
	for _, m := range msgs {
		if m.Cgroup == 1181 || m.Cgroup == 1201 {
			sawCg = true
		}
	}
	if !sawCg {
		t.Error("no message attributed to the fixture's cgroups")
	}
}

// fx-bfq-4seqread: four rate-limited sequential readers created together
// are stably merged into bfqSHARED-S about 0.6 s after creation (the
// capture shows it at 0.61 s); 5.12 has no stable merge.
func TestFixture4SeqReadStableMerge(t *testing.T) {
	dev := func() replay.Device { return &serialDevice{fixed: 150 * trace.Time(1000)} }
	// The capture's loop device reports rotational=1 (manifest.json).
	rot := map[string]string{"rotational": "1"}
	_, msgs := replayFixture(t, "fx-bfq-4seqread", replay.Options{Set: rot}, dev())
	var first trace.Time = trace.NoTime
	shared := 0
	for _, m := range msgs {
		if strings.Contains(m.Text, "merging with queue") && !first.Valid() {
			first = m.Time
		}
		if strings.HasPrefix(m.Text, "bfqSHARED-S") {
			shared++
		}
	}
	t.Logf("6.18: first queue merge at %v, %d bfqSHARED-S messages of %d", first, shared, len(msgs))
	if !first.Valid() || first.Seconds() < 0.55 || first.Seconds() > 0.75 {
		t.Errorf("first merge at %v, want about 0.6 s", first)
	}
	if shared == 0 {
		t.Error("no bfqSHARED-S messages")
	}
	_, msgs = replayFixture(t, "fx-bfq-4seqread", replay.Options{Kernel: "5.12", Set: rot}, dev())
	for _, m := range msgs {
		if strings.Contains(m.Text, "merging with queue") {
			t.Errorf("5.12: %v %s", m.Time, m.Text)
			break
		}
	}
}
