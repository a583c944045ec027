package synth

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

func readAll(t *testing.T, r trace.EventReader) []trace.Event {
	t.Helper()
	var evs []trace.Event
	for {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("event %d: %v", len(evs), err)
		}
		evs = append(evs, e)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	jobs := []Job{
		{Name: "a", RW: RandRead, BS: 4096, Size: 1 << 26, IODepth: 4, IOs: 300},
		{Name: "b", RW: RandRW, BS: 8192, Size: 1 << 26, Offset: 1 << 30, IODepth: 2, IOs: 300, ThinkTime: 50 * time.Microsecond},
	}
	dev := DeviceSpec{Latency: 200 * time.Microsecond, Depth: 4}
	a := readAll(t, Generate(jobs, dev, 7))
	b := readAll(t, Generate(jobs, dev, 7))
	c := readAll(t, Generate(jobs, dev, 8))
	if len(a) != 600*5 {
		t.Fatalf("got %d events, want %d", len(a), 600*5)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("event %d differs between runs with the same seed", i)
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i].Sector == c[i].Sector
	}
	if same {
		t.Fatal("different seeds gave the same offsets")
	}
	for i := 1; i < len(a); i++ {
		if a[i].Time < a[i-1].Time {
			t.Fatalf("event %d goes back in time", i)
		}
	}
}

func TestDepthRespected(t *testing.T) {
	jobs := []Job{{PID: 42, RW: RandRead, BS: 4096, IODepth: 3, IOs: 500},
		{PID: 43, RW: Read, BS: 4096, Sync: true, IODepth: 8, IOs: 500}}
	evs := readAll(t, Generate(jobs, DeviceSpec{Latency: time.Millisecond, Depth: 2}, 1))
	inflight, most := map[uint32]int{}, map[uint32]int{}
	devBusy, devMax := 0, 0
	for _, e := range evs {
		switch e.Action {
		case trace.ActionQueue:
			inflight[e.PID]++
			if inflight[e.PID] > most[e.PID] {
				most[e.PID] = inflight[e.PID]
			}
		case trace.ActionIssue:
			devBusy++
			devMax = max(devBusy, devMax)
		case trace.ActionComplete:
			inflight[e.PID]--
			devBusy--
		}
	}
	if most[42] != 3 || most[43] != 1 {
		t.Fatalf("max in flight per process = %v, want 42:3 43:1 (psync)", most)
	}
	if devMax != 2 {
		t.Fatalf("device served %d at once, want 2", devMax)
	}
}

func TestSequentialOffsets(t *testing.T) {
	j := Job{PID: 7, RW: Write, BS: 65536, Offset: 1 << 20, Size: 4 << 16, IOs: 10, Direct: true}
	evs := readAll(t, Generate([]Job{j}, DeviceSpec{}, 3))
	var sectors []uint64
	for _, e := range evs {
		if e.Action == trace.ActionQueue {
			sectors = append(sectors, e.Sector)
			if e.Cat != trace.CatWrite|trace.CatSync|trace.CatQueue || e.Bytes != 65536 {
				t.Fatalf("Q event %+v", e)
			}
		}
	}
	want := []uint64{2048, 2176, 2304, 2432, 2048, 2176, 2304, 2432, 2048, 2176} // wraps in 4 blocks
	if len(sectors) != len(want) {
		t.Fatalf("got %d bios", len(sectors))
	}
	for i := range want {
		if sectors[i] != want[i] {
			t.Fatalf("sectors %v, want %v", sectors, want)
		}
	}
}

func TestThinkTimeVisible(t *testing.T) {
	think := 2 * time.Millisecond
	j := Job{PID: 9, RW: RandRead, BS: 4096, IOs: 20, Sync: true, ThinkTime: think}
	evs := readAll(t, Generate([]Job{j}, DeviceSpec{Latency: 500 * time.Microsecond}, 1))
	var lastC trace.Time = trace.NoTime
	n := 0
	for _, e := range evs {
		switch e.Action {
		case trace.ActionComplete:
			lastC = e.Time
		case trace.ActionQueue:
			if lastC != trace.NoTime {
				if got := e.Time.Sub(lastC); got != think {
					t.Fatalf("gap C->Q = %v, want %v", got, think)
				}
				n++
			}
		}
	}
	if n != 19 {
		t.Fatalf("saw %d gaps", n)
	}
	// 20 I/Os of 0.5 ms with 19 gaps of 2 ms.
	if end := evs[len(evs)-1].Time; end != trace.Time(20*500*time.Microsecond+19*think) {
		t.Fatalf("capture ends at %v", end)
	}
}

func TestRateAndRuntime(t *testing.T) {
	j := Job{PID: 5, RW: Read, BS: 4096, IODepth: 4, Rate: 4096 * 1000, Runtime: 100 * time.Millisecond}
	evs := readAll(t, Generate([]Job{j}, DeviceSpec{Latency: 10 * time.Microsecond}, 1))
	q := 0
	for _, e := range evs {
		if e.Action == trace.ActionQueue {
			q++
		}
	}
	if q < 95 || q > 105 {
		t.Fatalf("%d I/Os in 100 ms at 1000 IOPS", q)
	}
}

func TestParse(t *testing.T) {
	f, err := os.Open("testdata/two-cgroups.fio")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sp, err := Parse(f, "two-cgroups.fio")
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Jobs) != 2 {
		t.Fatalf("%d jobs", len(sp.Jobs))
	}
	j := sp.Jobs[1]
	if j.Name != "file2" || j.RW != Write || j.BS != 32768 || !j.Sync || !j.Direct || j.IOs != 200 ||
		j.ThinkTime != 20*time.Microsecond || j.Offset != 1<<30 || j.Cgroup != 2 || j.CgroupPath != "/cg2" {
		t.Fatalf("job %+v", j)
	}
	if sp.Weights[1] != 1000 || sp.Weights[2] != 100 || sp.CgroupPaths[1] != "/cg1" {
		t.Fatalf("cgroups %v %v", sp.Weights, sp.CgroupPaths)
	}
	if sp.Device.Latency != 300*time.Microsecond || sp.Device.Depth != 32 {
		t.Fatalf("device %+v", sp.Device)
	}
	evs := readAll(t, Generate(sp.Jobs, sp.Device, 1))
	if len(evs) != 2*200*5 {
		t.Fatalf("%d events", len(evs))
	}
	_, err = Parse(strings.NewReader("[a]\nrw=sideways\n"), "bad.fio")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1 || !strings.Contains(err.Error(), "bad.fio:1:") {
		t.Fatalf("error %v", err)
	}
	sp, err = Parse(strings.NewReader("[g]\nnumjobs=3\noffset_increment=1g\npid=100\n"), "n.fio")
	if err != nil || len(sp.Jobs) != 3 || sp.Jobs[2].Offset != 2<<30 || sp.Jobs[2].PID != 102 {
		t.Fatalf("numjobs: %v %+v", err, sp)
	}
}
