package blktrace

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// manifestCounts returns event_counts.by_action of a capture's manifest.json.
func manifestCounts(tb testing.TB, dir string) map[string]int {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		EventCounts struct {
			ByAction map[string]int `json:"by_action"`
		} `json:"event_counts"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m.EventCounts.ByAction
}

// countInput streams name and counts events by action without keeping them.
func countInput(tb testing.TB, name string) (map[string]int, *Input) {
	tb.Helper()
	in, err := Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close() })
	var counts [256]int
	last := trace.Time(-1 << 62)
	for n := 0; ; n++ {
		ev, err := in.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("%s: after %d events: %v", name, n, err)
		}
		if err := ev.Validate(); err != nil {
			tb.Fatalf("%s: event %d: %v", name, n, err)
		}
		if ev.Time < last {
			tb.Fatalf("%s: event %d at %v before %v", name, n, ev.Time, last)
		}
		last = ev.Time
		counts[ev.Action]++
	}
	m := map[string]int{}
	for a, n := range counts {
		if n > 0 && trace.Action(a) != trace.ActionProcess && trace.Action(a) != trace.ActionTimestamp {
			m[trace.Action(a).Letter()] = n
		}
	}
	return m, in
}

func TestCountsFixtures(t *testing.T) {
	for _, fx := range fixtureNames {
		t.Run(fx, func(t *testing.T) {
			dir := shared.Fixture(t, fx)
			got, in := countInput(t, dir)
			if want := manifestCounts(t, dir); !maps.Equal(got, want) {
				t.Errorf("by action: got %v, manifest %v", got, want)
			}
			d := in.Diagnostics()
			if len(d.Files) != 2 || len(d.MissingCPUFiles) != 0 || d.DroppedEvents != 0 || d.CPUMismatch != 0 || d.Format != "blktrace+zstd" {
				t.Errorf("diagnostics %+v", d)
			}
			if m := in.Meta(); m.Source != "blktrace" || len(m.Devices) != 1 || m.Devices[0] != trace.MkDev(7, 1) || m.Origin == 0 || m.WallSec == 0 {
				t.Errorf("meta %+v", m)
			}
		})
	}
}

// TestCountsRecorded checks every recorded capture (about 12 M records)
// against its manifest. Skipped with -short and without ../shared.
func TestCountsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads ~12 M records")
	}
	root := shared.Path(t, "captures", "recorded")
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "manifest.json"))
	if len(dirs) == 0 {
		t.Skip("no recorded captures")
	}
	for _, mf := range dirs {
		dir := filepath.Dir(mf)
		if m, _ := filepath.Glob(filepath.Join(dir, "*.blktrace.*")); len(m) == 0 {
			continue // baselines-untraced
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got, in := countInput(t, dir)
			if want := manifestCounts(t, dir); !maps.Equal(got, want) {
				t.Errorf("by action: got %v, manifest %v", got, want)
			}
			if d := in.Diagnostics(); d.DroppedEvents != 0 || d.CPUMismatch != 0 || len(d.MissingCPUFiles) != 0 {
				t.Errorf("diagnostics %+v", d)
			}
		})
	}
}

// blkparseCounts runs Debian's blkparse 1.2.0 and counts its event lines
// by action with our own TextReader. stdin, when set, is fed in pipe mode.
func blkparseCounts(t *testing.T, stdin string, args ...string) map[string]int {
	t.Helper()
	bin, err := exec.LookPath("blkparse")
	if err != nil {
		t.Skip("blkparse not installed")
	}
	cmd := exec.Command(bin, args...)
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("blkparse %v: %v", args, err)
	}
	// Drop "Input file ... added" noise is handled by the reader.
	tr, err := NewTextReader(strings.NewReader(string(out)), "blkparse-output")
	if err != nil {
		t.Fatal(err)
	}
	return countActions(readAll(t, tr))
}

// TestCountsPublic compares the public captures with blkparse 1.2.0: equal
// where blkparse reads everything, and differing by exactly the records it
// drops (CPU-mismatched records, files after a missing CPU file).
func TestCountsPublic(t *testing.T) {
	pub := shared.Path(t, "captures", "public")
	t.Run("keks-discard", func(t *testing.T) {
		set := filepath.Join(pub, "keks-discard", "keks")
		got, _ := countInput(t, set)
		if want := blkparseCounts(t, "", "-i", set); !maps.Equal(got, want) {
			t.Errorf("got %v, blkparse %v", got, want)
		}
	})
	t.Run("centos7-dm-remap", func(t *testing.T) {
		set := filepath.Join(pub, "centos7-dm-remap", "sda")
		got, in := countInput(t, set)
		if want := blkparseCounts(t, "", "-i", set); !maps.Equal(got, want) {
			t.Errorf("got %v, blkparse %v", got, want)
		}
		if m := in.Meta(); len(m.Devices) != 2 {
			t.Errorf("devices %v", m.Devices)
		}
	})
	t.Run("nvme-sample", func(t *testing.T) {
		set := filepath.Join(pub, "nvme-sample", "sample")
		evs, in := openAll(t, set)
		got := countActions(evs)
		want := blkparseCounts(t, "", "-i", set) // 0 entries: every record says cpu 1
		d := in.Diagnostics()
		if len(want) != 0 || d.CPUMismatch != uint64(len(evs)) || d.CPUMismatch != 6743 {
			t.Errorf("blkparse %v; mismatch %d of %d records", want, d.CPUMismatch, len(evs))
		}
		// Pipe mode does not check the cpu field: there blkparse reads them all.
		if pipe := blkparseCounts(t, filepath.Join(pub, "nvme-sample", "sample.blktrace.0"), "-i", "-"); !maps.Equal(got, pipe) {
			t.Errorf("got %v, blkparse pipe mode %v", got, pipe)
		}
	})
	t.Run("hadoop-node8", func(t *testing.T) {
		set := filepath.Join(pub, "hadoop-node8", "sdb")
		in, err := Open(set)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		first, all := map[string]int{}, map[string]int{}
		rest := 0
		for {
			ev, err := in.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ev.Validate(); err != nil {
				t.Fatal(err)
			}
			if ev.Action == trace.ActionProcess || ev.Action == trace.ActionTimestamp {
				continue
			}
			all[ev.Action.Letter()]++
			if ev.CPU <= 1 {
				first[ev.Action.Letter()]++
			} else {
				rest++
			}
		}
		d := in.Diagnostics()
		if len(d.MissingCPUFiles) != 1 || d.MissingCPUFiles[0] != 2 || len(d.Files) != 39 || d.CPUMismatch != 0 {
			t.Fatalf("diagnostics %+v", d)
		}
		// blkparse stops at the missing .2: it reads CPUs 0 and 1 only.
		want := blkparseCounts(t, "", "-i", set)
		if !maps.Equal(first, want) {
			t.Errorf("CPUs 0-1: got %v, blkparse %v", first, want)
		}
		if rest < 600000 {
			t.Errorf("only %d events beyond what blkparse reads", rest)
		}
		total := 0
		for _, n := range all {
			total += n
		}
		t.Logf("%d events, %d of them in files blkparse skips; dropped (sequence gaps) %d", total, rest, d.DroppedEvents)
	})
	for _, dump := range []string{"trace_x_0_y_0.bin", "trace_x_1_y_2.bin"} {
		t.Run("loop-dumps/"+dump, func(t *testing.T) {
			p := filepath.Join(pub, "loop-dumps", dump)
			evs, in := openAll(t, p)
			if want := blkparseCounts(t, p, "-i", "-"); !maps.Equal(countActions(evs), want) {
				t.Errorf("got %v, blkparse %v", countActions(evs), want)
			}
			if m := in.Meta(); m.Source != "blkparse-dump" || m.WallSec == 0 {
				t.Errorf("meta %+v", m)
			}
			// The absolute PROCESS/TIMESTAMP notes at the front are clamped to 0.
			for _, ev := range evs {
				if ev.Time < 0 || ev.Time > 1e12 {
					t.Fatalf("event time %v out of range: %+v", ev.Time, ev)
				}
			}
		})
	}
	for _, txt := range []string{"text-wiscsee/blkparse-output.txt", "text-leveldb/blk_data.txt"} {
		t.Run(txt, func(t *testing.T) {
			p := filepath.Join(pub, txt)
			evs, in := openAll(t, p)
			raw, _ := os.ReadFile(p)
			lines := 0
			for _, l := range strings.Split(string(raw), "\n") {
				if f := strings.Fields(l); len(f) > 5 && isDevToken(f[0]) {
					lines++
				}
			}
			if len(evs) != lines || lines == 0 {
				t.Errorf("%d events from %d event lines", len(evs), lines)
			}
			if m := in.Meta(); m.Source != "blkparse-text" || m.Origin != 0 {
				t.Errorf("meta %+v", m)
			}
		})
	}
}
