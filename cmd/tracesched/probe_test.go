package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/device"
)

// probe of a FILE that does not exist creates it zero-filled, writes to
// it (it holds no data), and saves a model with read, write and flush
// classes that replay --device takes, whose coverage names the target
// and the machine's load; stdout has the fit and a row per cell.
func TestProbeNewFileModel(t *testing.T) {
	dir := t.TempDir()
	if f, err := os.Create(filepath.Join(dir, "dio")); err == nil {
		f.Close()
		if g, err := device.OpenDirect(f.Name(), false); errors.Is(err, device.ErrDirectIO) {
			t.Skip("direct I/O refused here")
		} else if err == nil {
			g.Close()
		}
	}
	img, out := filepath.Join(dir, "probe.img"), filepath.Join(dir, "dev.json")
	stdout, errOut, code := run(t, "probe", img, "-o", out, "--budget", "1s", "--size", "67108864")
	if code != exitOK {
		t.Fatalf("probe: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "created "+img) || strings.Contains(errOut, "reads only") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if !strings.Contains(stdout, "flush after a 4k write") || !strings.Contains(stdout, "model mean") {
		t.Errorf("stdout has no table of cells:\n%s", stdout)
	}
	m := loadDeviceModel(t, out)
	n := m.NonRotational
	if m.Kind != device.KindNonRotational || n.Read == nil || n.Write == nil || n.Other == nil || n.Batching != nil {
		t.Fatalf("model %+v: want read, write and flush classes and no batching", n)
	}
	if c := m.Coverage; c == nil || len(c.Ops) != 3 || len(c.Sources) != 1 || !strings.HasPrefix(c.Sources[0], "probe "+img+" at ") {
		t.Errorf("coverage %+v", m.Coverage)
	}
	if _, errOut, code := run(t, "replay", "--sched", "none", "--device", out, fixture(t, "fx-mqdl-rw-nocg")); code != exitOK {
		t.Errorf("replay --device: exit %d: %s", code, errOut)
	}
}
