package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

func readFixture(t *testing.T, name string) *Capture {
	t.Helper()
	return readCapture(t, fixture.Path(t, name))
}

// readCapture reads the capture at path into a Capture.
func readCapture(tb testing.TB, path string) *Capture {
	tb.Helper()
	in, err := blktrace.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	c, err := Read(in, in.Meta, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func saved(t *testing.T, m *device.Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := m.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCalibrateCache: a second calibration of the same requests comes from
// the cache with the very model and figures of the first; an entry that
// does not load (truncated, not JSON, another key, a model that fails
// Validate) is refitted and replaced.
func TestCalibrateCache(t *testing.T) {
	c := readFixture(t, "fx-mqdl-rw-nocg")
	reqs := c.DeviceRequests()
	if len(reqs) == 0 {
		t.Fatal("no requests on the workload's device")
	}
	cache := &Cache{Dir: t.TempDir(), Program: "test"}
	opts := device.CalibrateOptions{Seed: 1}
	fresh, err := Calibrate(reqs, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Calibrate(reqs, opts, cache)
	if err != nil || first.Cached || first.CacheErr != nil {
		t.Fatalf("first calibration: cached %v, cache error %v, error %v", first != nil && first.Cached, first.CacheErr, err)
	}
	want := saved(t, fresh.Model)
	if !bytes.Equal(saved(t, first.Model), want) {
		t.Fatal("a calibration with a cache fits another model than one without")
	}
	again, err := Calibrate(reqs, opts, cache)
	if err != nil || !again.Cached {
		t.Fatalf("second calibration not from the cache (error %v)", err)
	}
	if !bytes.Equal(saved(t, again.Model), want) {
		t.Error("the cached model differs from the fitted one")
	}
	if cov := device.CoverageOf(reqs); !reflect.DeepEqual(again.Model.Coverage, cov) || !reflect.DeepEqual(fresh.Model.Coverage, cov) {
		t.Errorf("coverage fitted %+v, cached %+v, want the requests' %+v", fresh.Model.Coverage, again.Model.Coverage, cov)
	}
	if again.Fit.Kind != fresh.Fit.Kind || again.Fit.DemeritFraction != fresh.Fit.DemeritFraction ||
		again.Fit.CV.DemeritFraction != fresh.Fit.CV.DemeritFraction || again.Fit.N != fresh.Fit.N {
		t.Errorf("cached fit %+v, fitted %+v", again.Fit, fresh.Fit)
	}

	key := cache.Key(reqs, opts)
	path := filepath.Join(cache.Dir, key+".json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other := &Cache{Dir: cache.Dir, Program: "other"}
	badModel := bytes.Replace(good, []byte(`"parallelism":`), []byte(`"parallelism":-`), 1)
	if bytes.Equal(badModel, good) {
		t.Fatal("test entry has no parallelism to break")
	}
	for name, b := range map[string][]byte{
		"truncated":     good[:len(good)/2],
		"not JSON":      []byte("\x00\x01garbage"),
		"another key":   bytes.Replace(good, []byte(key), []byte(other.Key(reqs, opts)), 1),
		"invalid model": badModel,
	} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cache.Load(key); err == nil {
			t.Errorf("%s: entry loaded", name)
		}
		cal, err := Calibrate(reqs, opts, cache)
		if err != nil || cal.Cached || !bytes.Equal(saved(t, cal.Model), want) {
			t.Errorf("%s: cached %v, error %v, same model %v", name, cal != nil && cal.Cached, err, cal != nil && bytes.Equal(saved(t, cal.Model), want))
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
			t.Errorf("%s: the entry was not replaced by the refit", name)
		}
	}
}

// TestCacheKey: the key follows every input of the fit: the requests'
// times, the options, the program.
func TestCacheKey(t *testing.T) {
	reqs := readFixture(t, "fx-bfq-4seqread").DeviceRequests()
	c := &Cache{Program: "a"}
	opts := device.CalibrateOptions{Seed: 1}
	k := c.Key(reqs, opts)
	if c.Key(reqs, opts) != k {
		t.Fatal("key not deterministic")
	}
	moved := append([]trace.Request(nil), reqs...)
	moved[len(moved)/2].Complete++
	if c.Key(moved, opts) == k {
		t.Error("a completion 1 ns later keeps the key")
	}
	queued := append([]trace.Request(nil), reqs...)
	queued[0].Queue--
	if c.Key(queued, opts) == k {
		t.Error("a Q 1 ns earlier keeps the key")
	}
	if c.Key(reqs[1:], opts) == k {
		t.Error("a request less keeps the key")
	}
	if c.Key(reqs, device.CalibrateOptions{Seed: 2}) == k {
		t.Error("another seed keeps the key")
	}
	if c.Key(reqs, device.CalibrateOptions{Seed: 1, NotRotational: true}) == k {
		t.Error("NotRotational keeps the key")
	}
	if (&Cache{Program: "b"}).Key(reqs, opts) == k {
		t.Error("another program keeps the key")
	}
	// Every field the fit reads, one request's changed by one (its delta
	// coding must not hide it), and two requests' swapped.
	for name, change := range map[string]func(r *trace.Request){
		"ID": func(r *trace.Request) { r.ID++ }, "sector": func(r *trace.Request) { r.Sector++ },
		"bytes": func(r *trace.Request) { r.Bytes++ }, "category": func(r *trace.Request) { r.Cat ^= trace.CatSync },
		"PID": func(r *trace.Request) { r.PID++ }, "cgroup": func(r *trace.Request) { r.Cgroup++ },
		"I": func(r *trace.Request) { r.Insert++ }, "D": func(r *trace.Request) { r.Issue-- },
		"bios": func(r *trace.Request) { r.Bios++ }, "flags": func(r *trace.Request) { r.Flags ^= trace.FlagPartial },
		"unset D": func(r *trace.Request) { r.Issue = trace.NoTime },
	} {
		changed := append([]trace.Request(nil), reqs...)
		change(&changed[len(changed)/3])
		if c.Key(changed, opts) == k {
			t.Errorf("a request's %s changed keeps the key", name)
		}
	}
	swapped := append([]trace.Request(nil), reqs...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	if c.Key(swapped, opts) == k {
		t.Error("two requests swapped keep the key")
	}
}

// TestZigzag: the key's coding of differences is one to one and small
// near zero either way.
func TestZigzag(t *testing.T) {
	seen := map[uint64]uint64{}
	for _, d := range []uint64{0, 1, 2, 3, 1 << 62, 1<<63 - 1, 1 << 63, 1<<64 - 1, 1<<64 - 2, 1<<64 - 3} {
		z := zigzag(d)
		if o, ok := seen[z]; ok {
			t.Errorf("zigzag(%d) = zigzag(%d) = %d", d, o, z)
		}
		seen[z] = d
	}
	for d, want := range map[uint64]uint64{0: 0, 1<<64 - 1: 1, 1: 2, 1<<64 - 2: 3, 2: 4} {
		if z := zigzag(d); z != want {
			t.Errorf("zigzag(%d) = %d, want %d", d, z, want)
		}
	}
}

// TestReadOnceReplaysAsTwoReads: a capture read once by the pipeline
// replays (through BFQ, with P/U, merges and messages) event for event as
// the workload that reads the capture again (replay.NewWorkload) does, and
// its real side holds what diff.Load reads.
func TestReadOnceReplaysAsTwoReads(t *testing.T) {
	for _, name := range []string{"fx-bfq-2cg-w100-900", "fx-mqdl-rw-nocg", "fx-bfq-4seqread"} {
		t.Run(name, func(t *testing.T) {
			path := fixture.Path(t, name)
			c := readFixture(t, name)
			in, err := blktrace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			real, err := diff.Load(in, in.Meta())
			in.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(real.BioSlice(), c.Real.BioSlice()) || !reflect.DeepEqual(real.RequestSlice(), c.Real.RequestSlice()) ||
				!reflect.DeepEqual(real.Messages, c.Real.Messages) || real.Stats != c.Real.Stats {
				t.Error("the real side differs from diff.Load's")
			}
			w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(path) })
			if err != nil {
				t.Fatal(err)
			}
			cal, err := Calibrate(c.DeviceRequests(), device.CalibrateOptions{Seed: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := func(w *replay.Workload) []trace.Event {
				var evs []trace.Event
				cfg := replay.Config{
					NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, replay.Options{}) },
					Device:       cal.Model.NewDevice(1),
					Queue:        replay.Queue{Rotational: true},
				}
				if _, err := replay.Run(w, cfg, func(e *trace.Event) error { evs = append(evs, *e); return nil }); err != nil {
					t.Fatal(err)
				}
				return evs
			}
			want, got := run(w), run(c.Workload)
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d", len(got), len(want))
			}
			plugs := 0
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
				}
				if want[i].Action == trace.ActionPlug || want[i].Action == trace.ActionUnplugIO {
					plugs++
				}
			}
			if plugs == 0 {
				t.Error("no P/U events replayed")
			}
			t.Logf("%d events, %d P/U", len(want), plugs)
		})
	}
}

