package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
)

// Issue 14 item 2: a device.json with per_byte_ns 1e300 is refused before
// -o commits anything.
func TestReplayRefusesUnphysicalDeviceBeforeOutput(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "device.json")
	os.WriteFile(dev, []byte(`{"version": 2, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "saturation_slope": 0,
 "read": {"base_ns": 50000, "per_byte_ns": 1e300, "n": 1, "residual": {"p": [], "x": []}}}}`), 0o644)
	out := filepath.Join(dir, "pred.arrow")
	_, errOut, code := run(t, "replay", "--sched", "none", "--device", dev, "-o", out, fixture(t, "fx-mqdl-rw-nocg"))
	if code != exitError || !strings.Contains(errOut, "per_byte_ns") {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming per_byte_ns", code, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the output directory, want only device.json", len(ents))
	}
}

// Issue 14 item 11: calibrate --kind rotational wrote overhead_ns -3967 on
// fx-mqdl-rw-nocg; every fixed cost it writes is now >= 0 and Load reads
// the file back.
func TestCalibrateRotationalWritesNoNegativeCost(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rot.json")
	_, errOut, code := run(t, "calibrate", "--kind", "rotational", "-o", out, fixture(t, "fx-mqdl-rw-nocg"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Rotational map[string]any `json:"rotational"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"overhead_ns", "seq_base_ns", "seek_long_base_ns", "revolution_ns"} {
		v, ok := m.Rotational[k].(float64)
		if !ok {
			t.Errorf("%s missing from %s", k, b)
		} else if v < 0 {
			t.Errorf("%s = %v < 0", k, v)
		}
	}
	if _, errOut, code := run(t, "replay", "--sched", "none", "--device", out, fixture(t, "fx-mqdl-rw-nocg")); code != exitOK {
		t.Errorf("replay with the calibrated model: exit %d: %s", code, errOut)
	}
}

// Issue 14 item 12: two real runs of one workload (recorded/a-bfq-w100-900
// and a-bfq-w300-700: the same fio jobs, other pids and cgroup ids) share
// no bio. With --map none nothing is compared and the report says so
// (null in JSON); by default the processes are paired by command and
// start order and the runs compared.
func TestDiffTwoRealRuns(t *testing.T) {
	a := shared.Path(t, "captures", "recorded", "a-bfq-w100-900")
	b := shared.Path(t, "captures", "recorded", "a-bfq-w300-700")
	out, errOut, code := run(t, "diff", "--json", "--map", "none", a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m struct {
		Identity      struct{ Matched int } `json:"identity"`
		DispatchOrder map[string]any        `json:"dispatch_order"`
		ThinkTime     map[string]any        `json:"think_time"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if tau, ok := m.DispatchOrder["kendall_tau"]; m.Identity.Matched != 0 || !ok || tau != nil {
		t.Errorf("--map none: matched %d, kendall_tau %v (present %v): want 0 and null", m.Identity.Matched, tau, ok)
	}
	if ag, ok := m.ThinkTime["agreement"]; !ok || ag != nil {
		t.Errorf("--map none: think_time.agreement %v (present %v), want null", ag, ok)
	}
	out, errOut, code = run(t, "diff", "--json", a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "2 processes paired by command name") {
		t.Errorf("stderr %q: want the pairing announced", errOut)
	}
	m.Identity.Matched = 0
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	// Each run has two fio jobs (one per cgroup); the first 17,481 bios of
	// the paired jobs line up (the w300-700 run moved fewer bios).
	if m.Identity.Matched < 10000 {
		t.Errorf("mapped: %d bios matched, want the runs lined up", m.Identity.Matched)
	}
	tau, ok := m.DispatchOrder["kendall_tau"].(float64)
	if !ok || tau >= 0.99 {
		t.Errorf("mapped: kendall_tau %v: want a number, and two weightings that dispatch differently", m.DispatchOrder["kendall_tau"])
	}
	if _, _, code := run(t, "diff", "--map", "bogus", a, b); code != exitUsage {
		t.Errorf("--map bogus: exit %d, want %d", code, exitUsage)
	}
	if _, _, code := run(t, "diff", "--map-pid", "x=1", a, b); code != exitUsage {
		t.Errorf("--map-pid x=1: exit %d, want %d", code, exitUsage)
	}
}
