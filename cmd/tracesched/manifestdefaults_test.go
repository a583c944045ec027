package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// weightsOf decodes replay --json's cgroups[].weight by id.
func weightsOf(t *testing.T, out string) map[uint64]int {
	t.Helper()
	var res struct {
		Cgroups []struct {
			ID     uint64 `json:"id"`
			Weight int    `json:"weight"`
		} `json:"cgroups"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	w := map[uint64]int{}
	for _, c := range res.Cgroups {
		w[c.ID] = c.Weight
	}
	return w
}

// fixtures/fx-bfq-2cg-w100-900 carries the rig's manifest (BFQ, cgroups 1181
// and 1201 weighted 100 and 900): replay needs no flags, an explicit
// --weight overrides one cgroup, --no-manifest drops them all, and a
// converted event file keeps the manifest.
func TestReplayDefaultsFromManifest(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	out, errOut, code := run(t, "replay", "--json", in)
	if code != exitOK {
		t.Fatalf("replay with no flags: exit %d: %s", code, errOut)
	}
	if w := weightsOf(t, out); w[1181] != 100 || w[1201] != 900 {
		t.Errorf("weights %v, want 1181=100 1201=900 from the manifest", w)
	}
	for _, want := range []string{"scheduler bfq (manifest)", "weight 1181=100", "rotational=1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	out, errOut, code = run(t, "replay", "--json", "--weight", "1181=500", in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if w := weightsOf(t, out); w[1181] != 500 || w[1201] != 900 {
		t.Errorf("weights %v, want 1181=500 (--weight) 1201=900 (manifest)", w)
	}
	if !strings.Contains(errOut, "--weight: weight 1181=500") {
		t.Errorf("stderr does not credit --weight:\n%s", errOut)
	}
	if _, errOut, code := run(t, "replay", "--no-manifest", in); code != exitUsage || !strings.Contains(errOut, "--sched") {
		t.Errorf("--no-manifest without --sched: exit %d (%s), want 2 asking for --sched", code, errOut)
	}
	out, _, code = run(t, "replay", "--json", "--sched", "bfq", "--no-manifest", in)
	if w := weightsOf(t, out); code != exitOK || w[1181] == 100 || w[1201] == 900 {
		t.Errorf("--no-manifest: exit %d, weights %v; want none from the manifest", code, w)
	}

	dir := t.TempDir()
	ev := filepath.Join(dir, "ev.arrow")
	if _, errOut, code := run(t, "convert", in, "-o", filepath.Join(dir, "req.arrow"), "--events", ev); code != exitOK {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	out, errOut, code = run(t, "replay", "--json", ev)
	if code != exitOK {
		t.Fatalf("replay of the converted events with no flags: exit %d: %s", code, errOut)
	}
	if w := weightsOf(t, out); w[1181] != 100 || w[1201] != 900 {
		t.Errorf("converted: weights %v, want 1181=100 1201=900", w)
	}
}

// A mq-deadline capture replayed through BFQ takes the device's settings,
// not mq-deadline's tunables.
func TestReplayOtherSchedulerSkipsTunables(t *testing.T) {
	_, errOut, code := run(t, "replay", "--json", "--sched", "bfq", fixture(t, "fx-mqdl-rw-nocg"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "ran under mq-deadline: its tunables are not applied to the bfq model") || strings.Contains(errOut, "read_expire") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
