package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// A replay that keeps the capture's setup validates; one that changes a
// tunable is a what-if, whose change names it. The fixture's manifest says
// it was recorded under BFQ with weights 100 and 900.
func TestReplayModes(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	v := replayJSON(t, "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", in)
	if v["mode"] != "validate" || v["recorded_scheduler"] != "bfq" || v["change"] != nil {
		t.Errorf("same setup: mode %v, recorded %v, change %v", v["mode"], v["recorded_scheduler"], v["change"])
	}
	w := replayJSON(t, "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", "--set", "slice_idle=0", in)
	ch, _ := w["change"].(map[string]any)
	if w["mode"] != "what-if" || ch == nil {
		t.Fatalf("slice_idle=0: mode %v, change %v", w["mode"], w["change"])
	}
	if got, _ := json.Marshal(ch["changed"]); !strings.Contains(string(got), "tunables slice_idle=0") {
		t.Errorf("changed = %s", got)
	}
	// The weights differ from the manifest's: a what-if too.
	if m := replayJSON(t, "--sched", "bfq", "--weight", "1181=500", "--weight", "1201=500", in); m["mode"] != "what-if" {
		t.Errorf("other weights: mode %v", m["mode"])
	}
	// --recorded-sched overrides the manifest.
	if m := replayJSON(t, "--sched", "mq-deadline", "--recorded-sched", "mq-deadline", in); m["mode"] != "validate" || m["recorded_scheduler"] != "mq-deadline" {
		t.Errorf("--recorded-sched: mode %v, recorded %v", m["mode"], m["recorded_scheduler"])
	}
	_, _, code := run(t, "replay", "--sched", "bfq", "--recorded-sched", "nosuch", in)
	if code != exitUsage {
		t.Errorf("--recorded-sched nosuch: exit %d, want %d", code, exitUsage)
	}
}

// The case: the mq-deadline capture b-mqdl-w100-900 replayed
// through BFQ with weights 100:900. The same job really run under BFQ
// (a-bfq-w100-900) gave the weight-100 cgroup 22368256 of 222834688 bytes
// by the kernel's own blkio.bfq.io_service_bytes counters (its manifest):
// 10.04 %. The contention-window share must be within 3 points of it.
func TestReplayWhatIfMqdlToBFQ(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a recorded capture")
	}
	dir := shared.Path(t, "captures", "recorded", "b-mqdl-w100-900")
	m := replayJSON(t, "--sched", "bfq", "--weight", "421=100", "--weight", "441=900", filepath.Join(dir, "b-mqdl-w100-900"))
	if m["mode"] != "what-if" || m["recorded_scheduler"] != "mq-deadline" {
		t.Fatalf("mode %v, recorded %v", m["mode"], m["recorded_scheduler"])
	}
	shares := cgroupShares(t, m, "predicted_share")
	const real = 22368256.0 / (22368256 + 200466432)
	t.Logf("weight-100 cgroup: predicted share %.4f, real BFQ run %.4f", shares.at(421), real)
	if math.Abs(shares.at(421)-real) > 0.03 {
		t.Errorf("predicted share %.4f for the weight-100 cgroup, the real BFQ run gave %.4f", shares.at(421), real)
	}
	ch := m["change"].(map[string]any)
	for _, k := range []string{"from", "to", "changed", "cgroups", "processes", "total", "in_flight", "decisions", "causes"} {
		if _, ok := ch[k]; !ok {
			t.Errorf("change lacks %s", k)
		}
	}
	bw := m["bandwidth"].(map[string]any)
	if bw["window_real"].(float64) < 1.9 || bw["window_predicted"].(float64) <= 0 {
		t.Errorf("windows %v / %v; the capture's cgroups overlap for its whole 2 s", bw["window_real"], bw["window_predicted"])
	}
}

