package diff

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestSpread: the predicted figures of three seeds' Results, by hand. The
// compared cgroup 5 at 10, 30 and 20 MiB/s (min 10, median 20, max 30);
// cgroup 7 is missing from the third Result (nothing completed in its
// window: 0); cgroup 9 is not compared (left out); the compared process 42
// at 2, 1, 1 MiB/s.
func TestSpread(t *testing.T) {
	res := func(a5, a7, p42 float64) *Result {
		return &Result{
			Cgroups: []Cgroup{
				{ID: 5, Path: "/a", Compared: true, PredMiBps: a5, PredShare: a5 / 100, PredP50: a5 / 1000},
				{ID: 7, Path: "/b", Compared: true, PredMiBps: a7, PredShare: a7 / 100, PredP50: a7 / 1000},
				{ID: 9, Path: "/c", PredMiBps: 1},
			},
			Processes: []Process{{PID: 42, Comm: "fio", Compared: true, PredMiBps: p42, PredShare: p42 / 10, PredP50: p42 / 1e4}},
		}
	}
	third := res(20, 0, 1)
	third.Cgroups = []Cgroup{third.Cgroups[0], third.Cgroups[2]}
	got := Spread([]uint64{1, 2, 3}, []*Result{res(10, 4, 2), res(30, 6, 1), third})
	want := &SeedSpread{
		Seeds: []uint64{1, 2, 3},
		Cgroups: []FigureSpread{
			{ID: 5, Name: "/a", MiBps: Range{10, 20, 30}, Share: Range{0.1, 0.2, 0.3}, P50: Range{0.01, 0.02, 0.03}},
			{ID: 7, Name: "/b", MiBps: Range{0, 4, 6}, Share: Range{0, 0.04, 0.06}, P50: Range{0, 0.004, 0.006}},
		},
		Processes: []FigureSpread{{ID: 42, Name: "fio", MiBps: Range{1, 1, 2}, Share: Range{0.1, 0.1, 0.2}, P50: Range{1e-4, 1e-4, 2e-4}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Spread:\n got %+v\nwant %+v", got, want)
	}
	// Two seeds: the median is the lower one.
	if sp := Spread([]uint64{4, 5}, []*Result{res(10, 4, 2), res(30, 6, 1)}); sp.Cgroups[0].MiBps != (Range{10, 10, 30}) {
		t.Errorf("two seeds: %+v, want 10 / 10 / 30", sp.Cgroups[0].MiBps)
	}
	if Spread(nil, nil) != nil || Spread([]uint64{1}, nil) != nil {
		t.Errorf("no results: want nil")
	}
}

// TestWriteSeeds: the text lines of a spread, and none for one seed.
func TestWriteSeeds(t *testing.T) {
	r := &Result{Seeds: &SeedSpread{Seeds: []uint64{3, 4, 5},
		Cgroups:   []FigureSpread{{ID: 5, Name: "/a", MiBps: Range{10, 20, 30}, Share: Range{0.1, 0.2, 0.3}, P50: Range{0.001, 0.002, 0.003}}},
		Processes: []FigureSpread{{ID: 42, Name: "fio", MiBps: Range{1, 1, 2}, Share: Range{0.1, 0.1, 0.2}, P50: Range{1e-4, 1e-4, 2e-4}}},
	}}
	var lines []string
	line := func(f string, a ...any) { lines = append(lines, strings.TrimRight(fmt.Sprintf(f, a...), " ")) }
	r.writeSeeds(line)
	if len(lines) != 3 || lines[0] != "  predicted at 3 seeds (3-5; the device model's draws), min / median / max:" ||
		!strings.HasPrefix(lines[1], "  cgroup 5 /a ") || !strings.Contains(lines[1], "MiB/s 10.00 / 20.00 / 30.00   share 10.0 / 20.0 / 30.0 %   p50 ms 1.000 / 2.000 / 3.000") ||
		!strings.HasPrefix(lines[2], "  pid 42 fio") || !strings.Contains(lines[2], "MiB/s 1.00 / 1.00 / 2.00") {
		t.Errorf("writeSeeds:\n%s", strings.Join(lines, "\n"))
	}
	r.Seeds.Seeds = r.Seeds.Seeds[:1]
	lines = nil
	r.writeSeeds(line)
	if len(lines) != 0 {
		t.Errorf("one seed: %q, want nothing", lines)
	}
	for _, c := range []struct {
		seeds []uint64
		want  string
	}{{[]uint64{1, 2, 3, 4, 5}, "1-5"}, {[]uint64{1, 4, 9}, "1, 4, 9"}, {[]uint64{7}, "7"}} {
		if got := SeedList(c.seeds); got != c.want {
			t.Errorf("SeedList(%v) = %q, want %q", c.seeds, got, c.want)
		}
	}
}
