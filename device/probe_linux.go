//go:build linux

package device

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// ErrDirectIO is returned when the target refuses O_DIRECT (tmpfs, some
// network file systems).
var ErrDirectIO = errors.New("direct I/O refused")

// OpenDirect opens path for direct I/O, read-only unless write.
func OpenDirect(path string, write bool) (*os.File, error) {
	flag := syscall.O_RDONLY
	if write {
		flag = syscall.O_RDWR
	}
	fd, err := syscall.Open(path, flag|syscall.O_DIRECT|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return nil, fmt.Errorf("%s: %w", path, ErrDirectIO)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// alignedBuf returns n bytes aligned to 4096.
func alignedBuf(n int) []byte {
	b := make([]byte, n+4096)
	off := int(uintptr(unsafe.Pointer(&b[0])) & 4095)
	if off != 0 {
		off = 4096 - off
	}
	return b[off : off+n]
}

// TargetSize returns the size of a block device or a file, bytes.
func TargetSize(f *os.File) (int64, error) {
	n, err := f.Seek(0, 2)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return 0, err
	}
	return n, nil
}

// HoldsData reports whether the target holds data: any non-zero byte in
// its first MiB or in 1 MiB at each of 62 offsets spread over it (a new or
// zero-filled target reads all zeros). It reads only.
func HoldsData(f *os.File, size int64) (bool, error) {
	const chunk = 1 << 20
	buf := alignedBuf(chunk)
	zero := make([]byte, chunk)
	var offs []int64
	for i := int64(0); i < 64; i++ {
		offs = append(offs, (size-chunk)*i/63/4096*4096)
	}
	for _, off := range offs {
		if off < 0 {
			off = 0
		}
		n, err := syscall.Pread(int(f.Fd()), buf, off)
		if err != nil {
			return false, fmt.Errorf("%s: reading at offset %d: %w", f.Name(), off, err)
		}
		if !bytes.Equal(buf[:n], zero[:n]) {
			return true, nil
		}
	}
	return false, nil
}

// Probe measures the target f (opened with OpenDirect; writable when
// opts.Writes) with a short sweep of direct I/O: for each step of the grid
// (read and, with Writes, write; random and sequential; each size; each
// depth), one thread keeps Depth requests in flight with Linux AIO (as
// fio's libaio engine) for an equal share of the budget, each timed from
// its io_submit to the io_getevents that reaped it. Steps are 2 ms apart
// so that no request of one is in flight with another's.
func Probe(f *os.File, opts ProbeOptions) (*ProbeResult, error) {
	opts = opts.withDefaults()
	size, err := TargetSize(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	region := size
	if opts.Region > 0 {
		region = min(region, opts.Region)
	}
	region = min(region, 4<<30)
	steps := opts.steps()
	res := &ProbeResult{}
	if len(steps) == 0 {
		return res, nil
	}
	const gap = 2 * time.Millisecond
	per := opts.Budget/time.Duration(len(steps)) - gap
	if per < 10*time.Millisecond {
		// Too many steps for the budget: keep every other depth and size
		// rather than steps too short to mean anything.
		keep := max(int(opts.Budget/(10*time.Millisecond)), 1)
		res.Skipped = len(steps) - keep
		stride := float64(len(steps)) / float64(keep)
		var kept []ProbeStep
		for i := 0; i < keep; i++ {
			kept = append(kept, steps[int(float64(i)*stride)])
		}
		steps, per = kept, 10*time.Millisecond
	}
	start := opts.Now()
	end := start.Add(opts.Budget)
	var id atomic.Uint64
	fd := int(f.Fd())
	for _, st := range steps {
		if int64(st.Size) > region || !opts.Now().Add(per).Before(end.Add(per/2)) {
			res.Skipped++
			continue
		}
		res.Steps = append(res.Steps, st)
		slots := region / int64(st.Size)
		var n uint64 = id.Load()
		reqs, err := aioStep(fd, st, slots, start, opts.Now().Add(per), opts.Now, &n, f.Name())
		if err != nil {
			return nil, err
		}
		id.Store(n)
		res.Requests = append(res.Requests, reqs...)
		for t := opts.Now().Add(gap); opts.Now().Before(t); {
			time.Sleep(gap / 4)
		}
	}
	return res, nil
}

// CreateZeroFile creates path (which must not exist) as a zero-filled file
// of size bytes, written, not sparse, so that reads reach the device.
func CreateZeroFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
