package report

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/nofetch"
	"github.com/tracesched/tracesched/trace"
)

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"tracesched", "replay", "--set", "slice_idle_us=2000", "my trace", "it's", ""})
	want := `tracesched replay --set slice_idle_us=2000 'my trace' 'it'\''s' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestChartWindow: 292 bios over 163 ms give at most 292/20 = 14 windows:
// 1, 2, 5 and 10 ms cut the span into 163, 81, 32 and 16; 20 ms into 8.
// A million bios over 80 s: at most 200 windows, 0.5 s (160).
func TestChartWindow(t *testing.T) {
	if got := chartWindow(163_000_000, 292); got != 20_000_000 {
		t.Errorf("fixture window %d ns, want 20 ms", got)
	}
	if got := chartWindow(80_073_000_000, 1_068_112); got != 500_000_000 {
		t.Errorf("large window %d ns, want 500 ms", got)
	}
}

// TestClassStrip: a queue short from 0 to 40 % of the span, long after,
// bins 0..191 short, the bin of the flip both, then long up to its last
// point's bin, and nothing after.
func TestClassStrip(t *testing.T) {
	const end = 1000
	pts := []diff.ThinkPoint{{Time: 0, Short: true}, {Time: 400, Short: false}, {Time: 600, Short: false}}
	got := classStrip(pts, end)
	// 400*480/1000 = 192, 600*480/1000 = 288.
	for b, c := range got {
		var want int8
		switch {
		case b < 192:
			want = 0
		case b == 192:
			want = 2
		case b <= 288:
			want = 1
		default:
			want = -1
		}
		if c != want {
			t.Fatalf("bin %d = %d, want %d", b, c, want)
		}
	}
}

// TestCDF: quantiles interpolate between order statistics as diff's do.
func TestCDF(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	if q := quantile(xs, 0.5); q != 3 {
		t.Errorf("median %v", q)
	}
	if q := quantile(xs, 0.125); q != 1.5 { // position 0.5
		t.Errorf("q(0.125) %v", q)
	}
	x, y := cdf(xs)
	if len(x) != len(cdfLevels) || x[0] != 1 || x[len(x)-1] != 5 || y[len(y)-1] != 1 || !slices.IsSorted(x) {
		t.Errorf("cdf %v %v", x, y)
	}
}

// hostile is a cgroup path and a process name as a trace could carry them.
const hostile = `</svg><script src="https://example.com/x.js"></script><img src=//x>`

// sides builds two small traces of one workload: n one-bio reads of pids
// 100 and 101, one every 100 µs, the prediction serving pid 100's later
// bios 2 ms late.
func sides(n int) (*diff.Side, *diff.Side) {
	mk := func(late bool) *diff.Side {
		var bios []trace.Bio
		var reqs []trace.Request
		idx := [2]uint32{}
		for i := 0; i < n; i++ {
			p := i % 2
			t := trace.Time(i) * 100_000
			issue := t + 10_000
			if late && p == 0 && i > n/2 {
				issue += 2_000_000
			}
			r := trace.Request{ID: uint64(i + 1), Bytes: 4096, Cat: trace.CatRead, PID: uint32(100 + p), Comm: hostile, Cgroup: uint64(7 + p),
				Queue: t, Get: t, Insert: t, Issue: issue, Complete: issue + 50_000, Bios: 1, FirstBio: idx[p]}
			reqs = append(reqs, r)
			bios = append(bios, trace.Bio{PID: r.PID, Index: idx[p], Bytes: 4096, Cat: trace.CatRead, Cgroup: r.Cgroup, Queue: t, Request: r.ID, Issue: issue, Done: r.Complete})
			idx[p]++
		}
		return diff.FromData(trace.Meta{Cgroups: map[uint64]string{7: hostile}}, bios, reqs, nil)
	}
	return mk(false), mk(true)
}

