package main

import (
	"encoding/json"
	"os"
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

// Issues 11 and 12: the ioprio a manifest recorded reaches the replay. On
// fx-mqdl-rw-nocg (two fio processes, each always backlogged) a manifest
// that puts pid 23657 in the idle class makes BFQ serve it only when the
// best-effort process has nothing queued (bfq_lookup_next_entity serves
// IOPRIO_CLASS_IDLE last, save a 200 ms starvation guard): over the
// window where both are busy its share falls from half to almost nothing.
// An explicit --ioprio overrides the manifest.
func TestReplayIOPrioFromManifest(t *testing.T) {
	src := filepath.Dir(fixture(t, "fx-mqdl-rw-nocg"))
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "manifest.json" {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["processes"] = []map[string]any{
				{"pid": 23657, "comm": "fio", "ioprio": 3 << 13, "ioprio_text": "idle"},
				{"pid": 23658, "comm": "fio", "ioprio": 2<<13 | 4, "ioprio_text": "best-effort/4"},
			}
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(dir, "fx-mqdl-rw-nocg")
	share := func(args ...string) (float64, string) {
		t.Helper()
		out, errOut, code := run(t, append([]string{"replay", "--sched", "bfq", "--json"}, append(args, in)...)...)
		if code != exitOK {
			t.Fatalf("replay: exit %d: %s", code, errOut)
		}
		var js struct {
			Processes []struct {
				PID   uint32  `json:"pid"`
				Share float64 `json:"predicted_share"`
			} `json:"processes"`
		}
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		for _, p := range js.Processes {
			if p.PID == 23657 {
				return p.Share, errOut
			}
		}
		t.Fatalf("pid 23657 absent from processes[]: %s", out)
		return 0, ""
	}
	idle, errOut := share()
	if idle > 0.1 || !strings.Contains(errOut, "ioprio from the manifest: 23657=idle") {
		t.Errorf("idle class from the manifest: predicted share %.3f (want under 0.1), stderr %q", idle, errOut)
	}
	if be, _ := share("--ioprio", "23657=be/4"); be < 0.4 || be > 0.6 {
		t.Errorf("--ioprio 23657=be/4 over the manifest: predicted share %.3f, want about half", be)
	}
}
