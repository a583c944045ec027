package blktrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
)

// benchOpen reads the whole input behind name once per iteration, through
// Open (zstd decompression, per-CPU merge, rebasing, comm filling), and
// reports events/s. SetBytes uses the decompressed size.
func benchOpen(b *testing.B, name string) {
	var rawBytes int64
	files, _ := filepath.Glob(filepath.Join(name, "*.blktrace.*"))
	if len(files) == 0 {
		files, _ = filepath.Glob(name + ".blktrace.*")
	}
	for _, f := range files {
		if filepath.Ext(f) == ".zst" {
			rawBytes += int64(len(zstdFile(b, f)))
		} else if fi, err := os.Stat(f); err == nil {
			rawBytes += fi.Size()
		}
	}
	b.SetBytes(rawBytes)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		in, err := Open(name)
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			_, err := in.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		in.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchDecode measures decoding alone: one per-CPU file already
// decompressed in memory.
func benchDecode(b *testing.B, raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(raw), "mem")
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			_, err := r.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkReadEvent(b *testing.B) {
	b.Run("fixture/fx-mqdl-rw-nocg", func(b *testing.B) {
		benchOpen(b, shared.Fixture(b, "fx-mqdl-rw-nocg"))
	})
	b.Run("fixture/fx-bfq-2cg-w100-900", func(b *testing.B) {
		benchOpen(b, shared.Fixture(b, "fx-bfq-2cg-w100-900"))
	})
	b.Run("decode/fx-bfq-2cg-w100-900.0", func(b *testing.B) {
		benchDecode(b, zstdFile(b, fixtureFile(b, "fx-bfq-2cg-w100-900", ".blktrace.0.zst")))
	})
	b.Run("recorded/g-bfq-large-nomsg", func(b *testing.B) {
		benchOpen(b, shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg"))
	})
	// Any input, e.g. the files blkparse is timed on:
	// TRACESCHED_BENCH_INPUT=/tmp/bp/g-nocg go test -bench ReadEvent/env
	if p := os.Getenv("TRACESCHED_BENCH_INPUT"); p != "" {
		b.Run("env", func(b *testing.B) { benchOpen(b, p) })
	}
	b.Run("decode/g-bfq-large-nomsg.1", func(b *testing.B) {
		dir := shared.Path(b, "captures", "recorded", "g-bfq-large-nomsg")
		benchDecode(b, zstdFile(b, filepath.Join(dir, "g-bfq-large-nomsg.blktrace.1.zst")))
	})
}
