package device

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// aheadLoopCapture is a synthetic capture of a device like a loop device's
// worker: its reads take 5 ms whatever is on the device (served side by
// side), and its 4 KiB writes take 100 us plus 1 ns per byte of the
// requests on the device at their issue (they wait for that data). Bursts
// of d reads (d = 0 to 4, 128 KiB, 512 KiB or 2 MiB at random, each
// following the previous read on the disk, 500 us apart) are followed by
// four writes appending to a log at the low end of the disk, 10 us apart;
// the next burst starts 1 ms after the burst's last completion.
func aheadLoopCapture() []trace.Request {
	rng := rand.New(rand.NewPCG(7, 11))
	var reqs []trace.Request
	t := trace.Time(1e9)
	logPos, readPos := uint64(2048), uint64(1<<30)
	for rep := 0; rep < 150; rep++ {
		d := rep % 5
		burst := len(reqs)
		add := func(r trace.Request, at trace.Time, lat float64) {
			r.ID, r.PID, r.Bios = uint64(len(reqs)+1), 1, 1
			r.Queue, r.Insert, r.Issue = at, at, at
			r.Complete = at + trace.Time(lat)
			reqs = append(reqs, r)
		}
		at := t
		for j := 0; j < d; j++ {
			b := [...]uint32{128 << 10, 512 << 10, 2 << 20}[rng.IntN(3)]
			add(trace.Request{Sector: readPos, Bytes: b, Cat: trace.CatRead}, at, 5e6)
			readPos += uint64(b) >> 9
			at += 500e3
		}
		for j := 0; j < 4; j++ {
			ahead := 0.0 // bytes of the burst's requests still on the device
			for _, r := range reqs[burst:] {
				if r.Complete > at {
					ahead += float64(r.Bytes)
				}
			}
			add(trace.Request{Sector: logPos, Bytes: 4096, Cat: trace.CatWrite}, at, 100e3+ahead)
			logPos += 8
			at += 10e3
		}
		end := t
		for _, r := range reqs[burst:] {
			end = max(end, r.Complete)
		}
		t = end + 1e6
	}
	return reqs
}

// TestCalibrateKindByAhead: on aheadLoopCapture the service times follow
// seek distance (the far log writes wait for the reads), so the rotational
// kind is considered; it serves the reads one after the other, where the
// capture serves them side by side. The non-rotational kind by the count
// of requests on the device misses the writes (the bytes ahead vary 16
// times at a given count): cross-validated 39.5% against the rotational
// kind's 31.2%, which step 2 alone chose; by the bytes ahead it is the
// capture's own device (step 6). Calibrate keeps the non-rotational kind with a write wait of 1
// ns per byte ahead (hand value): a write with 8 MiB ahead at 100 us +
// 8.39 ms.
func TestCalibrateKindByAhead(t *testing.T) {
	m, fit, err := Calibrate(aheadLoopCapture(), CalibrateOptions{Seed: 1, NoBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if fit.SeekCorrelation < MinSeekCorrelation {
		t.Fatalf("seek correlation %.3f below %.1f: the capture does not test the kind choice", fit.SeekCorrelation, MinSeekCorrelation)
	}
	if m.Kind != KindNonRotational {
		t.Fatalf("kind %s, want nonrotational", m.Kind)
	}
	w := m.NonRotational.Write
	if w == nil || math.Abs(w.Ahead-1) > 0.1 {
		t.Fatalf("write class %+v: want a wait of 1 ns per byte ahead within 10%%", w)
	}
	const ahead = 8 << 20
	want := 100e3 + float64(ahead)
	if got := w.mean(4096) + w.wait(ahead); math.Abs(got/want-1) > 0.1 {
		t.Errorf("write with 8 MiB ahead: %.0f us, want %.0f us within 10%%", got/1e3, want/1e3)
	}
}