// TestCalibrateSeqFromSide: a calibration read from the real side's table
// one request at a time (the replay's) fits, caches and covers what one
// from the side's requests as a slice does, with windows small enough for
// the compact pass (fx-mqdl-rw-nocg: 1,200 usable requests, as btt
// counts them) and with the
// default ones (the slice).
func TestCalibrateSeqFromSide(t *testing.T) {
	c := readFixture(t, "fx-mqdl-rw-nocg")
	reqs := c.DeviceRequests()
	n := 0
	for r := range c.DeviceRequestSeq() {
		if *r != reqs[n] {
			t.Fatalf("request %d: %+v, the slice's %+v", n, *r, reqs[n])
		}
		n++
	}
	if n != len(reqs) || n == 0 {
		t.Fatalf("%d requests in the sequence, %d in the slice", n, len(reqs))
	}
	for _, opts := range []device.CalibrateOptions{{Seed: 1, CVSamples: 300, FitSamples: 600}, {Seed: 1}} {
		want, err := Calibrate(reqs, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		cache := &Cache{Dir: t.TempDir(), Program: "test"}
		got, err := CalibrateSeq(c.DeviceRequestSeq(), opts, cache)
		if err != nil {
			t.Fatal(err)
		}
		if (opts.FitSamples > 0) != (got.Fit.Fitted > 0) || got.Fit.N != 1200 {
			t.Errorf("%+v: n %d, fitted on a window of %d", opts, got.Fit.N, got.Fit.Fitted)
		}
		if !bytes.Equal(saved(t, got.Model), saved(t, want.Model)) || got.Fit.N != want.Fit.N || got.Fit.DemeritFraction != want.Fit.DemeritFraction {
			t.Errorf("%+v: from the sequence %+v, from the slice %+v", opts, got.Fit, want.Fit)
		}
		if cache.KeySeq(c.DeviceRequestSeq(), opts) != cache.Key(reqs, opts) {
			t.Errorf("%+v: the sequence and the slice have other keys", opts)
		}
	}
}

// TestReplaySideAsAdded: the predicted side Capture.Replay builds (its
// messages kept aside and joined at the end) compares with the real one
// exactly as a side fed every event through Side.Add: the same diff, think
// time included, whose in-service spans need the insertions of each
// message's instant (a replay stamps an insertion and the expiration or
// selection it causes alike). fx-bfq-4seqread: without them the joined
// side's think-time agreement was 0.203 against 1.
func TestReplaySideAsAdded(t *testing.T) {
	for _, name := range []string{"fx-bfq-4seqread", "fx-bfq-2cg-w100-900"} {
		t.Run(name, func(t *testing.T) {
			c := readFixture(t, name)
			cal, err := Calibrate(c.DeviceRequests(), device.CalibrateOptions{Seed: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg := replay.Config{
				NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, replay.Options{}) },
				Device:       cal.Model.NewDevice(1),
				Queue:        replay.Queue{Rotational: true},
			}
			meta := trace.Meta{Source: "replay", Extra: map[string]string{"scheduler": "bfq"}}
			added := diff.NewSide(meta)
			pred, _, err := c.Replay(cfg, meta, func(e *trace.Event) error { added.Add(e); return nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			added.Finish()
			var a, b bytes.Buffer
			ra, rb := diff.Compare(c.Real, pred, diff.Options{}), diff.Compare(c.Real, added, diff.Options{})
			if err := ra.WriteJSON(&a); err != nil {
				t.Fatal(err)
			}
			if err := rb.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("Capture.Replay's side: think-time agreement %v of %d; the side fed by Add: %v of %d; the diffs differ",
					ra.ThinkTime.Agreement, ra.ThinkTime.Compared, rb.ThinkTime.Agreement, rb.ThinkTime.Compared)
			}
			if ra.ThinkTime.Compared == 0 {
				t.Error("no think-time classes compared")
			}
		})
	}
}
