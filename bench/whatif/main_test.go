package main

import (
	"encoding/json"
	"math"
	"os"
	"testing"

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
