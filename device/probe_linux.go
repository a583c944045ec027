//go:build linux

package device

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/tracesched/tracesched/trace"
)

// ErrDirectIO is returned when the target refuses O_DIRECT (tmpfs, some
// network file systems).
var ErrDirectIO = errors.New("direct I/O refused")

// ErrInUse is returned when a block device to be written is held by
// someone else: mounted, a swap area, or claimed by another driver (md,
// device mapper), which is what O_EXCL on a block device refuses.
var ErrInUse = errors.New("in use (mounted, swap, or held by another driver)")

// OpenDirect opens path for direct I/O, read-only unless write. A block
// device opened for writing is opened exclusively (O_EXCL): ErrInUse when
// something holds it.
func OpenDirect(path string, write bool) (*os.File, error) {
	flag := syscall.O_RDONLY
	if write {
		flag = syscall.O_RDWR
		if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0 {
			flag |= syscall.O_EXCL
		}
	}
	fd, err := syscall.Open(path, flag|syscall.O_DIRECT|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.EINVAL):
			return nil, fmt.Errorf("%s: %w", path, ErrDirectIO)
		case flag&syscall.O_EXCL != 0 && errors.Is(err, syscall.EBUSY):
			return nil, fmt.Errorf("%s: %w", path, ErrInUse)
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
// depth; and with Writes a flush step), one thread keeps Depth requests in
// flight with Linux AIO (as fio's libaio engine), each timed from its
// io_submit to the io_getevents that reaped it. Steps are 2 ms apart so
// that no request of one is in flight with another's. Each step gets an
// equal share of the time left when it starts (a step runs on past its
// share until its requests in flight complete, and the next ones are
// shorter), at least minProbeStep: the sweep ends within about one step's
// drain of the budget, and a step the time left has no room for is
// skipped (ProbeResult.Skipped).
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
	if keep := max(int(opts.Budget/(minProbeStep+gap)), 1); keep < len(steps) {
		// Too many steps for the budget: keep an even spread of the
		// shuffled grid rather than steps too short to mean anything,
		// and the flush steps (the model's only flushes: one cell).
		var kept, rest []ProbeStep
		for _, st := range steps {
			if st.Flush {
				kept = append(kept, st)
			} else {
				rest = append(rest, st)
			}
		}
		if n := keep - len(kept); n > 0 {
			stride := float64(len(rest)) / float64(n)
			for i := 0; i < n; i++ {
				kept = append(kept, rest[int(float64(i)*stride)])
			}
		}
		res.Skipped = len(steps) - len(kept)
		steps = kept
	}
	start := opts.Now()
	end := start.Add(opts.Budget)
	var id uint64
	fd := int(f.Fd())
	depth := 1
	for _, st := range steps {
		depth = max(depth, st.Depth)
	}
	ctx, err := ioSetup(depth)
	if err != nil {
		return nil, fmt.Errorf("io_setup: %w", err)
	}
	defer ctx.destroy()
	for i, st := range steps {
		per := end.Sub(opts.Now())/time.Duration(len(steps)-i) - gap
		if int64(st.Size) > region || per < minProbeStep/2 {
			res.Skipped++
			continue
		}
		per = max(per, minProbeStep)
		slots := region / int64(st.Size)
		first := len(res.Requests)
		var reqs []trace.Request
		if st.Flush {
			reqs, err = flushStep(f, st, slots, start, opts.Now().Add(per), opts.Now, &id)
		} else {
			reqs, err = aioStep(ctx, fd, st, slots, start, opts.Now().Add(per), opts.Now, &id, f.Name())
		}
		if err != nil {
			return nil, err
		}
		if len(reqs) == 0 {
			res.Skipped++
			continue
		}
		sp := ProbeSpan{First: first, End: first + len(reqs), Start: reqs[0].Issue, Stop: reqs[0].Complete}
		for _, q := range reqs {
			sp.Start, sp.Stop = min(sp.Start, q.Issue), max(sp.Stop, q.Complete)
		}
		res.Steps = append(res.Steps, st)
		res.Spans = append(res.Spans, sp)
		res.Requests = append(res.Requests, reqs...)
		for t := opts.Now().Add(gap); opts.Now().Before(t); {
			time.Sleep(gap / 4)
		}
	}
	return res, nil
}

// minProbeStep is the shortest step Probe runs.
const minProbeStep = 10 * time.Millisecond

// flushStep runs a flush step until deadline: one random direct write of
// st.Size, then fdatasync, one after the other, each timed from its system
// call to its return. The flush is a zero-byte request of the flush class
// (trace.CatFlush), as blktrace shows the flush machinery's own flushes
// (FN).
func flushStep(f *os.File, st ProbeStep, slots int64, start, deadline time.Time, now func() time.Time, id *uint64) ([]trace.Request, error) {
	buf := alignedBuf(int(st.Size))
	fd := int(f.Fd())
	rng := uint64(0x9E3779B97F4A7C15)
	var out []trace.Request
	for now().Before(deadline) {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		off := int64(rng%uint64(slots)) * int64(st.Size)
		t0 := now()
		n, err := syscall.Pwrite(fd, buf, off)
		t1 := now()
		if err != nil {
			return nil, fmt.Errorf("%s: %s at offset %d: %w", f.Name(), st, off, err)
		}
		if n != len(buf) {
			return nil, fmt.Errorf("%s: %s at offset %d: short write %d", f.Name(), st, off, n)
		}
		if err := syscall.Fdatasync(fd); err != nil {
			return nil, fmt.Errorf("%s: %s: fdatasync: %w", f.Name(), st, err)
		}
		t2 := now()
		w, fl := trace.Time(t0.Sub(start)), trace.Time(t1.Sub(start))
		*id++
		out = append(out, trace.Request{ID: *id, Sector: uint64(off / 512), Bytes: st.Size, Cat: trace.CatWrite | trace.CatSync, Bios: 1,
			Queue: w, Get: w, Insert: w, Issue: w, Complete: fl})
		*id++
		out = append(out, trace.Request{ID: *id, Cat: trace.CatWrite | trace.CatFlush, Bios: 1,
			Queue: fl, Get: fl, Insert: fl, Issue: fl, Complete: trace.Time(t2.Sub(start))})
	}
	return out, nil
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