// The other direction: a-bfq-w100-900 (BFQ, weights 100:900) replayed
// through mq-deadline. The same job really run under mq-deadline
// (b-mqdl-w100-900) gave the two cgroups 277991424 and 286945280 bytes by
// fio's own io_bytes (its fio.json): 49.21 % for the first. Under BFQ the
// weight-100 cgroup got 10 % and did 5,462 reads; replaying those once
// (--work fixed), mq-deadline serves them in a fraction of the capture,
// and over that short contention window the cgroup's share came out 56 %.
// A what-if replays each fio job, busy from the capture's start to its
// end, for the capture's 1.5 s (--work auto: timed): within 3 points.
func TestReplayWhatIfBFQToMqdlTimedWork(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a recorded capture")
	}
	dir := shared.Path(t, "captures", "recorded", "a-bfq-w100-900")
	in := filepath.Join(dir, "a-bfq-w100-900")
	const real = 277991424.0 / (277991424 + 286945280)
	m := replayJSON(t, "--sched", "mq-deadline", in)
	if m["mode"] != "what-if" {
		t.Fatalf("mode %v", m["mode"])
	}
	got := cgroupShares(t, m, "predicted_share").at(301)
	t.Logf("weight-100 cgroup under mq-deadline: predicted share %.4f, real run %.4f", got, real)
	if math.Abs(got-real) > 0.03 {
		t.Errorf("predicted share %.4f, the real mq-deadline run gave %.4f", got, real)
	}
	if w := m["bandwidth"].(map[string]any)["window_predicted"].(float64); w < 1.4 {
		t.Errorf("predicted contention window %.3f s: the jobs ran together for the capture's 1.5 s", w)
	}
	fixed := replayJSON(t, "--sched", "mq-deadline", "--work", "fixed", in)
	if f := cgroupShares(t, fixed, "predicted_share").at(301); math.Abs(f-real) <= 0.03 {
		t.Errorf("--work fixed: share %.4f within 3 points of %.4f; the test no longer tells timed work from fixed", f, real)
	}
	if _, _, code := run(t, "replay", "--sched", "mq-deadline", "--work", "forever", in); code != exitUsage {
		t.Errorf("--work forever: exit %d, want %d", code, exitUsage)
	}
}

// probe measures reads only on a file that holds data, and leaves it as
// it was.
func TestProbeRefusesToWriteOverData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.img")
	data := bytes.Repeat([]byte("tracesched"), 8<<20/10+1)
	data = data[:8<<20]
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := device.OpenDirect(path, false); errors.Is(err, device.ErrDirectIO) {
		t.Skip("direct I/O refused here")
	} else if err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	out := filepath.Join(dir, "dev.json")
	_, errOut, code := run(t, "probe", path, "-o", out, "--budget", "400ms")
	if code != exitOK {
		t.Fatalf("probe: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "holds data: measuring reads only") {
		t.Errorf("stderr does not say it measured reads only:\n%s", errOut)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Fatal("probe wrote over a file holding data")
	}
	m := loadDeviceModel(t, out)
	if m.Coverage == nil || len(m.Coverage.Ops) != 1 || m.Coverage.Ops[0].Op != "read" {
		t.Errorf("coverage %+v, want reads only", m.Coverage)
	}
}

// calibrate A B pools two captures of one loop device: the model's
// coverage counts the requests of both, names both, and reaches the larger
// depth of the two.
func TestCalibratePools(t *testing.T) {
	a, b := fixture(t, "fx-bfq-2cg-w100-900"), fixture(t, "fx-bfq-4seqread")
	dir := t.TempDir()
	load := func(args ...string) *device.Model {
		t.Helper()
		out := filepath.Join(dir, "m.json")
		if _, errOut, code := run(t, append([]string{"calibrate", "-o", out}, args...)...); code != exitOK {
			t.Fatalf("calibrate %v: exit %d: %s", args, code, errOut)
		}
		m := loadDeviceModel(t, out)
		if m.Coverage == nil {
			t.Fatal("no coverage in the model")
		}
		return m
	}
	ma, mb, mab := load(a), load(b), load(a, b)
	if got, want := mab.Coverage.Requests, ma.Coverage.Requests+mb.Coverage.Requests; got != want {
		t.Errorf("pooled coverage counts %d requests, the captures %d", got, want)
	}
	if got, want := mab.Coverage.MaxDepth, max(ma.Coverage.MaxDepth, mb.Coverage.MaxDepth); got != want {
		t.Errorf("pooled max depth %d, want %d", got, want)
	}
	if len(mab.Coverage.Sources) != 2 {
		t.Errorf("sources %q", mab.Coverage.Sources)
	}
}

