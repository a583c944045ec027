package blktrace

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// maxZstdWindow is the largest zstd window the reader accepts (1 GiB,
// `zstd --long=30`): a decoder holds that much history per stream, and a
// per-CPU set decodes every file at once.
const maxZstdWindow = 1 << 30

// explainRead says what a read error of the (decompressed) stream means
// for the user: a compressed file cut short, or a zstd window larger than
// maxZstdWindow, with how to fix it. Callers put the file and position
// around it.
func explainRead(err error) error {
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded):
		return fmt.Errorf("%w: the file's zstd window is larger than the %d MiB this reader allows (it was compressed with --long=31 or more); recompress it with `zstd --long=30` or less, or without --long", err, maxZstdWindow>>20)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("compressed data cut short (%w): the file is truncated", err)
	}
	return err
}
