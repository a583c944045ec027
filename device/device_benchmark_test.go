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
	mult := expSample(5000) // multipliers of mean 1 (the samples' is 1e5 ns)
	for i := range mult {
		mult[i] /= 1e5
	}
	flash.NonRotational.Read.Residual = QuantilesOf(mult, 1024)
	disk := diskModel()
	disk.Rotational.Residual = QuantilesOf(expSample(5000), 1024)
	// As a probe's: a curve per class and size band, 4 KiB to 1 MiB, at
	// every depth from 1 to 64, with residual tables by load bucket.
	curves := flashModel()
	curves.NonRotational.Read.Residual = flash.NonRotational.Read.Residual
	curves.NonRotational.DepthWindow = 500 * time.Microsecond
	res := QuantilesOf(mult, 256)
	for _, op := range []string{"read", "write"} {
		for sz := uint32(4096); sz <= 1<<20; sz *= 4 {
			c := DepthCurve{Op: op, Bytes: sz, Residual: res}
			for d := 1; d <= 64; d++ {
				c.Depths = append(c.Depths, d)
				c.Factors = append(c.Factors, 1+0.1*float64(d-1))
			}
			for range InflightBucket(64) + 1 {
				c.ByInflight = append(c.ByInflight, res)
			}
			curves.NonRotational.Curves = append(curves.NonRotational.Curves, c)
		}
	}
	for _, c := range []struct {
		name  string
		m     *Model
		depth int
	}{
		{"nonrotational/depth1", flash, 1},
		{"nonrotational/depth32", flash, 32},
		{"nonrotational-curves/depth1", curves, 1},
		{"nonrotational-curves/depth32", curves, 32},
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