// TestHostileNames: names from a trace are escaped everywhere, so the page
// stays free of anything that fetches, and every chart still parses.
func TestHostileNames(t *testing.T) {
	real, pred := sides(400)
	res := diff.Compare(real, pred, diff.Options{})
	if res.DispatchOrder.Divergences == 0 {
		t.Fatal("the late bios should diverge")
	}
	rep := New(res, Run{Commands: []string{ShellQuote([]string{"tracesched", "report", hostile})}, Inputs: []Input{{Role: "capture", Name: hostile}}})
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if tag, attr := nofetch.Fetches(page); tag != "" {
		t.Errorf("tag %q loads %q", tag, attr)
	}
	if !strings.Contains(page, "&lt;script src=&#34;https://example.com/x.js&#34;&gt;") {
		t.Error("the hostile name is not shown, escaped")
	}
	for _, c := range rep.Charts() {
		for _, standalone := range []bool{false, true} {
			if err := xml.Unmarshal([]byte(c.SVG(standalone)), new(struct{})); err != nil {
				t.Errorf("%s (standalone %v): %v", c.Name, standalone, err)
			}
		}
	}
}

// TestEmpty: two empty traces render without failing.
func TestEmpty(t *testing.T) {
	e := func() *diff.Side { return diff.FromData(trace.Meta{}, nil, nil, nil) }
	rep := New(diff.Compare(e(), e(), diff.Options{}), Run{})
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if len(rep.Charts()) == 0 || !strings.Contains(b.String(), "</html>") {
		t.Errorf("%d charts", len(rep.Charts()))
	}
}

func pageSize(t testing.TB, n int) int {
	real, pred := sides(n)
	var b strings.Builder
	if err := New(diff.Compare(real, pred, diff.Options{}), Run{}).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Len()
}

// TestSizeDoesNotGrow: the page aggregates, so 20 times the requests make
// it barely larger (the data tables hold at most a few hundred rows).
func TestSizeDoesNotGrow(t *testing.T) {
	small, large := pageSize(t, 20_000), pageSize(t, 400_000)
	t.Logf("20k requests: %d bytes, 400k: %d bytes", small, large)
	if large > 2<<20 || float64(large) > 1.25*float64(small) {
		t.Errorf("page of 400k requests %d bytes against %d for 20k", large, small)
	}
}

// TestExtrapolationShown: where the prediction drove the device model
// beyond its calibration, the device section says so, escaped, in a
// validation report (a what-if states it in its own section instead).
func TestExtrapolationShown(t *testing.T) {
	real, pred := sides(400)
	res := diff.Compare(real, pred, diff.Options{})
	res.DeviceExtrapolation = []string{"the median predicted 10ms window held about 11.3 requests <b>"}
	var b strings.Builder
	if err := New(res, Run{}).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "The device model extrapolates:") || !strings.Contains(page, "<li>the median predicted 10ms window held about 11.3 requests &lt;b&gt;</li>") {
		t.Errorf("the extrapolation is not on the page, escaped")
	}
}

// TestSeedsShown: a validation report tables the seeds' spread under the
// bandwidth section (cgroup, min / median / max of each figure); a report
// without one, or with one seed, has no such table.
func TestSeedsShown(t *testing.T) {
	real, pred := sides(400)
	res := diff.Compare(real, pred, diff.Options{})
	page := func() string {
		var b strings.Builder
		if err := New(res, Run{}).WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	const intro = "The same replay at 3 seeds of the device model"
	if strings.Contains(page(), intro) {
		t.Fatalf("no seeds: the table is there")
	}
	res.Seeds = &diff.SeedSpread{Seeds: []uint64{1, 2, 3}, Cgroups: []diff.FigureSpread{
		{ID: 7, Name: "/a<b>", MiBps: diff.Range{Min: 10.5, Median: 20.25, Max: 31}, Share: diff.Range{Min: 0.1, Median: 0.2, Max: 0.3}, P50: diff.Range{Min: 0.001, Median: 0.002, Max: 0.003}}}}
	p := page()
	if !strings.Contains(p, intro+"&#39;s random draws (1-3)") && !strings.Contains(p, intro+"'s random draws (1-3)") {
		t.Errorf("the seeds' paragraph is not on the page")
	}
	for _, cell := range []string{"10.50", "20.25", "31.00", "2.000", "/a&lt;b&gt;"} {
		if !strings.Contains(p, cell) {
			t.Errorf("no %q on the page", cell)
		}
	}
	res.Seeds.Seeds = res.Seeds.Seeds[:1]
	if strings.Contains(page(), "The same replay at") {
		t.Errorf("one seed: the table is there")
	}
}
