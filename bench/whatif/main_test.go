package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
)

// TestManifestIncomplete: a real run whose trace the rig found incomplete
// (trace_complete false, as fs-bfq-writeback-r2's manifest of 2026-12-02:
// 599 D events against the kernel's 682) is left out; a complete one, or
// a manifest older than the check (no trace_complete, as the
// ../shared/captures/recorded ones), is kept.
func TestManifestIncomplete(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"scheduler": "bfq", "trace_complete": false}`, true},
		{`{"scheduler": "bfq", "trace_complete": true}`, false},
		{`{"scheduler": "bfq"}`, false},
	} {
		var m manifest
		if err := json.Unmarshal([]byte(c.json), &m); err != nil {
			t.Fatal(err)
		}
		if got := m.incomplete(); got != c.want {
			t.Errorf("%s: incomplete %v, want %v", c.json, got, c.want)
		}
	}
}

// TestTracedHost: a pair whose real runs carry BFQ's messages is predicted
// with the table's bfq+messages cost as bfq's; a target without such a
// cost keeps the table as it is. The manifest says which runs carry them.
func TestTracedHost(t *testing.T) {
	*flagWork = t.TempDir()
	path, err := tracedHost("default", "bfq")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := replay.LoadHostCosts(f, path)
	if err != nil {
		t.Fatal(err)
	}
	d := replay.DefaultHostCosts()
	if h.SubmitNS["bfq"] != d.SubmitNS["bfq+messages"] || h.SubmitNS["mq-deadline"] != d.SubmitNS["mq-deadline"] {
		t.Errorf("traced table %v, want bfq = bfq+messages of %v", h.SubmitNS, d.SubmitNS)
	}
	if p, err := tracedHost("default", "mq-deadline"); err != nil || p != "default" {
		t.Errorf("mq-deadline: %q, %v; want the table as it is", p, err)
	}
	var m manifest
	for doc, want := range map[string]bool{
		`{"cgroups": [{"path": "/", "trace_messages": 0}, {"path": "/a", "trace_messages": 12}]}`: true,
		`{"cgroups": [{"path": "/", "trace_messages": 0}]}`:                                       false,
		`{"cgroups": [{"path": "/"}]}`:                                                            false,
	} {
		m = manifest{}
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m.messages() != want {
			t.Errorf("%s: messages %v, want %v", doc, !want, want)
		}
	}
}

// TestAggregate: the summary of three pairs' scores, by hand. Shares
// 0.01, 0.05, 0.02: median 0.02, mean 0.08/3, two within 3 pp. Cgroup
// bandwidth 0.10, 0.30 and NaN (no real run to compare with): the median
// of the two, 0.20, one within 15 %. Totals 0.15, 0.16, 0.01: median 0.15
// (the aim is inclusive), two within. p50 0.5, 0.2, 0.25: median 0.25,
// two within. One pair meets every aim.
func TestAggregate(t *testing.T) {
	nan := math.NaN()
	a := aggregateOf([]score{
		{share: 0.01, bw: 0.10, total: 0.15, p50: 0.5},
		{share: 0.05, bw: 0.30, total: 0.16, p50: 0.2},
		{share: 0.02, bw: nan, total: 0.01, p50: 0.25, ok: true},
	})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(a.shareMed, 0.02) || !near(a.shareMean, 0.08/3) || a.shareOK != 2 {
		t.Errorf("shares: median %v mean %v within %d, want 0.02, %v, 2", a.shareMed, a.shareMean, a.shareOK, 0.08/3)
	}
	if !near(a.bwMed, 0.20) || a.bwOK != 1 {
		t.Errorf("cgroup bandwidth: median %v within %d, want 0.20, 1", a.bwMed, a.bwOK)
	}
	if !near(a.totalMed, 0.15) || a.totalOK != 2 {
		t.Errorf("total: median %v within %d, want 0.15, 2", a.totalMed, a.totalOK)
	}
	if !near(a.p50Med, 0.25) || a.p50OK != 2 || a.all != 1 {
		t.Errorf("p50: median %v within %d, every aim %d; want 0.25, 2, 1", a.p50Med, a.p50OK, a.all)
	}
	if e := aggregateOf(nil); !math.IsNaN(e.bwMed) || !math.IsNaN(e.shareMean) || e.all != 0 {
		t.Errorf("no pairs: %+v, want NaN medians and no pair", e)
	}
}

// TestRunSpread: by hand, two runs of a two-cgroup job, 100 and 150
// MiB/s for one cgroup (+50 %), 50 and 40 for the other (+25 %), totals
// 150 and 190 (+26.7 %), shares 0.6/0.7 and 0.4/0.3 (0.1 apart); one run
// has no spread.
func TestRunSpread(t *testing.T) {
	o := outcome{
		P: pair{Real: []string{"a", "b"}},
		Rows: []row{
			{RealMiB: []float64{100, 150}, RealShr: []float64{0.6, 0.7}},
			{RealMiB: []float64{50, 40}, RealShr: []float64{0.4, 0.3}},
		},
		Total: row{RealMiB: []float64{150, 190}},
	}
	bw, total, share, ok := runSpread(&o)
	if !ok || math.Abs(bw-0.5) > 1e-9 || math.Abs(total-40.0/150) > 1e-9 || math.Abs(share-0.1) > 1e-9 {
		t.Errorf("spread %v %v %v %v, want 0.5 0.2667 0.1 true", bw, total, share, ok)
	}
	one := outcome{Rows: []row{{RealMiB: []float64{100}, RealShr: []float64{1}}}, Total: row{RealMiB: []float64{100}}}
	if _, _, _, ok := runSpread(&one); ok {
		t.Error("one run: want no spread")
	}
}

// TestFioResult: an untraced run's figures from fio's JSON, by hand: two
// jobs in two cgroups at 1 and 3 MiB/s (shares 0.25 and 0.75 of the
// weighted cgroups), completion latencies 0-1-2 ms and 0-3-4 ms by their
// 0th/50th/100th percentiles, 100 each. Together their distribution
// functions are 0.5+0.5(x-1) and x/6 (ms) between 1 and 2 ms, whose mean
// is 1/2 at x = 1.5 ms: the total's p50. A cgroup without weight is left
// out of the shares but not of the total.
func TestFioResult(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	man := `{"scheduler": "bfq", "cgroups": [{"path": "/", "cgroup_id": 1}, {"path": "/cg1", "cgroup_id": 11}, {"path": "/cg2", "cgroup_id": 12}]}`
	fio := `{"global options": {"cgroup": "cg2", "direct": "1"}, "jobs": [
	 {"jobname": "a", "job options": {"cgroup": "cg1"}, "job_runtime": 1000, "read": {"bw_bytes": 1048576, "io_bytes": 1048576, "clat_ns": {"N": 100, "percentile": {"50.000000": 1000000, "100.000000": 2000000}}}, "write": {"bw_bytes": 0, "clat_ns": {"N": 0}}},
	 {"jobname": "b", "job options": {}, "read": {"bw_bytes": 0, "clat_ns": {"N": 0}}, "job_runtime": 1000, "write": {"bw_bytes": 3145728, "io_bytes": 3145728, "clat_ns": {"N": 100, "percentile": {"50.000000": 3000000, "100.000000": 4000000}}}}]}`
	for name, body := range map[string]string{"manifest.json": man, "run.fio.json": fio} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := loadCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !c.untraced() {
		t.Fatal("a run with fio.json and no trace: untraced false")
	}
	r, err := fioResult(c, map[string]int{"/cg1": 100, "/cg2": 300})
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	want := []cgroupResult{{ID: 11, Compared: true, RealMiBps: 1, RealShare: 0.25, RealP50: 1e-3}, {ID: 12, Compared: true, RealMiBps: 3, RealShare: 0.75, RealP50: 3e-3}}
	if len(r.Cgroups) != len(want) {
		t.Fatalf("cgroups %+v, want %+v", r.Cgroups, want)
	}
	for i, w := range want {
		g := r.Cgroups[i]
		if g.ID != w.ID || !g.Compared || !near(g.RealMiBps, w.RealMiBps) || !near(g.RealShare, w.RealShare) || !near(g.RealP50, w.RealP50) {
			t.Errorf("cgroup %d: %+v, want %+v", i, g, w)
		}
	}
	if b := r.Bandwidth.Real; !near(b.MiBps, 4) || !near(b.P50, 1.5e-3) {
		t.Errorf("total %+v, want 4 MiB/s, p50 1.5 ms", b)
	}
	// With the device's own counters over the run (8 MiB: the file
	// system's I/O outside the jobs), shares are of every byte it moved
	// (1/8, 3/8) and the total is its 8 MiB over the 1 s runtime.
	manDev := strings.Replace(man, `{"scheduler": "bfq",`, `{"scheduler": "bfq", "device_stat_delta": {"read_sectors": 4096, "write_sectors": 12288},`, 1)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manDev), 0o644); err != nil {
		t.Fatal(err)
	}
	cd, err := loadCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := fioResult(cd, map[string]int{"/cg1": 100, "/cg2": 300})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Cgroups) != 2 || !near(rd.Cgroups[0].RealShare, 0.125) || !near(rd.Cgroups[1].RealShare, 0.375) || !near(rd.Cgroups[0].RealMiBps, 1) || !near(rd.Bandwidth.Real.MiBps, 8) {
		t.Errorf("with device counters: %+v, total %+v; want shares 1/8 and 3/8, cg1 1 MiB/s, total 8 MiB/s", rd.Cgroups, rd.Bandwidth.Real)
	}
	// A buffered job (direct=0) times the page cache: its cgroup, and the
	// total, have no p50; the bandwidths stay.
	buffered := strings.Replace(fio, `{"cgroup": "cg1"}`, `{"cgroup": "cg1", "direct": "0"}`, 1)
	if err := os.WriteFile(filepath.Join(dir, "run.fio.json"), []byte(buffered), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = fioResult(c, map[string]int{"/cg1": 100, "/cg2": 300}); err != nil {
		t.Fatal(err)
	}
	if g := r.Cgroups[0]; !math.IsNaN(g.RealP50) || !near(g.RealMiBps, 1) || !near(r.Cgroups[1].RealP50, 3e-3) || !math.IsNaN(r.Bandwidth.Real.P50) || !near(r.Bandwidth.Real.MiBps, 4) {
		t.Errorf("buffered cg1: %+v, total %+v; want cg1's and the total's p50 NaN, cg2's 3 ms, bandwidths kept", r.Cgroups, r.Bandwidth.Real)
	}
	// With a trace beside it the run is a traced one.
	if err := os.WriteFile(filepath.Join(dir, "run.blktrace.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c.untraced() {
		t.Error("a run with run.blktrace.0: untraced true")
	}
}

// TestRealWarm: the state a real BFQ run's scheduler started in. A
// fixture recorded on a raw device (../shared/rig sets BFQ just before
// the trace) shows BFQ's messages and no tuned budget: cold (0), named; a
// name that does not resolve is passed over. recorded-fs's
// fs-bfq-fsync-vs-seqread began with "recalc_budg: last max_budg 8874, min
// budg 3812": 32 x 3812 = 121,984 sectors.
func TestRealWarm(t *testing.T) {
	old, oldShared := *flagCaptures, *flagShared
	t.Cleanup(func() { *flagCaptures, *flagShared = old, oldShared })
	*flagCaptures = filepath.Dir(shared.Fixture(t, "fx-bfq-4seqread"))
	mb, from, err := realWarm([]string{"rig/no-such-run", "rig/fx-bfq-4seqread"})
	if err != nil || mb != 0 || from != "rig/fx-bfq-4seqread" {
		t.Errorf("fixture: %d from %q (%v), want 0 from rig/fx-bfq-4seqread", mb, from, err)
	}
	*flagShared = filepath.Dir(filepath.Dir(shared.Path(t, "captures", "recorded-fs")))
	mb, from, err = realWarm([]string{"recorded-fs/fs-bfq-fsync-vs-seqread"})
	if err != nil || mb != 121984 {
		t.Errorf("fs-bfq-fsync-vs-seqread: %d from %q (%v), want 121984", mb, from, err)
	}
}
