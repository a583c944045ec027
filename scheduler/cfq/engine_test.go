package cfq

import (
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/synth"
	"github.com/tracesched/tracesched/trace"
)

// serialDevice is a replay.Device that serves one request at a time in
// arrival order, each taking svc: seed001Dev for the engine.
type serialDevice struct {
	svc  trace.Time
	free trace.Time
}

func (d *serialDevice) Issue(now trace.Time, _ *replay.Request) trace.Time {
	d.free = max(d.free, now) + d.svc
	return d.free
}

func (d *serialDevice) Done(trace.Time, *replay.Request) {}

// TestEngineSeed001 runs seed 001 end to end through the engine the CLI
// uses: synth.Generate writes a capture of the two fio jobs (timed on the
// same device, so the closed loop infers the 96 µs think time), the engine
// replays it closed loop with cfq.New as the scheduler on a queue of depth
// 32, and the per-process bandwidth comes from replay.Result as fio would
// compute it (bytes over the process's own first Q to last C). The jobs
// are 64 MiB instead of 1 GiB to keep the test quick.
func TestEngineSeed001(t *testing.T) {
	jobs := []synth.Job{
		{Name: "file1", PID: 685, Cgroup: 1, CgroupPath: "/cg1", RW: synth.Write, BS: 32 << 10, Sync: true, Direct: true,
			ThinkTime: 96 * time.Microsecond, Size: 64 << 20},
		{Name: "file2", PID: 686, Cgroup: 2, CgroupPath: "/cg2", RW: synth.Write, BS: 32 << 10, Sync: true, Direct: true,
			ThinkTime: 96 * time.Microsecond, Size: 64 << 20, Offset: 2 << 30},
	}
	spec := synth.DeviceSpec{Latency: 383 * time.Microsecond, Depth: 1}
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return synth.Generate(jobs, spec, 1), nil })
	if err != nil {
		t.Fatal(err)
	}
	run := func(kernel string, withEvents bool) (replay.Result, int) {
		o := replay.Options{Kernel: kernel, Weights: map[uint64]int{1: 1000, 2: 100},
			CgroupPaths: map[uint64]string{1: "/cg1", 2: "/cg2"}}
		var sched *Scheduler
		cfg := replay.Config{
			NewScheduler: func(h replay.Host) (replay.Scheduler, error) {
				s, err := New(h, o)
				sched = s
				return s, err
			},
			Device: &serialDevice{svc: trace.Time(383 * time.Microsecond)},
			Queue:  replay.Queue{Rotational: false, Depth: 32},
		}
		msgs := 0
		var out func(*trace.Event) error
		if withEvents {
			out = func(e *trace.Event) error {
				if e.Action == trace.ActionMessage {
					msgs++
				}
				return nil
			}
		}
		res, err := replay.Run(w, cfg, out)
		if err != nil {
			t.Fatal(err)
		}
		if sched.HWTag() != -1 {
			t.Errorf("%s: hw_tag %d, want -1 (never more than 5 requests in the driver)", kernel, sched.HWTag())
		}
		return res, msgs
	}
	bw := func(r replay.Result) (float64, float64) {
		m := map[uint32]float64{}
		for _, p := range r.Processes {
			m[p.PID] = p.MiBps()
		}
		return m[685], m[686]
	}
	for _, c := range []struct {
		kernel   string
		min, max float64
	}{{"4.13", 0.95, 1.05}, {"4.19", 1.5, 2}} {
		res, msgs := run(c.kernel, true)
		b1, b2 := bw(res)
		t.Logf("%s: file1 %.1f MiB/s, file2 %.1f MiB/s, ratio %.2f; %d requests, max in driver %d, %d log lines",
			c.kernel, b1, b2, b1/b2, res.Requests, res.MaxInDriver, msgs)
		if res.Requests != 2*2048 {
			t.Errorf("%s: %d requests, want 4096", c.kernel, res.Requests)
		}
		if r := b1 / b2; r < c.min || r > c.max {
			t.Errorf("%s: fio ratio %.2f, want %.2f..%.2f", c.kernel, r, c.min, c.max)
		}
		if msgs == 0 {
			t.Errorf("%s: no CFQ decision lines in the output", c.kernel)
		}
	}
}

// TestMetaBioMergesIn419 replays fs-mqdl-pgbench's pair of bios (backend
// 4027: RA 4195072+8, then RM 4195064+8 on the same plug, ending where the
// readahead starts) through CFQ. Linux 4.19 has no blk_cgroup_mergeable
// (replay.CgroupMergeRule; 5.18's 6b2b04590b51 added it), and
// cfq_allow_bio_merge sees one process's sync queue, so the metadata bio
// front-merges into the readahead request: 1 request, 1 front merge, where
// 6.18 keeps 2 requests (replay's TestMetaBioDoesNotMergeWithData).
func TestMetaBioMergesIn419(t *testing.T) {
	recs := []replay.Record{
		{PID: 4027, Sector: 4195072, Bytes: 4096, Cat: trace.CatRead | trace.CatAhead, Plugged: true},
		{PID: 4027, Sector: 4195064, Bytes: 4096, Cat: trace.CatRead | trace.CatMeta, Queue: 1636, Plugged: true, PlugEnd: true},
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return New(h, replay.Options{}) },
		Device:       &serialDevice{svc: trace.Time(time.Millisecond)},
		Queue:        replay.Queue{Depth: 1}, Mode: replay.Open,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 1 || res.FrontMerges != 1 {
		t.Errorf("CFQ 4.19: %d requests, %d front merges; want 1, 1", res.Requests, res.FrontMerges)
	}
}
