package device

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/tracesched/tracesched/trace"
)

// readRequestsCSV reads testdata's requests as issue_ns,complete_ns,
// sector,bytes,R|W lines (zstd-compressed): what calibration reads of a
// capture (bench/whatif/record.sh's rig/wi-mix4-bfq-a, recorded on the
// fifth VM on 2026-12-03, its 18,618 requests).
func readRequestsCSV(tb testing.TB, name string) []trace.Request {
	tb.Helper()
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	var rs []trace.Request
	sc := bufio.NewScanner(d)
	for line := 1; sc.Scan(); line++ {
		p := strings.Split(sc.Text(), ",")
		if len(p) != 5 {
			tb.Fatalf("%s:%d: %d fields, want 5", name, line, len(p))
		}
		var v [4]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(p[i], 10, 64); err != nil {
				tb.Fatalf("%s:%d: %v", name, line, err)
			}
		}
		cat := trace.CatRead
		if p[4] == "W" {
			cat = trace.CatWrite | trace.CatSync
		}
		t := trace.Time(v[0])
		rs = append(rs, trace.Request{ID: uint64(line), Dev: 1, Sector: uint64(v[2]), Bytes: uint32(v[3]), Cat: cat, PID: 1,
			Queue: t, Get: t, Insert: t, Issue: t, Complete: trace.Time(v[1]), Bios: 1})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return rs
}

// On a capture of four fio jobs under BFQ (a psync 4 KiB random reader
// with nothing else on the device most of the time, 64 KiB random reads
// at depth 8, 1 MiB sequential reads at depth 2, 16 KiB random writes at
// depth 32), the loop device completes in bunches and one residual table
// for every read gives the 4 KiB reads the spread of the large ones:
// alone on the device they took 84 us on average (77 us p50, 99 us p90;
// computed from the capture), and the replay through BFQ drew them 86 us
// p50, 212 mean, 524 p90 without size bands (77, 90 and 102 with them).
// With the bands fitted on the bunches' openers the pooled demerit rises
// (35.5 % against 27.6 %: the 1 MiB reads set it) and the demerit by
// class and size falls (59 % against 103 %), on the half of the capture
// the bands were not fitted on too: they are kept.
func TestSizeBandsHeldOutRule(t *testing.T) {
	reqs := readRequestsCSV(t, "testdata/wi-mix4-bfq-a.requests.csv.zst")
	m, fit, err := Calibrate(reqs, CalibrateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	n := m.NonRotational
	if n == nil || n.Batching == nil {
		t.Fatalf("want a non-rotational model with batching: %s", fit)
	}
	sb := fit.SizeBands
	if sb == nil || !sb.Kept || !sb.BySizeRule {
		t.Fatalf("size bands %+v: want kept by the held-out rule", sb)
	}
	if !(sb.Demerit > sb.Without) || !(sb.BySize < sb.BySizeWithout) || !(sb.HeldOut < sb.HeldOutWithout) {
		t.Errorf("size bands %+v: want the pooled demerit up, by size down in-sample and held out", sb)
	}
	rd := n.Read
	i := nearestBand(rd.Sizes, 4096)
	if rd.Sizes[i].Bytes != 4096 {
		t.Fatalf("read bands %+v: none at 4 KiB", rd.Sizes)
	}
	// The 4 KiB band's own spread: the capture's p90 over p50 alone is
	// 99/77 = 1.29; the pooled table's was 524/86 = 6.1 in the replay.
	if q := rd.Sizes[i].Residual; q.At(0.9)/q.At(0.5) > 2 {
		t.Errorf("4 KiB residual p50 %.3f p90 %.3f: the spread of the large reads", q.At(0.5), q.At(0.9))
	}
	// Its mean latency, alone on the device: the capture's 84 us.
	within(t, "4 KiB read alone, mean", rd.mean(4096)*n.saturation(1)*rd.Sizes[i].Residual.Mean(), 84_000, 0.25)
}
