//go:build linux

package device

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/tracesched/tracesched/trace"
)

// Linux AIO (io_setup/io_submit/io_getevents), the interface fio's libaio
// engine uses: one thread keeps Depth requests in flight, so the times
// measured are the device's and the kernel's, not those of Depth threads
// waiting for a CPU.

// iocb is struct iocb (include/uapi/linux/aio_abi.h, little endian).
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   int32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// ioEvent is struct io_event.
type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
)

type aioCtx uintptr

func ioSetup(n int) (aioCtx, error) {
	var ctx aioCtx
	if _, _, e := syscall.Syscall(syscall.SYS_IO_SETUP, uintptr(n), uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return 0, e
	}
	return ctx, nil
}

func (c aioCtx) destroy() { syscall.Syscall(syscall.SYS_IO_DESTROY, uintptr(c), 0, 0) }

func (c aioCtx) submit(cbs []*iocb) (int, error) {
	n, _, e := syscall.Syscall(syscall.SYS_IO_SUBMIT, uintptr(c), uintptr(len(cbs)), uintptr(unsafe.Pointer(&cbs[0])))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func (c aioCtx) getEvents(min int, evs []ioEvent) (int, error) {
	for {
		n, _, e := syscall.Syscall6(syscall.SYS_IO_GETEVENTS, uintptr(c), uintptr(min), uintptr(len(evs)), uintptr(unsafe.Pointer(&evs[0])), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// submitEach submits the iocbs one io_submit each (as fio's libaio engine
// does by default, iodepth_batch_submit=1), each timed from just before
// its call, counting those submitted in *inflight, and returns how many
// were. One call for several iocbs would plug them together, and the
// block layer would merge a sequential step's neighbours into larger
// requests than the step's size (2.6 million of the loop device's reads
// were merged so in this change's first probes), timed as if each were its own.
func submitEach(ctx aioCtx, cbs []*iocb, issued []time.Time, now func() time.Time, inflight *int) (int, error) {
	for i, cb := range cbs {
		issued[cb.data] = now()
		if n, err := ctx.submit(cbs[i : i+1]); err != nil || n != 1 {
			return i, err
		}
		*inflight++
	}
	return len(cbs), nil
}

// aioStep runs one step of the sweep with Linux AIO on ctx (set up for at
// least st.Depth events, none in flight; one context serves the whole
// sweep, as io_destroy waits for an RCU grace period, tens of
// milliseconds) until deadline and returns its requests, timed from
// io_submit to the io_getevents return that reaped them, ns since start.
// All its requests have completed when it returns, also on error (the
// kernel must not write into buffers the collector may reuse).
func aioStep(ctx aioCtx, fd int, st ProbeStep, slots int64, start, deadline time.Time, now func() time.Time, id *uint64, name string) ([]trace.Request, error) {
	cbs := make([]iocb, st.Depth)
	bufs := make([][]byte, st.Depth)
	issued := make([]time.Time, st.Depth)
	offs := make([]int64, st.Depth)
	var seq int64
	rng := uint64(st.Size)*0x9E3779B97F4A7C15 | 1
	next := func() int64 {
		if st.Sequential {
			s := seq % slots
			seq++
			return s * int64(st.Size)
		}
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int64(rng%uint64(slots)) * int64(st.Size)
	}
	op := uint16(iocbCmdPread)
	cat := trace.CatRead
	if st.Write {
		op, cat = iocbCmdPwrite, trace.CatWrite|trace.CatSync
	}
	prep := func(i int) *iocb {
		offs[i] = next()
		cbs[i] = iocb{data: uint64(i), opcode: op, fildes: uint32(fd), buf: uint64(uintptr(unsafe.Pointer(&bufs[i][0]))),
			nbytes: uint64(st.Size), offset: offs[i]}
		return &cbs[i]
	}
	var out []trace.Request
	ptrs := make([]*iocb, 0, st.Depth)
	for i := range cbs {
		bufs[i] = alignedBuf(int(st.Size))
		ptrs = append(ptrs, prep(i))
	}
	inflight := 0
	n, err := submitEach(ctx, ptrs, issued, now, &inflight)
	evs := make([]ioEvent, st.Depth)
	fail := func(err error) ([]trace.Request, error) {
		for inflight > 0 {
			n, gerr := ctx.getEvents(1, evs)
			if gerr != nil {
				break // io_destroy waits for the rest
			}
			inflight -= n
		}
		return nil, err
	}
	if err != nil || n != len(ptrs) {
		return fail(fmt.Errorf("%s: io_submit %s: %d of %d, %v", name, st, n, len(ptrs), err))
	}
	for inflight > 0 {
		n, err := ctx.getEvents(1, evs)
		if err != nil {
			return fail(fmt.Errorf("%s: io_getevents %s: %w", name, st, err))
		}
		t1 := now()
		inflight -= n
		ptrs = ptrs[:0]
		for _, ev := range evs[:n] {
			i := int(ev.data)
			if ev.res != int64(st.Size) {
				if ev.res < 0 {
					return fail(fmt.Errorf("%s: %s at offset %d: %w", name, st, offs[i], syscall.Errno(-ev.res)))
				}
				return fail(fmt.Errorf("%s: %s at offset %d: short transfer %d", name, st, offs[i], ev.res))
			}
			*id++
			at := trace.Time(issued[i].Sub(start))
			out = append(out, trace.Request{ID: *id, Sector: uint64(offs[i] / 512), Bytes: st.Size, Cat: cat, Bios: 1,
				Queue: at, Get: at, Insert: at, Issue: at, Complete: trace.Time(t1.Sub(start))})
			if t1.Before(deadline) {
				ptrs = append(ptrs, prep(i))
			}
		}
		if len(ptrs) > 0 {
			if m, err := submitEach(ctx, ptrs, issued, now, &inflight); err != nil || m != len(ptrs) {
				return fail(fmt.Errorf("%s: io_submit %s: %d of %d, %v", name, st, m, len(ptrs), err))
			}
		}
	}
	return out, nil
}
