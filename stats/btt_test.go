package stats_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/stats"
)

// bttRow is one latency row of btt's "All Devices" table.
type bttRow struct {
	Min, Avg, Max float64
	N             uint64
}

// bttReport is what the tests read from a btt report.
type bttReport struct {
	All  map[string]bttRow // Q2Q, Q2G, G2I, Q2M, I2D, M2D, D2C, Q2C
	Seek map[string]bttSeek
}

type bttSeek struct {
	NSeeks uint64
	Mean   float64
	Median int64
}

// parseBTT reads btt's report: the "All Devices" latency rows and the
// "Overall/Average" seek rows.
func parseBTT(t *testing.T, path string) bttReport {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep := bttReport{All: map[string]bttRow{}, Seek: map[string]bttSeek{}}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "====") {
			section = strings.Trim(line, "= ")
			continue
		}
		fs := strings.Fields(line)
		switch {
		case section == "All Devices" && len(fs) == 5 && fs[0] != "ALL":
			var r bttRow
			r.Min, _ = strconv.ParseFloat(fs[1], 64)
			r.Avg, _ = strconv.ParseFloat(fs[2], 64)
			r.Max, _ = strconv.ParseFloat(fs[3], 64)
			r.N, err = strconv.ParseUint(fs[4], 10, 64)
			if err == nil {
				rep.All[fs[0]] = r
			}
		case strings.HasPrefix(section, "Device Q2Q Seek") || strings.HasPrefix(section, "Device D2D Seek"):
			// "   Average |   292   1397970.4   0 | 253952(3)"
			if len(fs) >= 5 && fs[0] == "Average" {
				var s bttSeek
				s.NSeeks, _ = strconv.ParseUint(fs[2], 10, 64)
				s.Mean, _ = strconv.ParseFloat(fs[3], 64)
				s.Median, _ = strconv.ParseInt(fs[4], 10, 64)
				rep.Seek[strings.Fields(section)[1]] = s
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rep
}

// summarize reads a capture through blktrace.Open and returns its summary.
func summarize(t testing.TB, name string, opts stats.SummaryOptions) stats.Summary {
	t.Helper()
	in, err := blktrace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s := stats.NewSummarizer(opts)
	for {
		e, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s.Add(&e)
	}
	d := in.Diagnostics()
	s.SetDiagnostics(d.DroppedEvents, d.MissingCPUFiles)
	return s.Result()
}

// checkBTT compares our btt-mode latency rows with btt's: N exactly, MIN and
// MAX to btt's nine decimals, AVG to within one unit of the last decimal.
func checkBTT(t *testing.T, sum stats.Summary, rep bttReport) {
	t.Helper()
	rows := map[string]stats.LatencyStats{
		"Q2C": sum.Latency.Q2C, "D2C": sum.Latency.D2C, "I2D": sum.Latency.I2D,
		"Q2G": sum.Latency.Q2G, "G2I": sum.Latency.G2I,
	}
	for _, name := range []string{"Q2G", "G2I", "I2D", "D2C", "Q2C"} {
		want, ok := rep.All[name]
		got := rows[name]
		if !ok {
			if got.N != 0 {
				t.Errorf("%s: btt has no row, we have n=%d", name, got.N)
			}
			continue
		}
		if got.N != want.N {
			t.Errorf("%s: n = %d, btt %d", name, got.N, want.N)
		}
		f9 := func(v float64) string { return fmt.Sprintf("%.9f", v) }
		if f9(got.Min) != f9(want.Min) || f9(got.Max) != f9(want.Max) {
			t.Errorf("%s: min/max = %s/%s, btt %s/%s", name, f9(got.Min), f9(got.Max), f9(want.Min), f9(want.Max))
		}
		if math.Abs(got.Avg-want.Avg) > 1.5e-9 {
			t.Errorf("%s: avg = %.9f, btt %.9f", name, got.Avg, want.Avg)
		}
	}
}

func TestSummaryMatchesBTTFixtures(t *testing.T) {
	for _, fx := range []string{"fx-bfq-2cg-w100-900", "fx-bfq-4seqread", "fx-mqdl-rw-nocg"} {
		t.Run(fx, func(t *testing.T) {
			dir := shared.Fixture(t, fx)
			rep := parseBTT(t, filepath.Join(dir, fx+".btt.txt"))
			sum := summarize(t, filepath.Join(dir, fx), stats.SummaryOptions{BTT: true})
			checkBTT(t, sum, rep)
			t.Logf("%s: Q2C %+v D2C %+v", fx, sum.Latency.Q2C, sum.Latency.D2C)
		})
	}
}

func TestSummaryMatchesBTTRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every recorded capture (about 10 s)")
	}
	root := shared.Path(t, "captures", "recorded")
	reports, _ := filepath.Glob(filepath.Join(root, "*", "*.btt.txt"))
	if len(reports) == 0 {
		t.Skip("no recorded captures")
	}
	for _, r := range reports {
		name := strings.TrimSuffix(r, ".btt.txt")
		t.Run(filepath.Base(name), func(t *testing.T) {
			rep := parseBTT(t, r)
			sum := summarize(t, name, stats.SummaryOptions{BTT: true})
			checkBTT(t, sum, rep)
		})
	}
}

// TestSummaryJSONKeys checks the keys docs/cli.md promises for stats --json,
// on a real fixture, and the native mode's values on it.
func TestSummaryJSONKeys(t *testing.T) {
	fx := "fx-bfq-2cg-w100-900"
	sum := summarize(t, filepath.Join(shared.Fixture(t, fx), fx), stats.SummaryOptions{})
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	get := func(path string) any {
		var cur any = m
		for _, k := range strings.Split(path, ".") {
			mm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = mm[k]
		}
		return cur
	}
	for _, p := range []string{"events.total", "events.by_action.Q", "events.by_action.T", "events.by_action.m",
		"requests.total", "requests.reads", "requests.writes", "requests.bytes_read", "requests.bytes_written",
		"latency.Q2C.n", "latency.Q2C.p99", "latency.D2C.min", "latency.Q2D.avg", "latency.I2D.max", "latency.Q2G.p50", "latency.G2I.n",
		"merges.back", "merges.front", "dropped_events", "missing_cpu_files", "cgroups", "processes", "seeks.Q2Q.nseeks", "devices"} {
		if get(p) == nil {
			t.Errorf("key %s missing", p)
		}
	}
	// 292 reads of 1 MiB, two cgroups (ids 1181, 1201), all completed.
	if sum.Requests.Total != 292 || sum.Requests.Reads != 292 || sum.Requests.BytesRead != 292<<20 {
		t.Errorf("requests %+v", sum.Requests)
	}
	if len(sum.Cgroups) != 2 || sum.Cgroups[0].ID != 1181 || sum.Cgroups[1].ID != 1201 ||
		sum.Cgroups[0].Bytes+sum.Cgroups[1].Bytes != sum.Requests.BytesRead {
		t.Errorf("cgroups %+v", sum.Cgroups)
	}
	if sum.Events.ByAction["Q"] != 292 || sum.Events.ByAction["m"] != 6688 {
		t.Errorf("by_action %v", sum.Events.ByAction)
	}
	// Percentiles lie within [min, max] and in order.
	for name, l := range map[string]stats.LatencyStats{"Q2C": sum.Latency.Q2C, "D2C": sum.Latency.D2C} {
		if !(l.Min <= l.P50 && l.P50 <= l.P99 && l.P99 <= l.Max) {
			t.Errorf("%s: %+v", name, l)
		}
	}
}
