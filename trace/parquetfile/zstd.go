package parquetfile

import (
	"sync"
	_ "unsafe" // go:linkname

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// arrow-go v15's Parquet zstd codec builds a new zstd encoder for every
// data page it compresses (compress.zstdCodec.EncodeLevel, called by the
// page writer whatever the level): with its default concurrency and window
// that allocated and cleared megabytes per page, and made writing Parquet
// spend more time on encoder set-up and garbage collection than on
// encoding. v15 has no way to register a codec, so the codec table is
// reached by name and its zstd entry wrapped, once, at init: pages are then
// compressed by encoders kept in a pool (level 1, one goroutine each, no
// checksum, as the Arrow files' encoder), everything else (decoding,
// streams) goes to arrow-go's codec. The frames are standard zstd; every
// Parquet reader decodes them.
//
// BUG: this replaces the codec for every Parquet zstd writer of the
// program, which is what we want of a program that writes Parquet only
// through this package and the results table; a later arrow-go with
// compress.RegisterCodec makes it unnecessary.

//go:linkname parquetCodecs github.com/apache/arrow/go/v15/parquet/compress.codecs
var parquetCodecs map[compress.Compression]compress.Codec

func init() {
	if base, ok := parquetCodecs[compress.Codecs.Zstd]; ok {
		parquetCodecs[compress.Codecs.Zstd] = pooledZstd{Codec: base}
	}
}

// pooledZstd is arrow-go's zstd codec with pooled encoders for blocks.
type pooledZstd struct{ compress.Codec }

var zstdPool = sync.Pool{New: func() any {
	z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	return z
}}

func (pooledZstd) Encode(dst, src []byte) []byte {
	z := zstdPool.Get().(*zstd.Encoder)
	out := z.EncodeAll(src, dst[:0])
	zstdPool.Put(z)
	return out
}

// EncodeLevel ignores level: the writers of this program ask for level 1.
func (p pooledZstd) EncodeLevel(dst, src []byte, _ int) []byte { return p.Encode(dst, src) }
