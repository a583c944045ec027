package device

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// behindModel is recorded-fs/fs-mqdl-writeback's fit without residuals
// or batching (read base 123.174 us; write base 984.706 us + 5.389 ns
// per byte), with the wait behind requests of 256 KiB or more at scale.
func behindModel(scale float64) *Model {
	return &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
		Parallelism: 26,
		Read:        &OpTiming{Base: 123174 * time.Nanosecond},
		Write:       &OpTiming{Base: 984706 * time.Nanosecond, PerByte: 5.389},
		Behind:      256 << 10, BehindScale: scale,
	}}
}

// TestBehindWaitsForLargeAhead: a 4 KiB read issued 1 ms after a 1.25 MiB
// writeback write completes no earlier than the write, as the capture's
// 402 reads behind such writes did (their median 14 us before the last
// write ahead): the write takes 984.706 + 5.389*1310720 ns = 8048.176 us,
// so the read, alone 123.174 us, completes at 8048.176 us (scale 1) or
// at 1 ms + 0.5*7048.176 us = 4524.088 us (scale 0.5).
func TestBehindWaitsForLargeAhead(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		want  trace.Time
	}{{1, 8048176}, {0.5, 4524088}} {
		d := behindModel(tc.scale).NewDevice(1)
		w := &replay.Request{ID: 1, Sector: 0, Bytes: 1280 << 10, Cat: trace.CatWrite}
		if got := d.Issue(0, w); got != 8048176 {
			t.Fatalf("scale %v: write done %d ns, want 8048176", tc.scale, got)
		}
		r := &replay.Request{ID: 2, Sector: 1 << 20, Bytes: 4096, Cat: trace.CatRead}
		if got := d.Issue(1e6, r); got != tc.want {
			t.Errorf("scale %v: read behind the write done %d ns, want %d", tc.scale, got, tc.want)
		}
		// A large request behind the large one is not held: 512 KiB
		// write, 984.706 + 5.389*524288 ns = 3810.094 us after its issue.
		w2 := &replay.Request{ID: 3, Sector: 2 << 20, Bytes: 512 << 10, Cat: trace.CatWrite}
		if got := d.Issue(1e6, w2); got != 1e6+3810094 {
			t.Errorf("scale %v: large write behind the write done %d ns, want %d", tc.scale, got, trace.Time(1e6+3810094))
		}
		// Once both large writes are done, a read takes its own 123.174 us.
		d.Done(2e6, w)
		d.Done(2e6, w2)
		r2 := &replay.Request{ID: 4, Sector: 3 << 20, Bytes: 4096, Cat: trace.CatRead}
		if got := d.Issue(2e6, r2); got != 2e6+123174 {
			t.Errorf("scale %v: read with no large request on the device done %d ns, want %d", tc.scale, got, trace.Time(2e6+123174))
		}
	}
}

// TestBehindLastIssued: behind two large writes, a small read waits for
// the one issued last (a device working through them in order), not the
// later of their modelled completions: a 1.25 MiB write at 0 (done
// 8048.176 us) and a 256 KiB one at 0.5 ms (done 0.5 ms + 984.706 us +
// 5.389*262144 ns = 2897.400 us): a read at 1 ms completes at 2897.400 us.
func TestBehindLastIssued(t *testing.T) {
	d := behindModel(1).NewDevice(1)
	d.Issue(0, &replay.Request{ID: 1, Bytes: 1280 << 10, Cat: trace.CatWrite})
	d.Issue(5e5, &replay.Request{ID: 2, Sector: 1 << 20, Bytes: 256 << 10, Cat: trace.CatWrite})
	if got := d.Issue(1e6, &replay.Request{ID: 3, Sector: 2 << 20, Bytes: 4096, Cat: trace.CatRead}); got != 2897400 {
		t.Errorf("read behind two writes done %d ns, want 2897400", got)
	}
}

// TestBehindVersion: behind_bytes needs a version 7 model and a scale in
// (0, 1].
func TestBehindVersion(t *testing.T) {
	for name, tc := range map[string]struct {
		doc, err string
	}{
		"v6":    {`{"version": 6, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5}, "behind_bytes": 262144, "behind_scale": 1}}`, "version 6"},
		"scale": {`{"version": 7, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5}, "behind_bytes": 262144}}`, "behind_scale"},
		"ok":    {`{"version": 7, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5}, "behind_bytes": 262144, "behind_scale": 0.75}}`, ""},
		"old":   {`{"version": 6, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "read": {"base_ns": 5}}}`, ""},
	} {
		_, err := Load(strings.NewReader(tc.doc))
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want one naming %q", name, err, tc.err)
		}
	}
}

