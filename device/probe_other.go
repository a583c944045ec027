//go:build !linux

package device

import (
	"errors"
	"os"
)

// ErrDirectIO is returned when the target refuses direct I/O; off Linux,
// always.
var ErrDirectIO = errors.New("direct I/O refused")

// ErrInUse is returned when a block device to be written is held by
// someone else; off Linux, never (nothing opens).
var ErrInUse = errors.New("in use (mounted, swap, or held by another driver)")

// OpenDirect is available on Linux only.
func OpenDirect(path string, write bool) (*os.File, error) { return nil, ErrDirectIO }

// TargetSize is available on Linux only.
func TargetSize(f *os.File) (int64, error) { return 0, ErrDirectIO }

// HoldsData is available on Linux only.
func HoldsData(f *os.File, size int64) (bool, error) { return false, ErrDirectIO }

// Probe is available on Linux only.
func Probe(f *os.File, opts ProbeOptions) (*ProbeResult, error) { return nil, ErrDirectIO }

// CreateZeroFile is available on Linux only.
func CreateZeroFile(path string, size int64) error { return ErrDirectIO }