// TestUnknownRecordedSchedulerKeepsFixedWork: a BFQ replay of a capture
// with neither a manifest nor scheduler messages is reported as a what-if
// (the capture may not be BFQ's) but replays the captured bios once, as a
// validation would: with timed work it would send more requests than the
// capture holds. fx-mqdl-rw-nocg's 6,401 requests are the capture's own.
func TestUnknownRecordedSchedulerKeepsFixedWork(t *testing.T) {
	out, errOut, code := run(t, "replay", "--sched", "bfq", "--no-manifest", "--json", fixture(t, "fx-mqdl-rw-nocg"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var js struct {
		Mode              string `json:"mode"`
		Requests          int    `json:"requests"`
		PredictedRequests int    `json:"predicted_requests"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if js.Mode != "what-if" || !strings.Contains(errOut, "scheduler unknown") {
		t.Fatalf("mode %q, stderr %q: want a what-if from an unknown scheduler", js.Mode, errOut)
	}
	if !strings.Contains(errOut, "fixed work") {
		t.Errorf("stderr %q does not say fixed work", errOut)
	}
	if js.Requests == 0 || js.PredictedRequests != js.Requests {
		t.Fatalf("predicted %d requests of the capture's %d: want them all, once", js.PredictedRequests, js.Requests)
	}
}

// loadDeviceModel reads the device model a command wrote to path.
func loadDeviceModel(t *testing.T, path string) *device.Model {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := device.Load(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// --host: a what-if that changes the scheduler says which submission costs
// it holds (the capture's own median gap, scaled by the file's ratio: 1 to 3
// here, so the replayed cost is three times the recorded one); a validation
// uses none; a bad file is an error that names it; off (the default)
// turns it off, and default takes the built-in table.
func TestReplayHost(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	dir := t.TempDir()
	host := filepath.Join(dir, "host.json")
	if err := os.WriteFile(host, []byte(`{"version": 1, "submit_ns": {"bfq": 3000, "mq-deadline": 1000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "replay", "--sched", "mq-deadline", "--host", host, "--json", in)
	if code != exitOK {
		t.Fatalf("what-if: exit %d: %s", code, stderr)
	}
	src, tgt := scanHost(t, stderr, "host: a submission holds its CPU %fµs under bfq (the capture's back-to-back Q-to-Q median, %d gaps), %fµs under mq-deadline")
	if src <= 0 || math.Abs(tgt-src/3) > 0.07 { // both printed to 0.1 µs
		t.Errorf("bfq -> mq-deadline: source %.1f µs, replayed %.1f µs; want a third of it (stderr %q)", src, tgt, stderr)
	}
	if strings.Contains(stderr, "host: a completion") {
		t.Errorf("a table without complete_ns: %q, want no completion cost", stderr)
	}
	// With complete_ns the completion's cost is scaled the same way (1 to
	// 2 here: half the recorded one).
	hostC := filepath.Join(dir, "hostc.json")
	if err := os.WriteFile(hostC, []byte(`{"version": 1, "submit_ns": {"bfq": 3000, "mq-deadline": 1000}, "complete_ns": {"bfq": 2000, "mq-deadline": 1000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, "replay", "--sched", "mq-deadline", "--host", hostC, "--json", in)
	if code != exitOK {
		t.Fatalf("what-if with complete_ns: exit %d: %s", code, stderr)
	}
	src, tgt = scanHost(t, stderr, "host: a completion holds its CPU %fµs under bfq (the capture's back-to-back C-to-C mean, %d gaps), %fµs under mq-deadline")
	if src <= 0 || math.Abs(tgt-src/2) > 0.07 {
		t.Errorf("completion bfq -> mq-deadline: source %.1f µs, replayed %.1f µs; want half of it (stderr %q)", src, tgt, stderr)
	}
	if _, stderr, _ := run(t, "replay", "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", "--host", host, "--json", in); strings.Contains(stderr, "host:") {
		t.Errorf("validation: %q, want no host model", stderr)
	}
	if _, stderr, _ := run(t, "replay", "--sched", "mq-deadline", "--host", "off", "--json", in); strings.Contains(stderr, "host:") {
		t.Errorf("--host off: %q", stderr)
	}
	// A what-if that keeps BFQ (other weights) from a capture that carries
	// BFQ's messages predicts BFQ untraced: from the table's bfq+messages
	// cost to its bfq cost. A table without a bfq+messages cost has one cost
	// for both sides: no host model.
	def := replay.DefaultHostCosts()
	_, stderr, code = run(t, "replay", "--sched", "bfq", "--weight", "1181=300", "--weight", "1201=700", "--json", in)
	if code != exitOK {
		t.Fatalf("weights what-if: exit %d: %s", code, stderr)
	}
	src, tgt = scanHost(t, stderr, "host: a submission holds its CPU %fµs under bfq with its messages traced (the capture's back-to-back Q-to-Q median, %d gaps), %fµs under bfq (the built-in table;")
	if want := src * float64(def.SubmitNS["bfq"]) / float64(def.SubmitNS["bfq+messages"]); src <= 0 || math.Abs(tgt-want) > 0.07 {
		t.Errorf("weights what-if: source %.1f µs, replayed %.1f µs; want %.1f (the table's bfq / bfq+messages; stderr %q)", src, tgt, want, stderr)
	}
	if _, stderr, _ := run(t, "replay", "--sched", "bfq", "--weight", "1181=300", "--weight", "1201=700", "--host", host, "--json", in); strings.Contains(stderr, "host:") {
		t.Errorf("weights what-if, a table without bfq+messages: %q, want no host model", stderr)
	}
	// The default is the built-in table. The capture carries BFQ's
	// messages, so its gaps were paid at the table's bfq+messages cost.
	d := replay.DefaultHostCosts()
	for _, args := range [][]string{nil, {"--host", "default"}} {
		_, stderr, _ := run(t, append([]string{"replay", "--sched", "mq-deadline", "--json", in}, args...)...)
		src, tgt = scanHost(t, stderr, "host: a submission holds its CPU %fµs under bfq with its messages traced (the capture's back-to-back Q-to-Q median, %d gaps), %fµs under mq-deadline (the built-in table;")
		want := src * float64(d.SubmitNS["mq-deadline"]) / float64(d.SubmitNS["bfq+messages"])
		if src <= 0 || math.Abs(tgt-want) > 0.07 {
			t.Errorf("%v: source %.1f µs, replayed %.1f µs; want %.1f (the table's mq-deadline / bfq+messages; stderr %q)", args, src, tgt, want, stderr)
		}
	}
	// The JSON says what the prediction assumed: the host model, unless off.
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 1}, {[]string{"--host", "off"}, 0}} {
		m := replayJSON(t, append([]string{"--sched", "mq-deadline", in}, c.args...)...)
		ch, _ := m["change"].(map[string]any)
		a, ok := ch["assumed"].([]any)
		if !ok || len(a) != c.want || (c.want > 0 && !strings.Contains(fmt.Sprint(a[0]), "host model: a submission holds its CPU")) {
			t.Errorf("%v: change.assumed %v (%T), want %d host-model sentences", c.args, ch["assumed"], ch["assumed"], c.want)
		}
	}
	// A capture whose recording scheduler is unknown (no manifest, no
	// messages) gets no host model, and the what-if says why.
	if _, stderr, _ := run(t, "replay", "--sched", "bfq", "--no-manifest", "--json", fixture(t, "fx-mqdl-rw-nocg")); !strings.Contains(stderr, "no host model: the recording scheduler is unknown (--recorded-sched") {
		t.Errorf("unknown recording scheduler: %q", stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1, "submit_ns": {"bfq": -1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "replay", "--sched", "mq-deadline", "--host", bad, "--json", in); code == exitOK || !strings.Contains(stderr, "bad.json") {
		t.Errorf("bad host file: exit %d, stderr %q", code, stderr)
	}
	// A bad --host fails before the capture is read (no calibration, no
	// replay).
	if _, stderr, code := run(t, "replay", "--sched", "mq-deadline", "--host", filepath.Join(dir, "absent.json"), "--json", in); code == exitOK ||
		!strings.Contains(stderr, "--host: open ") || strings.Contains(stderr, "device model") || strings.Contains(stderr, "replayed") {
		t.Errorf("absent host file: exit %d, stderr %q; want an error naming --host before any calibration", code, stderr)
	}
}

// The host model where it matters: recorded/a-bfq-w100-900 (BFQ, messages
// on, 18.4 us of CPU a submission) replayed through mq-deadline, whose
// submissions cost 5.4/10.7 of that on this host (the default table's
// mq-deadline and bfq+messages). The same job really run under
// mq-deadline (b-mqdl-w100-900) kept 21.2 requests on the device on
// average (its D2C summed over its span); the replay must come within a
// quarter of that, with --host default and without --host (the default).
// With --host off it kept the BFQ run's gaps and about 12 in flight.
func TestReplayHostBFQToMqdl(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a recorded capture")
	}
	dir := shared.Path(t, "captures", "recorded", "a-bfq-w100-900")
	in := filepath.Join(dir, "a-bfq-w100-900")
	inflight := func(args ...string) float64 {
		m := replayJSON(t, append([]string{"--sched", "mq-deadline", in}, args...)...)
		ch, _ := m["change"].(map[string]any)
		f, _ := ch["in_flight"].(map[string]any)
		p, ok := f["predicted"].(float64)
		if !ok {
			t.Fatalf("no change.in_flight.predicted in %v", m["change"])
		}
		return p
	}
	const real = 21.2
	for _, args := range [][]string{{"--host", "default"}, nil} {
		if got := inflight(args...); math.Abs(got/real-1) > 0.25 {
			t.Errorf("host model %v: %.1f requests in flight, the real mq-deadline run %.1f", args, got, real)
		}
	}
	if got := inflight("--host", "off"); got >= 0.75*real {
		t.Errorf("--host off: %.1f in flight; the BFQ run's gaps kept fewer than %.1f", got, 0.75*real)
	}
}

// TestLogSetIsNoChange: --set log=all (the BFQ model's message level, which
// the decision comparison suggests) changes what the model logs, not what
// it does: a replay of a BFQ capture under its own scheduler and tunables
// with it stays a validation (it had made the replay a timed what-if).
func TestLogSetIsNoChange(t *testing.T) {
	rs := recordedSetup{Scheduler: "bfq", Manifest: true, Tunables: map[string]string{"slice_idle": "8"}}
	for _, flags := range [][]string{{"log=all"}, {"queue/iosched/log=none"}, {"log=all", "slice_idle=8"}} {
		sets, err := parseSets(flags)
		if err != nil {
			t.Fatal(err)
		}
		if ch := replayChanges(rs, "bfq", "", false, nil, sets, true); len(ch) != 0 {
			t.Errorf("--set %v: changes %q, want none (a validation)", flags, ch)
		}
	}
	if ch := replayChanges(rs, "bfq", "", false, nil, map[string]string{"log": "all", "slice_idle": "2"}, true); len(ch) != 1 {
		t.Errorf("--set log=all slice_idle=2: changes %q, want the tunable", ch)
	}
}

// A capture with no manifest and no scheduler messages is taken to be
// recorded under none when no request was inserted into a scheduler (no
// I events): the real run recorded/f-none-mixed under none (its manifest
// says so; here it is not read), so a replay through BFQ is a what-if from
// none, with its host model. A capture with I events stays unknown: the
// fixture recorded under mq-deadline, without its manifest.
func TestReplayInfersNoneFromInsertions(t *testing.T) {
	if m := replayJSON(t, "--sched", "bfq", "--no-manifest", fixture(t, "fx-mqdl-rw-nocg")); m["recorded_scheduler"] != nil && m["recorded_scheduler"] != "" {
		t.Errorf("mq-deadline capture without its manifest: recorded %v, want unknown", m["recorded_scheduler"])
	}
	if testing.Short() {
		t.Skip("replays a recorded capture")
	}
	in := filepath.Join(shared.Path(t, "captures", "recorded", "f-none-mixed"), "f-none-mixed")
	_, errOut, code := run(t, "replay", "--sched", "bfq", "--no-manifest", "--json", in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "what-if: recorded under none (no I events: 98456 requests allocated, none inserted into a scheduler)") {
		t.Errorf("stderr does not say none was inferred:\n%s", errOut)
	}
	if !strings.Contains(errOut, "under none (the capture's") {
		t.Errorf("no host model from none:\n%s", errOut)
	}
	if m := replayJSON(t, "--sched", "none", "--no-manifest", in); m["mode"] != "validate" || m["recorded_scheduler"] != "none" {
		t.Errorf("through none: mode %v, recorded %v; want validate, none", m["mode"], m["recorded_scheduler"])
	}
}

// TestReleasesAssumed: the "assumed:" line of the cross-process releases
// names at most three pairs (the rest counted), in the order given, with
// the delays in ms and the names made printable; none without releases.
func TestReleasesAssumed(t *testing.T) {
	if got := releasesAssumed(nil); got != "" {
		t.Errorf("no releases: %q, want \"\"", got)
	}
	rs := []replay.Release{
		{By: 10, PID: 11, ByComm: "fio", Comm: "jbd2/loop0-8", Bios: 310, DelayP50: 79 * time.Microsecond, DelayMean: 380 * time.Microsecond},
		{By: 11, PID: 10, ByComm: "jbd2/loop0-8", Comm: "fio", Bios: 309, DelayP50: 71 * time.Microsecond, DelayMean: 556 * time.Microsecond},
		{By: 12, PID: 13, ByComm: "", Comm: "pg\x1b[2J", Bios: 5, DelayP50: time.Millisecond, DelayMean: 2500 * time.Microsecond},
		{By: 14, PID: 15, Bios: 3, DelayP50: time.Microsecond, DelayMean: time.Microsecond},
	}
	want := "cross-process releases at the capture's delays, from the releasing completion to the released bio's Q (the host's wake-up time, not the scheduler's): " +
		"jbd2/loop0-8 11 after fio 10 x310 (p50 0.079 ms, mean 0.380 ms); fio 10 after jbd2/loop0-8 11 x309 (p50 0.071 ms, mean 0.556 ms); " +
		trace.Printable("pg\x1b[2J") + " 13 after 12 x5 (p50 1.000 ms, mean 2.500 ms); 1 more pair"
	if got := releasesAssumed(rs); got != want {
		t.Errorf("releasesAssumed:\n got %q\nwant %q", got, want)
	}
	if strings.ContainsRune(releasesAssumed(rs), '\x1b') {
		t.Errorf("an escape byte reached the line")
	}
}

// TestReplayReleasesFsync: a what-if of recorded-fs/fs-mqdl-fsync-vs-seqread
// through BFQ says it keeps the fsync chain's captured wake-up delays. Walked
// by hand over the capture's events (fio's 16 KiB WS completion to jbd2's
// next Q; the completion of jbd2's commit, its last FN's C, to fio's next
// Q): 313 and 312 such steps, p50 0.079 and 0.072 ms, mean 0.377 and 0.554
// ms. The replay follows a pair from its third sighting (crossRepeat), so
// it counts a few fewer.
func TestReplayReleasesFsync(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a recorded capture")
	}
	in := filepath.Join(shared.Path(t, "captures", "recorded-fs", "fs-mqdl-fsync-vs-seqread"), "fs-mqdl-fsync-vs-seqread")
	m := replayJSON(t, "--sched", "bfq", "--weight", "701=300", "--weight", "721=700", in)
	ch, _ := m["change"].(map[string]any)
	as, _ := ch["assumed"].([]any)
	var line string
	for _, a := range as {
		if s := fmt.Sprint(a); strings.HasPrefix(s, "cross-process releases") {
			line = s
		}
	}
	if line == "" {
		t.Fatalf("change.assumed %v: no cross-process releases", as)
	}
	for _, w := range []struct {
		pair      string
		n         int
		p50, mean float64
	}{
		{"jbd2/loop0-8 24529 after fio 25788", 313, 0.079, 0.377},
		{"fio 25788 after jbd2/loop0-8 24529", 312, 0.072, 0.554},
	} {
		i := strings.Index(line, w.pair)
		if i < 0 {
			t.Errorf("%q: no %q", line, w.pair)
			continue
		}
		var n int
		var p50, mean float64
		if _, err := fmt.Sscanf(line[i+len(w.pair):], " x%d (p50 %f ms, mean %f ms)", &n, &p50, &mean); err != nil {
			t.Errorf("%q: %v", line[i:], err)
			continue
		}
		if n > w.n || n < w.n-4 || math.Abs(p50-w.p50) > 0.002 || math.Abs(mean/w.mean-1) > 0.03 {
			t.Errorf("%s: x%d, p50 %.3f ms, mean %.3f ms; the capture's %d steps, p50 %.3f, mean %.3f", w.pair, n, p50, mean, w.n, w.p50, w.mean)
		}
	}
}

// TestReplaySeeds: --seeds 3 reports, for each compared cgroup and
// process, the least, the median and the largest of the predicted figures
// of three replays at seeds 1, 2 and 3, each equal to what a replay at that
// --seed alone predicts; everything else it prints, and its -o file, are
// the seed-1 replay's.
func TestReplaySeeds(t *testing.T) {
	in := fixture(t, "fx-bfq-2cg-w100-900")
	dir := t.TempDir()
	decode := func(args ...string) *diff.Result {
		t.Helper()
		out, errOut, code := run(t, append([]string{"replay", "--sched", "bfq", "--weight", "1181=100", "--weight", "1201=900", "--json", in}, args...)...)
		if code != exitOK {
			t.Fatalf("replay %v: exit %d: %s", args, code, errOut)
		}
		var r diff.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	sp := decode("--seeds", "3", "-o", filepath.Join(dir, "seeds.arrow")).Seeds
	if sp == nil || !slices.Equal(sp.Seeds, []uint64{1, 2, 3}) {
		t.Fatalf("seeds %+v, want a spread over 1, 2, 3", sp)
	}
	one := decode("-o", filepath.Join(dir, "one.arrow"))
	if one.Seeds != nil {
		t.Errorf("one seed: seeds %+v, want none", one.Seeds)
	}
	rs := []*diff.Result{one, decode("--seed", "2"), decode("--seed", "3")}
	rangeOf := func(f func(*diff.Result) float64) diff.Range {
		xs := []float64{f(rs[0]), f(rs[1]), f(rs[2])}
		slices.Sort(xs)
		return diff.Range{Min: xs[0], Median: xs[1], Max: xs[2]}
	}
	cg := func(id uint64, f func(diff.Cgroup) float64) func(*diff.Result) float64 {
		return func(r *diff.Result) float64 {
			for _, c := range r.Cgroups {
				if c.ID == id {
					return f(c)
				}
			}
			t.Fatalf("no cgroup %d", id)
			return 0
		}
	}
	if len(sp.Cgroups) != 2 {
		t.Fatalf("cgroups %+v, want the two compared ones", sp.Cgroups)
	}
	for _, c := range sp.Cgroups {
		if want := rangeOf(cg(c.ID, func(c diff.Cgroup) float64 { return c.PredMiBps })); c.MiBps != want {
			t.Errorf("cgroup %d MiB/s %+v, want %+v (three replays)", c.ID, c.MiBps, want)
		}
		if want := rangeOf(cg(c.ID, func(c diff.Cgroup) float64 { return c.PredShare })); c.Share != want {
			t.Errorf("cgroup %d share %+v, want %+v", c.ID, c.Share, want)
		}
		if want := rangeOf(cg(c.ID, func(c diff.Cgroup) float64 { return c.PredP50 })); c.P50 != want {
			t.Errorf("cgroup %d p50 %+v, want %+v", c.ID, c.P50, want)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "seeds.arrow"))
	b, _ := os.ReadFile(filepath.Join(dir, "one.arrow"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("-o with --seeds 3: %d bytes, differ from the seed-1 replay's %d", len(a), len(b))
	}
	for _, bad := range []string{"0", "101"} {
		if _, stderr, code := run(t, "replay", "--sched", "bfq", "--seeds", bad, in); code != exitUsage || !strings.Contains(stderr, "--seeds") {
			t.Errorf("--seeds %s: exit %d, %q", bad, code, stderr)
		}
	}
}

// scanHost returns the two costs (µs) of the first line of stderr that
// holds format's text before its first verb ("host: a submission holds its
// CPU %fµs under ... %d gaps), %fµs under ..."), 0 and 0 when none does,
// failing t when that line does not scan.
func scanHost(t *testing.T, stderr, format string) (src, tgt float64) {
	t.Helper()
	prefix, _, _ := strings.Cut(format, "%")
	for _, l := range strings.Split(stderr, "\n") {
		if i := strings.Index(l, prefix); i >= 0 {
			var gaps int
			if _, err := fmt.Sscanf(l[i:], format, &src, &gaps, &tgt); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return src, tgt
		}
	}
	return 0, 0
}
