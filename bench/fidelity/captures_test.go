package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

func writeCapture(t *testing.T, dir, name, manifest string, trace bool) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if trace {
		if err := os.WriteFile(filepath.Join(d, name+".blktrace.0.zst"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A -captures directory in the layout record-fs.sh (capture.sh -o DIR/NAME)
// leaves: one directory per capture, its log beside it.
func TestDiscoverExtra(t *testing.T) {
	dir := t.TempDir()
	writeCapture(t, dir, "fs-mqdl-b", `{"scheduler":"mq-deadline","trace_complete":true,
		"host_load":{"loadavg":{"loadavg_before":"10.66 11.20 9.01 5/135 16929","load_wait_timed_out":"1"}}}`, true)
	writeCapture(t, dir, "fs-bfq-a", `{"scheduler":"bfq","cgroups":[{"cgroup_id":6901,"path":"/tsched-p/a","bfq_weight":200}]}`, true)
	writeCapture(t, dir, "untraced", `{"scheduler":"bfq"}`, false)
	writeCapture(t, dir, "in-progress", `{}`, true)
	if err := os.Remove(filepath.Join(dir, "in-progress", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs-bfq-a.log"), []byte("log"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := discoverExtra([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name != "fs-bfq-a" || cs[1].Name != "fs-mqdl-b" {
		t.Fatalf("captures %v, want fs-bfq-a and fs-mqdl-b in that order", cs)
	}
	a, b := cs[0], cs[1]
	if a.Group != groupExtra || a.Dir != dir || a.Base != filepath.Join(dir, "fs-bfq-a", "fs-bfq-a") {
		t.Errorf("fs-bfq-a: group %q dir %q base %q", a.Group, a.Dir, a.Base)
	}
	if w := a.Man.weights(); len(w) != 1 || w[6901] != 200 {
		t.Errorf("fs-bfq-a weights %v, want 6901=200", w)
	}
	if a.Man.TraceComplete != nil {
		t.Errorf("fs-bfq-a: trace_complete %v, want absent", *a.Man.TraceComplete)
	}
	if l, _ := a.Man.loadBefore(); l != "" {
		t.Errorf("fs-bfq-a: load %q, want none", l)
	}
	if b.Man.TraceComplete == nil || !*b.Man.TraceComplete {
		t.Errorf("fs-mqdl-b: trace_complete not read as true")
	}
	if l, timedOut := b.Man.loadBefore(); l != "10.66" || !timedOut {
		t.Errorf("fs-mqdl-b: load %q timed out %v, want 10.66, true", l, timedOut)
	}
	// -only names them as the shared ones.
	got, err := selectCaptures(cs, "fs-mqdl-b")
	if err != nil || len(got) != 1 || got[0] != b {
		t.Errorf("-only fs-mqdl-b: %v, %v", got, err)
	}
}

func TestDiscoverExtraErrors(t *testing.T) {
	empty := t.TempDir()
	writeCapture(t, empty, "untraced", `{}`, false)
	bad := t.TempDir()
	writeCapture(t, bad, "broken", `{"scheduler":`, true)
	for _, c := range []struct {
		dir, want string
	}{
		{filepath.Join(empty, "absent"), "no such file"},
		{empty, "no capture"},
		{bad, "broken/manifest.json"},
	} {
		_, err := discoverExtra([]string{c.dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.dir, err, c.want)
		}
	}
}

// The requests of a jbd2 commit as fs-bfq-fsync1-vs-seqread logs them
// (blkparse: "Q FWFSM 3932408 + 8", then the flush machinery's "D FN" twice,
// the pre- and the post-flush of a device without FUA), an fsync writer's
// plain "WS" and a readahead read: 3 of 5 carry PREFLUSH, 1 FUA.
func TestFlushes(t *testing.T) {
	w := trace.CatWrite | trace.CatSync
	reqs := []trace.Request{
		{ID: 1, Cat: w, Bytes: 4096},
		{ID: 2, Cat: w | trace.CatFlush | trace.CatFUA | trace.CatMeta, Bytes: 4096},
		{ID: 3, Cat: trace.CatFlush},
		{ID: 4, Cat: trace.CatFlush},
		{ID: 5, Cat: trace.CatRead | trace.CatAhead, Bytes: 131072},
	}
	s := diff.FromData(trace.Meta{}, nil, reqs, nil)
	flush, fua := flushes(s)
	if flush != 3 || fua != 1 {
		t.Errorf("flushes %d, FUA %d; want 3, 1", flush, fua)
	}
}

func TestWorstProcs(t *testing.T) {
	ps := []procFig{
		{PID: 1, Bios: 570, RealMiB: 235.6, Err: 0.302},
		{PID: 2, Bios: 804, RealMiB: 1.0, Err: -1.5}, // an fsync writer: little bandwidth, many bios
		{PID: 3, Bios: 3, RealMiB: 0.1, Err: 4},      // a kworker's few bios
		{PID: 4, Bios: 2, RealMiB: 0.2, Err: -5},
		{PID: 5, Bios: 100, RealMiB: 0, Err: 0}, // completed nothing
	}
	big, small, hasBig, hasSmall := worstProcs(ps, 20)
	if !hasBig || big.PID != 2 || !hasSmall || small.PID != 4 {
		t.Errorf("worst %d (%v), small %d (%v); want 2, 4", big.PID, hasBig, small.PID, hasSmall)
	}
	if _, _, hasBig, hasSmall := worstProcs(ps[4:], 20); hasBig || hasSmall {
		t.Errorf("a process that completed nothing was judged")
	}
}

func TestCrossPairs(t *testing.T) {
	c := func(group, name, sched string) *capture {
		return &capture{Name: name, Group: group, Man: manifest{Scheduler: sched}}
	}
	cs := []*capture{
		c("recorded-fs", "fs-bfq-2bufread-idle2ms", "bfq"),
		c("recorded-fs", "fs-bfq-fsync-vs-seqread", "bfq"),
		c("recorded-fs", "fs-bfq-untar", "bfq"),
		c("recorded-fs", "fs-mqdl-2bufread", "mq-deadline"),
		c("recorded-fs", "fs-mqdl-fsync-vs-seqread", "mq-deadline"),
		c("recorded-fs", "fs-mqdl-pgbench", "mq-deadline"), // no BFQ partner
		c("recorded-fs", "raw-sweep-none", "none"),
		c("recorded", "b-mqdl-w100-900", "mq-deadline"),
		c(groupExtra, "fs-bfq-fsync1-vs-seqread", "bfq"),
		c(groupExtra, "fs-mqdl-fsync1-vs-seqread", "mq-deadline"),
		c(groupExtra, "fs-mqdl-untar", "mq-deadline"), // its partner is in another group
		c(groupExtra, "fs-bfq-6proc-3cg", "bfq"),
		c(groupExtra, "fs-bfq-6proc-3cg-idle0", "bfq"), // the exact name wins
		c(groupExtra, "fs-mqdl-6proc-3cg", "mq-deadline"),
	}
	var got []string
	for _, p := range crossPairs(cs) {
		got = append(got, p.MQ.Name+">"+p.BFQ.Name)
	}
	want := "fs-mqdl-2bufread>fs-bfq-2bufread-idle2ms fs-mqdl-fsync-vs-seqread>fs-bfq-fsync-vs-seqread " +
		"fs-mqdl-fsync1-vs-seqread>fs-bfq-fsync1-vs-seqread fs-mqdl-6proc-3cg>fs-bfq-6proc-3cg"
	if strings.Join(got, " ") != want {
		t.Errorf("pairs\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// The weights of the BFQ capture go to the mq-deadline capture's cgroups of
// the same path (the ids differ: each capture makes its cgroups afresh).
func TestCrossSpec(t *testing.T) {
	w := func(n int) *int { return &n }
	type cg = struct {
		ID       uint64 `json:"cgroup_id"`
		Path     string `json:"path"`
		Weight   *int   `json:"bfq_weight"`
		Messages int    `json:"trace_messages"`
	}
	bq := &capture{Name: "fs-bfq-x", Man: manifest{Scheduler: "bfq", TunablesRequested: []string{"slice_idle_us=2000"},
		Cgroups: []cg{{1, "/", nil, 1200}, {6901, "/tsched-fw", w(300), 0}, {6921, "/tsched-fr", w(700), 40}}}}
	mq := &capture{Name: "fs-mqdl-x", Man: manifest{Scheduler: "mq-deadline",
		Cgroups: []cg{{1, "/", nil, 0}, {6941, "/tsched-fw", w(300), 0}, {6961, "/tsched-fr", w(700), 0}}}}
	s, err := crossSpec(crossPair{mq, bq})
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "bfq" || !s.Timed || s.Set["slice_idle_us"] != "2000" || len(s.Weights) != 2 || s.Weights[6941] != 300 || s.Weights[6961] != 700 ||
		s.Recorded != "mq-deadline" || !s.Traced {
		t.Errorf("spec %+v", s)
	}
	mq.Man.Cgroups = mq.Man.Cgroups[:2]
	if _, err := crossSpec(crossPair{mq, bq}); err == nil || !strings.Contains(err.Error(), "/tsched-fr") {
		t.Errorf("a BFQ cgroup missing from the mq-deadline capture: error %v", err)
	}
}

func TestRankProcs(t *testing.T) {
	cgs := []cgFig{{ID: 1, Path: "/"}, {ID: 7101, Path: "/tsched-m3"}}
	ps := []procFig{{PID: 27312, Comm: "jbd2/loop1-8", Cgroup: 1}, {PID: 28654, Comm: "fio", Cgroup: 7101}, {PID: 28655, Comm: "fio", Cgroup: 7101}}
	r := rankProcs(ps, cgs)
	if len(r) != 3 || r[1].key != (procKey{"/tsched-m3", "fio", 0}) || r[2].key != (procKey{"/tsched-m3", "fio", 1}) || r[0].key != (procKey{"/", "jbd2", 0}) {
		t.Errorf("keys %+v", r)
	}
	if p, ok := findRanked(r, procKey{"/tsched-m3", "fio", 1}); !ok || p.p.PID != 28655 {
		t.Errorf("second fio of /tsched-m3: %+v %v", p, ok)
	}
}

// -bfq-feature NAME=on|off reaches the BFQ replays (own and cross specs)
// and no other model's; malformed flips are refused.
func TestBFQFeatureFlag(t *testing.T) {
	f := featureFlips{}
	for _, v := range []string{"entity-request-limit=on", "wr-any-weight=off", "entity-request-limit=off", " entity-request-limit = on "} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if got := f.String(); got != "entity-request-limit=on,wr-any-weight=off" {
		t.Errorf("flips %q", got)
	}
	for _, v := range []string{"entity-request-limit", "=on", "entity-request-limit=yes"} {
		if err := (featureFlips{}).Set(v); err == nil {
			t.Errorf("Set(%q): no error", v)
		}
	}
	bq := &capture{Name: "fs-bfq-x", Man: manifest{Scheduler: "bfq", bfqFeatures: f}}
	mq := &capture{Name: "fs-mqdl-x", Man: manifest{Scheduler: "mq-deadline", bfqFeatures: f}}
	s, err := ownSpec(bq)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Features["entity-request-limit"] || len(s.Features) != 2 {
		t.Errorf("bfq own spec features %v", s.Features)
	}
	if s, err = ownSpec(mq); err != nil || s.Features != nil {
		t.Errorf("mq-deadline own spec features %v (%v)", s.Features, err)
	}
	if s, err = crossSpec(crossPair{mq, bq}); err != nil || !s.Features["entity-request-limit"] {
		t.Errorf("cross spec features %v (%v)", s.Features, err)
	}
}
