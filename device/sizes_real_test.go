package device

import "testing"

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
	reqs := readRequestsInternal(t, "testdata/wi-mix4-bfq-a.DC.blkparse.txt.zst")
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
