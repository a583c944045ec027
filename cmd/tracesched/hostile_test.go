package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
