package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
)

// A replay states where it drives the device model beyond what the
// model's calibration saw. fx-bfq-4seqread holds 4 KiB reads only, one or
// two on the device at a time; fx-mqdl-rw-nocg is a 4 KiB random reader
// at iodepth 8 and a writer at iodepth 4, 600 reads and 600 writes by
// fio's own counts (its fio.json), so replayed through none with the
// first capture's model, 50.0 % of the predicted requests are writes the
// calibration never saw, and some are issued deeper than two. The
// statement is on stderr, in the JSON and in the text report; with its
// own calibration, which saw the writes, it says nothing of writes.
func TestReplayStatesExtrapolation(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "seqread.json")
	if _, errOut, code := run(t, "calibrate", "-o", model, fixture(t, "fx-bfq-4seqread")); code != exitOK {
		t.Fatalf("calibrate: exit %d: %s", code, errOut)
	}
	in := fixture(t, "fx-mqdl-rw-nocg")
	out, errOut, code := run(t, "replay", "--sched", "none", "--device", model, "--json", in)
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	var js struct {
		DeviceExtrapolation []string `json:"device_extrapolation"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	const writes = "50.0% of the predicted requests are writes, which the calibration never saw"
	var depth, ops bool
	for _, s := range js.DeviceExtrapolation {
		if !strings.Contains(errOut, "device model extrapolates: "+s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
		depth = depth || strings.Contains(s, "at depths the calibration did not see") && strings.Contains(s, "it saw up to 2)")
		ops = ops || strings.HasPrefix(s, writes)
	}
	if !depth || !ops {
		t.Errorf("device_extrapolation = %q, want the writes (%q) and the depths beyond 2", js.DeviceExtrapolation, writes)
	}
	text, _, code := run(t, "replay", "--sched", "none", "--device", model, in)
	if code != exitOK || !strings.Contains(text, "device model extrapolates: "+writes) {
		t.Errorf("the text report (exit %d) does not state the extrapolation:\n%s", code, text)
	}

	own, errOwn, code := run(t, "replay", "--sched", "mq-deadline", "--no-cache", "--json", in)
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOwn)
	}
	js.DeviceExtrapolation = nil
	if err := json.Unmarshal([]byte(own), &js); err != nil {
		t.Fatal(err)
	}
	if js.DeviceExtrapolation == nil || strings.Contains(strings.Join(js.DeviceExtrapolation, " "), "writes") || strings.Contains(errOwn, "writes, which") {
		t.Errorf("its own calibration: device_extrapolation %q, stderr %q", js.DeviceExtrapolation, errOwn)
	}
}

// A --device model saved without coverage cannot be checked: stderr says
// so rather than nothing.
func TestReplayModelWithoutCoverage(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	if _, errOut, code := run(t, "calibrate", "-o", model, fixture(t, "fx-bfq-4seqread")); code != exitOK {
		t.Fatalf("calibrate: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "coverage")
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "replay", "--sched", "none", "--device", model, fixture(t, "fx-mqdl-rw-nocg"))
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "no coverage") || strings.Contains(errOut, "extrapolates:") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// The sustained load. recorded/b-mqdl-w100-900 held the loop device at
// about 21 requests (two fio readers at iodepth 16 under mq-deadline), and
// its issues saw every count from 1 to 32, so the counts at issue say
// nothing when BFQ, serving one cgroup at a time, holds it near 11 (its
// weight-900 reader): the real BFQ's p50 on that job was a quarter of the
// capture's (recorded/a-bfq-w100-900: 0.075 ms against 0.297), which the
// model, fitted at 21, cannot know. The replay must say so; through
// mq-deadline, at the capture's own load, it must not.
func TestReplayStatesSustainedLoad(t *testing.T) {
	in := filepath.Join(shared.Path(t, "captures", "recorded", "b-mqdl-w100-900"), "b-mqdl-w100-900")
	const sentence = "the median predicted 10ms window held about"
	extrapolation := func(args ...string) []string {
		out, errOut, code := run(t, append([]string{"replay", "--json"}, append(args, in)...)...)
		if code != exitOK {
			t.Fatalf("replay %q: exit %d: %s", args, code, errOut)
		}
		var js struct {
			DeviceExtrapolation []string `json:"device_extrapolation"`
		}
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		return js.DeviceExtrapolation
	}
	whatIf := extrapolation("--sched", "bfq", "--weight", "421=100", "--weight", "441=900")
	found := false
	for _, s := range whatIf {
		if strings.Contains(s, sentence) {
			found = true
			t.Logf("%s", s)
			if !strings.Contains(s, "100% of the predicted windows are outside") {
				t.Errorf("%q: want every predicted window outside the capture's load", s)
			}
		}
		if strings.Contains(s, "at depths the calibration did not see") {
			t.Errorf("%q: the capture's issues saw every count up to 32", s)
		}
	}
	if !found {
		t.Errorf("through BFQ: device_extrapolation %q, want the sustained load", whatIf)
	}
	for _, s := range extrapolation("--sched", "mq-deadline") {
		if strings.Contains(s, sentence) {
			t.Errorf("through mq-deadline, at the capture's load: %q", s)
		}
	}
}
