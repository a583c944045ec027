package device

import (
	"math"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// benchmarkIssueDone measures one Issue and one Done per request, with
// depth requests kept on the device.
func benchmarkIssueDone(b *testing.B, m *Model, depth int) {
	rqs := make([]replay.Request, 4096)
	for i := range rqs {
		rqs[i] = replay.Request{ID: uint64(i + 1), Sector: uint64(i*7919) % (1 << 24) * 8, Bytes: 4096, Cat: trace.CatRead}
		if i%3 == 0 {
			rqs[i].Cat = trace.CatWrite
		}
	}
	dev := m.NewDevice(1)
	now := trace.Time(0)
	for i := 0; i < depth; i++ {
		dev.Issue(now, &rqs[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		old := &rqs[i%len(rqs)]
		dev.Done(now, old)
		now += 10000
		dev.Issue(now, &rqs[(i+depth)%len(rqs)])
	}
}

func BenchmarkIssueDone(b *testing.B) {
	flash := flashModel()
	flash.NonRotational.Read.Residual = QuantilesOf(expSample(5000), 1024)
	disk := diskModel()
	disk.Rotational.Residual = QuantilesOf(expSample(5000), 1024)
	for _, c := range []struct {
		name  string
		m     *Model
		depth int
	}{
		{"nonrotational/depth1", flash, 1},
		{"nonrotational/depth32", flash, 32},
		{"rotational/depth1", disk, 1},
		{"rotational/depth32", disk, 32},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkIssueDone(b, c.m, c.depth) })
	}
}

func BenchmarkCalibrate(b *testing.B) {
	reqs := Synthesize(flashModel(), Workload{Streams: 8, Requests: 10000, Think: 200 * time.Microsecond}, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Calibrate(reqs, CalibrateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func expSample(n int) []float64 {
	out := make([]float64, n)
	x := uint64(88172645463325252)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u := float64(x>>11) / (1 << 53)
		out[i] = 1e5 * -math.Log1p(-u)
	}
	return out
}
