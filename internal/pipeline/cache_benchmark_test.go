package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/tracesched/tracesched/device"
)

// BenchmarkCacheKey: the cache key of the recorded 10 s BFQ capture's
// requests read from the side one at a time, as a warm replay looks its
// fit up (KeySeq over DeviceRequestSeq), against the fixed-width packing of
// cache version 3 (82 bytes a request) hashed the same way. Compare the two
// side by side:
//
//	go test -run '^$' -bench CacheKey -cpu 1 ./internal/pipeline
func BenchmarkCacheKey(b *testing.B) {
	c := readCapture(b, benchCapture(b))
	cache := &Cache{Program: "bench"}
	opts := device.CalibrateOptions{Seed: 1}
	n := c.Real.NumRequests()
	b.Run("varint", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			cache.KeySeq(c.DeviceRequestSeq(), opts)
		}
		b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-c0).Seconds(), "requests/cpu-s")
	})
	b.Run("fixed", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			keyFixed(c)
		}
		b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-c0).Seconds(), "requests/cpu-s")
	})
}

// keyFixed hashes the requests as cache version 3 packed them.
func keyFixed(c *Capture) [32]byte {
	h := sha256.New()
	const perReq = 8*8 + 4*4 + 2
	buf := make([]byte, 0, 256*perReq)
	le := binary.LittleEndian
	for r := range c.DeviceRequestSeq() {
		buf = le.AppendUint64(buf, r.ID)
		buf = le.AppendUint64(buf, r.Sector)
		buf = le.AppendUint32(buf, r.Bytes)
		buf = le.AppendUint32(buf, uint32(r.Cat))
		buf = le.AppendUint32(buf, r.PID)
		buf = le.AppendUint64(buf, r.Cgroup)
		buf = le.AppendUint64(buf, uint64(r.Queue))
		buf = le.AppendUint64(buf, uint64(r.Insert))
		buf = le.AppendUint64(buf, uint64(r.Issue))
		buf = le.AppendUint64(buf, uint64(r.Complete))
		buf = le.AppendUint32(buf, r.Bios)
		buf = le.AppendUint16(buf, uint16(r.Flags))
		if len(buf)+perReq > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// cpuTime returns the process's CPU time (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
