package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace/arrowfile"
)

func TestConvertWritesReadableStreams(t *testing.T) {
	dir := t.TempDir()
	in := fixture(t, "fx-bfq-4seqread")
	req, ev := filepath.Join(dir, "r.arrow"), filepath.Join(dir, "e.arrow")
	if _, errOut, code := run(t, "convert", in, "-o", req, "--events", ev); code != exitOK {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	// The request stream holds as many requests as stats counts.
	f, err := os.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := arrowfile.OpenRequests(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	n := 0
	for {
		if _, err := rr.ReadRequest(); err != nil {
			break
		}
		n++
	}
	out, _, code := run(t, "stats", "--json", in)
	if code != exitOK {
		t.Fatal("stats failed")
	}
	var s struct {
		Requests struct{ Total int } `json:"requests"`
		Events   struct{ Total int } `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != s.Requests.Total {
		t.Errorf("request stream has %d requests, stats counts %d", n, s.Requests.Total)
	}
	// The event stream reads back as an input with the same summary.
	out2, _, code := run(t, "stats", "--json", ev)
	if code != exitOK {
		t.Fatal("stats on the event stream failed")
	}
	if out2 != out {
		t.Errorf("stats of the Arrow event stream differs from stats of the capture")
	}
	// The request stream is smaller than the capture it came from.
	var raw int64
	ms, _ := filepath.Glob(in + ".blktrace.*")
	for _, m := range ms {
		fi, _ := os.Stat(m)
		raw += fi.Size()
	}
	if fi, _ := os.Stat(req); fi.Size() >= raw {
		t.Errorf("request stream %d bytes, compressed capture %d bytes", fi.Size(), raw)
	}
}

func TestConvertLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.blktrace.0")
	// A valid record header followed by a truncated payload.
	rec := make([]byte, 48)
	copy(rec, []byte{0x07, 0x74, 0x61, 0x65})
	rec[46] = 200 // pdu_len 200, but no payload follows
	if err := os.WriteFile(bad, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.arrow")
	_, errOut, code := run(t, "convert", bad, "-o", out, "--events", filepath.Join(dir, "ev.arrow"))
	if code != exitError {
		t.Fatalf("exit %d, want 1 (stderr %q)", code, errOut)
	}
	if !strings.Contains(errOut, "bad.blktrace.0") || !strings.Contains(errOut, "offset") {
		t.Errorf("error %q does not say where", errOut)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "bad.blktrace.0" {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestReplayIsDeterministic(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	dir := t.TempDir()
	var outs [2][]byte
	var jsons [2]string
	for i := range outs {
		p := filepath.Join(dir, "p"+string(rune('0'+i))+".arrow")
		stdout, errOut, code := run(t, "replay", "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", "--json", "-o", p, in)
		if code != exitOK {
			t.Fatalf("replay: exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outs[i], jsons[i] = b, stdout
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two replays wrote different predicted event files")
	}
	if jsons[0] != jsons[1] {
		t.Error("two replays printed different JSON")
	}
}

// replayJSON runs replay --json and decodes the keys docs/cli.md promises.
func replayJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errOut, code := run(t, append([]string{"replay", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("replay %v: exit %d: %s", args, code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("replay --json: %v", err)
	}
	for _, path := range []string{"scheduler", "kernel", "requests", "wall_seconds", "simulated_seconds",
		"dispatch_order.kendall_tau", "dispatch_order.mean_displacement", "dispatch_order.divergences",
		"cgroups", "merges.real_back", "merges.predicted_back", "merges.real_front", "merges.predicted_front",
		"merges.real_queue_merges", "merges.predicted_queue_merges",
		"think_time.agreement", "think_time.queues", "think_time.real_short", "think_time.predicted_short",
		"latency.d2c_demerit", "latency.q2c_demerit"} {
		var v any = m
		for _, k := range strings.Split(path, ".") {
			obj, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = obj[k]
		}
		if v == nil {
			t.Errorf("replay --json lacks %s", path)
		}
	}
	return m
}

// shares holds one figure by cgroup id; at fails the test on an id the
// output does not have, so that a missing cgroup never reads as 0.
type shares struct {
	t   *testing.T
	key string
	m   map[float64]float64
}

func (s shares) at(id float64) float64 {
	s.t.Helper()
	v, ok := s.m[id]
	if !ok {
		s.t.Fatalf("cgroup %v absent from the output's cgroups (looking for %s)", id, s.key)
	}
	return v
}

// cgroupShares returns the figure key (real_share, predicted_share) by
// cgroup id; a cgroups entry lacking a key, or a key that is not a number,
// fails the test.
func cgroupShares(t *testing.T, m map[string]any, key string) shares {
	t.Helper()
	out := shares{t: t, key: key, m: map[float64]float64{}}
	cgs, ok := m["cgroups"].([]any)
	if !ok || len(cgs) == 0 {
		t.Fatalf("no cgroups in the output")
	}
	for _, c := range cgs {
		o, ok := c.(map[string]any)
		if !ok {
			t.Fatalf("cgroups[] entry %v is not an object", c)
		}
		for _, k := range []string{"id", "path", "weight", "real_mib_per_s", "predicted_mib_per_s", "real_share", "predicted_share"} {
			if _, ok := o[k]; !ok {
				t.Errorf("cgroups[] entry lacks %s", k)
			}
		}
		id, ok1 := o["id"].(float64)
		v, ok2 := o[key].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("cgroups[] entry %v: id or %s not a number", o, key)
		}
		out.m[id] = v
	}
	return out
}

// The diff's headline figures tell BFQ with weights 100:900 from
// mq-deadline on the same capture: BFQ predicts the real, skewed shares;
// mq-deadline, which ignores weights, predicts shares near one half.
func TestReplayTellsSchedulersApart(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	bfqRes := replayJSON(t, "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", in)
	mqRes := replayJSON(t, "--sched", "mq-deadline", in)
	real := cgroupShares(t, bfqRes, "real_share")
	bfq := cgroupShares(t, bfqRes, "predicted_share")
	mq := cgroupShares(t, mqRes, "predicted_share")
	if real.at(1201) < 0.8 {
		t.Fatalf("the capture's heavy cgroup has share %.3f; expected about 0.88", real.at(1201))
	}
	if d := bfq.at(1201) - real.at(1201); d > 0.05 || d < -0.05 {
		t.Errorf("bfq predicts share %.3f for the weight-900 cgroup, real %.3f", bfq.at(1201), real.at(1201))
	}
	if mq.at(1201) > 0.75 {
		t.Errorf("mq-deadline predicts share %.3f for the weight-900 cgroup; it ignores weights", mq.at(1201))
	}
}

func TestReplayListFeatures(t *testing.T) {
	out, _, code := run(t, "replay", "--sched", "bfq", "--list-features")
	if code != exitOK || !strings.Contains(out, "stable-merge") || !strings.Contains(out, "6.18") {
		t.Errorf("bfq --list-features: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "replay", "--sched", "cfq", "--list-features")
	if code != exitOK || !strings.Contains(out, "4.13") {
		t.Errorf("cfq --list-features: exit %d\n%s", code, out)
	}
	if _, _, code := run(t, "replay", "--sched", "nope", "x"); code != exitUsage {
		t.Errorf("unknown scheduler: exit %d, want 2", code)
	}
	if _, _, code := run(t, "replay", "--sched", "bfq", "--weight", "1181=5000", fixture(t, "fx-bfq-2cg-w100-900")); code != exitUsage {
		t.Errorf("weight out of range: exit %d, want 2", code)
	}
}

func TestTUINeedsATerminal(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	if _, errOut, code := run(t, "tui", in); code != exitUsage || !strings.Contains(errOut, "terminal") {
		t.Errorf("tui without a terminal: exit %d, stderr %q; want 2 and a word about the terminal", code, errOut)
	}
	if _, _, code := run(t, "replay", "--sched", "none", "--tui", "--json", in); code != exitUsage {
		t.Errorf("--tui with --json: exit %d, want 2", code)
	}
	if _, errOut, code := run(t, "tui", "--view", "bogus", in); code != exitUsage || !strings.Contains(errOut, `invalid --view "bogus"`) || !strings.Contains(errOut, "queues") {
		t.Errorf("tui --view bogus: exit %d, stderr %q; want 2 and the views' names", code, errOut)
	}
}

func TestReplayQueueAttributesReachEveryModel(t *testing.T) {
	in := fixture(t, "fx-mqdl-rw-nocg")
	for _, sched := range []string{"none", "mq-deadline", "bfq", "cfq"} {
		if _, errOut, code := run(t, "replay", "--sched", sched, "--set", "rotational=0", "--set", "nr_requests=64", "--json", in); code != exitOK {
			t.Errorf("%s with queue attributes: exit %d: %s", sched, code, errOut)
		}
	}
	if _, errOut, code := run(t, "replay", "--sched", "mq-deadline", "--set", "no_such_tunable=1", in); code != exitUsage {
		t.Errorf("an unknown tunable was accepted (stderr %q)", errOut)
	}
}

// The same on a recorded capture (1.5 s, 54k requests): BFQ with the
// capture's weights 100:900 predicts the skewed shares the kernel gave,
// mq-deadline shares near one half.
func TestReplayTellsSchedulersApartRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a recorded capture twice")
	}
	dir := shared.Path(t, "captures", "recorded", "a-bfq-w100-900")
	in := filepath.Join(dir, "a-bfq-w100-900")
	bfqRes := replayJSON(t, "--sched", "bfq", "--weight", "301=100", "--weight", "321=900", in)
	mqRes := replayJSON(t, "--sched", "mq-deadline", in)
	real := cgroupShares(t, bfqRes, "real_share")
	bfq := cgroupShares(t, bfqRes, "predicted_share")
	mq := cgroupShares(t, mqRes, "predicted_share")
	t.Logf("weight-900 cgroup share: real %.3f, bfq %.3f, mq-deadline %.3f", real.at(321), bfq.at(321), mq.at(321))
	if d := bfq.at(321) - real.at(321); d > 0.03 || d < -0.03 {
		t.Errorf("bfq predicts share %.3f for the weight-900 cgroup, real %.3f", bfq.at(321), real.at(321))
	}
	if mq.at(321) > 0.6 || mq.at(321) < 0.4 {
		t.Errorf("mq-deadline predicts share %.3f for the weight-900 cgroup; it ignores weights", mq.at(321))
	}
}

// TestOneCaptureGivenTwice: any file of a per-CPU set opens the whole set,
// so the two per-CPU files of one capture given together read it twice
// (convert wrote fx-bfq-4seqread's 384 requests as 768). convert and
// calibrate refuse it as a usage error and write nothing.
func TestOneCaptureGivenTwice(t *testing.T) {
	in := fixture(t, "fx-bfq-4seqread") // the set's basename
	dir := t.TempDir()
	out := filepath.Join(dir, "out.arrow")
	for _, args := range [][]string{
		{"convert", in + ".blktrace.0.zst", in + ".blktrace.1.zst", "-o", out},
		{"convert", in, in + ".blktrace.1.zst", "-o", out},
		{"calibrate", in + ".blktrace.0.zst", in, "-o", filepath.Join(dir, "device.json")},
	} {
		_, errOut, code := run(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "are one capture") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and \"are one capture\"", args, code, errOut)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind %d files", len(ents))
	}
	if _, errOut, code := run(t, "convert", in+".blktrace.1.zst", "-o", out); code != exitOK {
		t.Fatalf("one per-CPU file: exit %d (%s)", code, errOut)
	}
}
