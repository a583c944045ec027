package device

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// Issue 14 item 2/11: device.json values that passed Validate made a
// replay's times overflow or explode; each is refused by Load with the
// field named.
func TestLoadRefusesUnphysicalValues(t *testing.T) {
	nonrot := func(read string) string {
		return `{"version": 2, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "saturation_slope": 0, "read": ` + read + `}}`
	}
	rot := func(fields string) string {
		return `{"version": 2, "kind": "rotational", "rotational": {` + fields + `}}`
	}
	for _, c := range []struct{ name, json, want string }{
		{"per_byte_ns 1e300", nonrot(`{"base_ns": 50000, "per_byte_ns": 1e300, "n": 1, "residual": {"p": [], "x": []}}`), "per_byte_ns"},
		{"base_ns 2^62", nonrot(`{"base_ns": 4611686018427387904, "per_byte_ns": 1, "n": 1, "residual": {"p": [], "x": []}}`), "base_ns"},
		{"residual 1e200", nonrot(`{"base_ns": 1000, "per_byte_ns": 1, "n": 1, "residual": {"p": [0, 1], "x": [1, 1e200]}}`), "multiplier"},
		{"negative overhead", rot(`"overhead_ns": -3967, "revolution_ns": 1000`), "overhead_ns -3967 is negative"},
		{"negative seq_base", rot(`"seq_base_ns": -1`), "seq_base_ns -1 is negative"},
		{"negative seek_long_base", rot(`"seek_long_base_ns": -5`), "seek_long_base_ns -5 is negative"},
		{"revolution 2^62", rot(`"revolution_ns": 4611686018427387904`), "revolution_ns"},
		{"seek_sqrt 1e12", rot(`"seek_sqrt_ns": 1e12`), "seek_sqrt_ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load: %v, want an error naming %q", err, c.want)
			}
		})
	}
	// The bounds refuse nothing real: a 7200 rpm disk (8.3 ms revolution,
	// 4 ms overhead, 100 MB/s) passes.
	ok := rot(`"overhead_ns": 4000000, "seek_sqrt_ns": 500, "revolution_ns": 8333333, "per_byte_ns": 10, "write_ns": -200000`)
	if _, err := Load(strings.NewReader(ok)); err != nil {
		t.Errorf("a real disk's model refused: %v", err)
	}
}

// Issue 14 "also seen": calibrate said 0 usable requests on a D/C-only
// capture (public/keks-discard: no Q, so every request is FlagNoQueue)
// while stats shows 1,182 D2C. A request whose D and C are both in the
// capture is a D2C sample whatever its Q, the flush machinery's own
// flushes included (the "other" class times them: fs-bfq-fsync-vs-seqread
// has 4,286 of them, D2C mean 277 us, and no flush bio of its own but
// four); passthrough requests are not.
func TestPrepareKeepsRequestsWithoutQ(t *testing.T) {
	var reqs []trace.Request
	for i := 0; i < 50; i++ {
		t0 := trace.Time(i) * 1e6
		reqs = append(reqs, trace.Request{ID: uint64(i + 1), Sector: uint64(i) * 8, Bytes: 4096, Cat: trace.CatRead,
			Flags: trace.FlagNoQueue, Queue: trace.NoTime, Get: trace.NoTime, Insert: trace.NoTime, Issue: t0, Complete: t0 + 100e3})
	}
	// A kernel-made flush with no Q: a sample.
	reqs = append(reqs, trace.Request{ID: 51, Cat: trace.CatFlush | trace.CatWrite, Flags: trace.FlagNoQueue,
		Queue: trace.NoTime, Get: trace.NoTime, Insert: trace.NoTime, Issue: 60e6, Complete: 61e6})
	// A passthrough request with no Q: not a sample.
	reqs = append(reqs, trace.Request{ID: 52, Cat: trace.CatPC, Flags: trace.FlagNoQueue,
		Queue: trace.NoTime, Get: trace.NoTime, Insert: trace.NoTime, Issue: 62e6, Complete: 63e6})
	c := prepare(reqs)
	if len(c.samples) != 51 || c.skipped != 1 {
		t.Errorf("%d samples, %d skipped; want the 50 D/C requests and the flush, the passthrough skipped", len(c.samples), c.skipped)
	}
	if _, _, err := Calibrate(reqs, CalibrateOptions{}); err != nil {
		t.Errorf("Calibrate on a D/C-only capture: %v", err)
	}
}