// behindCapture is a synthetic capture of a device that works through
// its requests in order, as recorded-fs/fs-mqdl-writeback's loop device
// did: every 20 ms a 1.25 MiB write taking 8 ms (+-10 %), and 4 KiB reads
// 500 us apart taking 100 us (+-10 %), except those issued while the
// write is on the device, which complete 10 us after it when inOrder
// (else in their 100 us as well).
func behindCapture(inOrder bool) []trace.Request {
	var reqs []trace.Request
	add := func(r trace.Request, at, done trace.Time) {
		r.ID, r.PID, r.Bios = uint64(len(reqs)+1), 1, 1
		r.Queue, r.Insert, r.Issue, r.Complete = at, at, at, done
		reqs = append(reqs, r)
	}
	jitter := func(i int) float64 { return 0.9 + 0.2*float64((i*7919)%101)/100 }
	for rep := 0; rep < 200; rep++ {
		t0 := trace.Time(1e9) + trace.Time(rep)*20e6
		wDone := t0 + trace.Time(8e6*jitter(rep))
		add(trace.Request{Sector: uint64(rep) * 4096, Bytes: 1280 << 10, Cat: trace.CatWrite}, t0, wDone)
		for j := 1; j < 40; j++ {
			at := t0 + trace.Time(j)*500e3
			done := at + trace.Time(100e3*jitter(rep*40+j))
			if inOrder && at < wDone {
				done = wDone + 10e3
			}
			add(trace.Request{Sector: 1<<30 + uint64(rep*40+j)*8, Bytes: 4096, Cat: trace.CatRead}, at, done)
		}
	}
	slices.SortFunc(reqs, func(a, b trace.Request) int { return cmp.Compare(a.Complete, b.Complete) })
	return reqs
}

// TestCalibrateBehind: with CalibrateOptions.Behind, step 5 fits the
// wait behind large requests on a capture whose reads wait for the write
// ahead of them (15 or 16 of every 39: inOrderBehind counts 200 writes
// times 15 or 16 reads, every one in order), and times them so: a read issued
// 1 ms after a write's issue completes about when the write does, 7 ms
// later (8 ms +-10 % after the write's issue, scale permitting: at least
// 0.25 of it), where the model without the term times it at 100 us.
func TestCalibrateBehind(t *testing.T) {
	reqs := behindCapture(true)
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 1, Behind: true, NotRotational: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, pfit, err := Calibrate(reqs, CalibrateOptions{Seed: 1, NotRotational: true})
	if err != nil {
		t.Fatal(err)
	}
	if plain.NonRotational.Behind != 0 {
		t.Errorf("without the option: behind_bytes %d, want 0", plain.NonRotational.Behind)
	}
	n := m.NonRotational
	if n.Behind != behindMin {
		t.Fatalf("behind_bytes %d, want %d (demerit %.1f%%, without %.1f%%)", n.Behind, behindMin, 100*fit.DemeritFraction, 100*pfit.DemeritFraction)
	}
	if fit.DemeritFraction >= pfit.DemeritFraction || fit.CV.DemeritFraction >= pfit.CV.DemeritFraction {
		t.Errorf("demerit %.1f%% (cv %.1f%%), without the wait %.1f%% (%.1f%%): want lower", 100*fit.DemeritFraction, 100*fit.CV.DemeritFraction, 100*pfit.DemeritFraction, 100*pfit.CV.DemeritFraction)
	}
	d := m.NewDevice(1)
	w := &replay.Request{ID: 1, Bytes: 1280 << 10, Cat: trace.CatWrite}
	wDone := d.Issue(0, w)
	got := d.Issue(1e6, &replay.Request{ID: 2, Sector: 1 << 30, Bytes: 4096, Cat: trace.CatRead})
	if want := 1e6 + n.BehindScale*float64(wDone-1e6); float64(got) < want-1 || got < 1e6+(wDone-1e6)/4 {
		t.Errorf("read behind the write (done %d ns) done %d ns, want at least %.0f", wDone, got, want)
	}
}

// TestCalibrateBehindOutOfOrder: where the reads behind the writes take
// their own 100 us (only those issued near the write's end complete
// within a tenth of its D2C of it), step 5 does not fit the wait even
// with the option.
func TestCalibrateBehindOutOfOrder(t *testing.T) {
	reqs := behindCapture(false)
	m, _, err := Calibrate(reqs, CalibrateOptions{Seed: 1, Behind: true, NotRotational: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.NonRotational.Behind != 0 {
		t.Errorf("behind_bytes %d on a device that serves the reads beside the writes, want 0", m.NonRotational.Behind)
	}
	c := prepare(reqs)
	n, in := inOrderBehind(c.samples)
	// Reads 500 us apart from 0.5 ms on, behind a write of 7.2-8.8 ms:
	// 14 to 17 per write; in order only those issued within its last
	// tenth less their 100 us (0.62-0.78 ms), at most 2 per write.
	if n < 200*14 || n > 200*17 || in > 200*2 {
		t.Errorf("inOrderBehind: %d behind, %d in order; want 2800 to 3400 and at most 400", n, in)
	}
}
