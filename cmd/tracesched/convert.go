package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

type convertOptions struct {
	inputs []string
	out    string
	events string
	mf     manifestFlags
	format string
}

func newConvertCmd(ios *IOStreams) *cobra.Command {
	opts := &convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert INPUT... -o OUT.arrow [--events EVENTS.arrow]",
		Short: "Convert a capture to Arrow request and event streams",
		Long: `Convert reads one or more captures and writes the requests rebuilt from them (one row
per request: queue, get, insert, issue and complete times, merges, requeues, remaps) to
OUT as a zstd-compressed Arrow IPC file; with --events, every event, scheduler messages
included, to EVENTS. Several inputs (captures of several devices taken together) are
merged by time on a common origin. Outputs are written atomically: no partial file is
left behind on failure.`,
		Example: `  # Requests of a per-CPU capture, and all its events
  $ tracesched convert sda -o sda.req.arrow --events sda.ev.arrow`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.inputs = args
			if opts.out == "" {
				return usagef("convert needs -o OUT.arrow")
			}
			if i := slices.Index(args, "-"); i >= 0 && slices.Contains(args[i+1:], "-") {
				return usagef("standard input (-) named more than once")
			}
			if opts.events != "" && opts.events == opts.out {
				return usagef("-o and --events name the same file")
			}
			if opts.format != formatArrow && opts.format != formatParquet {
				return usagef("--format is arrow or parquet, not %q", opts.format)
			}
			return convertRun(cmd.Context(), ios, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "request stream `FILE` (Arrow IPC, zstd)")
	cmd.Flags().StringVar(&opts.events, "events", "", "also write every event to `FILE` (Arrow IPC, zstd)")
	opts.mf.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.format, "format", formatArrow, "output `FORMAT`: arrow (IPC files) or parquet (same columns and metadata)")
	return cmd
}

func convertRun(ctx context.Context, ios *IOStreams, opts *convertOptions) (err error) {
	src, err := openInputs(ctx, opts.inputs)
	if err != nil {
		return err
	}
	defer src.Close()

	reqFile, err := createAtomic(ctx, ios, opts.out)
	if err != nil {
		return err
	}
	defer reqFile.Abort()
	reqW, err := newRequestSink(reqFile, opts.format)
	if err != nil {
		return err
	}
	var evFile *atomicFile
	var evW eventSink
	if opts.events != "" {
		if evFile, err = createAtomic(ctx, ios, opts.events); err != nil {
			return err
		}
		defer evFile.Abort()
		if evW, err = newEventSink(evFile, opts.format); err != nil {
			return err
		}
	}

	// Reading and rebuilding run here; each writer encodes on a goroutine of
	// its own (see writeStage), so that convert uses a second core.
	reqs := startWriteStage(stageSlabs, reqSlab, reqW.Write)
	defer reqs.stop()
	var evs *writeStage[trace.Event]
	if evW != nil {
		evs = startWriteStage(stageSlabs, eventSlab, evW.Write)
		defer evs.stop()
	}
	rb := trace.NewRebuilder(func(r *trace.Request) { *reqs.next() = *r }, nil)
	prog := newProgress(ios, "convert")
	prog.track(src)
	defer prog.Done()
	// Events are read straight into the event writer's slab when the
	// source can (a blktrace input).
	readInto, _ := src.(interface{ ReadEventInto(*trace.Event) error })
	var ev trace.Event
	for n := 0; ; n++ {
		p := &ev
		if evs != nil {
			p = evs.next()
		}
		var err error
		if readInto != nil {
			err = readInto.ReadEventInto(p)
		} else {
			*p, err = src.ReadEvent()
		}
		if err != nil {
			if evs != nil {
				evs.unnext()
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		rb.Add(p)
		if n&(eventSlab-1) == 0 {
			// A failed writer stops the conversion early.
			if evs != nil && evs.failed.Load() {
				return fmt.Errorf("writing %s: %w", opts.events, evs.finish())
			}
			if reqs.failed.Load() {
				return fmt.Errorf("writing %s: %w", opts.out, reqs.finish())
			}
		}
		prog.Add(1)
	}
	rb.Close()
	if err := reqs.finish(); err != nil {
		return fmt.Errorf("writing %s: %w", opts.out, err)
	}
	if evs != nil {
		if err := evs.finish(); err != nil {
			return fmt.Errorf("writing %s: %w", opts.events, err)
		}
	}
	meta := src.Meta()
	if mctx, err := opts.mf.load(opts.inputs[0]); err != nil {
		return err
	} else {
		meta = mctx.manifestExtra(meta)
	}
	reqW.SetMeta(meta)
	if err := reqW.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", opts.out, err)
	}
	if evW != nil {
		evW.SetMeta(meta)
		if err := evW.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", opts.events, err)
		}
		if err := evFile.Commit(); err != nil {
			return err
		}
	}
	if err := reqFile.Commit(); err != nil {
		return err
	}
	prog.Done()
	reportDiagnostics(ios, opts.inputs[0], src)
	st := rb.Stats()
	fmt.Fprintf(ios.ErrOut, "tracesched: %d requests to %s\n", st.Requests, opts.out)
	return nil
}

// Pipeline sizes: slabs per stage and items per slab (a power of two for
// events). A stage holds at most stageSlabs slabs (4 x 2048 events of 168
// bytes: 1.3 MiB), whatever the capture's length; small slabs stay in the
// caches of the cores they move between.
const (
	stageSlabs = 4
	eventSlab  = 2048
	reqSlab    = 1024
)

// writeStage writes items on a goroutine of its own. The producer fills
// slabs taken from a fixed pool and hands each full one over in order, so
// the writes are exactly those of writing each item in turn; memory is
// bounded by the pool. The first write error stops the writes (the later
// slabs are recycled unwritten), sets failed and is returned by finish.
type writeStage[T any] struct {
	write  func(*T) error
	work   chan []T
	free   chan []T
	done   chan struct{}
	cur    []T
	closed bool
	failed atomic.Bool
	err    error // the first write error; read after done is closed
}

func startWriteStage[T any](slabs, size int, write func(*T) error) *writeStage[T] {
	s := &writeStage[T]{
		write: write,
		work:  make(chan []T, slabs),
		free:  make(chan []T, slabs),
		done:  make(chan struct{}),
		cur:   make([]T, 0, size),
	}
	for range slabs - 1 {
		s.free <- make([]T, 0, size)
	}
	go s.run()
	return s
}

func (s *writeStage[T]) run() {
	defer close(s.done)
	for b := range s.work {
		for i := range b {
			if s.err != nil {
				break
			}
			if err := s.write(&b[i]); err != nil {
				s.err = err
				s.failed.Store(true)
			}
		}
		// Not cleared: the producer overwrites every item it reuses, and the
		// strings items keep alive meanwhile are bounded by the pool.
		s.free <- b[:0]
	}
}

// next returns the next item to fill, handing the current slab over when
// it is full. The item belongs to the stage once next is called again.
func (s *writeStage[T]) next() *T {
	if len(s.cur) == cap(s.cur) {
		s.work <- s.cur
		s.cur = <-s.free
	}
	s.cur = s.cur[:len(s.cur)+1]
	return &s.cur[len(s.cur)-1]
}

// unnext takes back the item the last next returned.
func (s *writeStage[T]) unnext() {
	var zero T
	s.cur[len(s.cur)-1] = zero
	s.cur = s.cur[:len(s.cur)-1]
}

// finish hands over the last items, waits for them to be written and
// returns the first write error.
func (s *writeStage[T]) finish() error {
	if !s.closed {
		s.closed = true
		if len(s.cur) > 0 {
			s.work <- s.cur
		}
		s.cur = nil
		close(s.work)
	}
	<-s.done
	return s.err
}

// stop ends the stage, dropping what was not handed over; safe to defer.
func (s *writeStage[T]) stop() {
	if !s.closed {
		s.closed = true
		s.cur = nil
		close(s.work)
	}
	<-s.done
}

// openInputs opens every INPUT and, when there are several, merges them by
// time on a common origin: each input counts time from its own first
// event, so each is shifted by its origin's distance from the earliest one.
func openInputs(ctx context.Context, names []string) (source, error) {
	if len(names) == 1 {
		return openInput(ctx, names[0])
	}
	if err := distinctInputs(names); err != nil {
		return nil, err
	}
	var srcs []*peeked
	closeAll := func() {
		for _, s := range srcs {
			s.Close()
		}
	}
	for _, name := range names {
		s, err := openInput(ctx, name)
		if err != nil {
			closeAll()
			return nil, err
		}
		p := &peeked{source: s}
		ev, err := s.ReadEvent()
		switch {
		case errors.Is(err, io.EOF):
			p.eof = true
		case err != nil:
			s.Close()
			closeAll()
			return nil, err
		default:
			p.first = ev
		}
		srcs = append(srcs, p)
	}
	origin := int64(0)
	for i, s := range srcs {
		if o := s.Meta().Origin; i == 0 || o < origin {
			origin = o
		}
	}
	readers := make([]trace.EventReader, len(srcs))
	for i, s := range srcs {
		s.shift = trace.Time(s.Meta().Origin - origin)
		readers[i] = s
	}
	return &mergedSource{MergeReader: blktrace.NewMergeReader(readers...), srcs: srcs, origin: origin}, nil
}

// peeked is a source whose first event was read ahead, shifted in time.
type peeked struct {
	source
	first trace.Event
	eof   bool
	used  bool
	shift trace.Time
}

func (p *peeked) ReadEvent() (trace.Event, error) {
	if !p.used {
		p.used = true
		if p.eof {
			return trace.Event{}, io.EOF
		}
		ev := p.first
		ev.Time += p.shift
		return ev, nil
	}
	ev, err := p.source.ReadEvent()
	ev.Time += p.shift
	return ev, err
}

// mergedSource is several inputs read as one.
type mergedSource struct {
	*blktrace.MergeReader
	srcs   []*peeked
	origin int64
}

func (m *mergedSource) Meta() trace.Meta {
	meta := m.srcs[0].Meta()
	meta.Origin = m.origin
	devs := map[trace.Dev]bool{}
	for _, s := range m.srcs {
		sm := s.Meta()
		for _, d := range sm.Devices {
			devs[d] = true
		}
		for id, p := range sm.Cgroups {
			if meta.Cgroups == nil {
				meta.Cgroups = map[uint64]string{}
			}
			meta.Cgroups[id] = p
		}
	}
	meta.Devices = meta.Devices[:0:0]
	for d := range devs {
		meta.Devices = append(meta.Devices, d)
	}
	sort.Slice(meta.Devices, func(i, j int) bool { return meta.Devices[i] < meta.Devices[j] })
	return meta
}

func (m *mergedSource) Close() error {
	var first error
	for _, s := range m.srcs {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Diagnostics sums the inputs' diagnostics.
func (m *mergedSource) Diagnostics() blktrace.Diagnostics {
	var d blktrace.Diagnostics
	for _, s := range m.srcs {
		if x, ok := s.source.(diagnoser); ok {
			sd := x.Diagnostics()
			d.Files = append(d.Files, sd.Files...)
			d.MissingCPUFiles = append(d.MissingCPUFiles, sd.MissingCPUFiles...)
			d.DroppedEvents += sd.DroppedEvents
			d.CPUMismatch += sd.CPUMismatch
			d.UnknownActions += sd.UnknownActions
		}
	}
	return d
}

// distinctInputs refuses two INPUTs that name one capture: any file of a
// per-CPU set opens the whole set, so NAME.blktrace.0 and NAME.blktrace.1
// given together would read every event twice.
func distinctInputs(names []string) error {
	seen := map[string]string{}
	for _, n := range names {
		if n == "-" {
			continue // standard input twice is refused with the arguments
		}
		set := blktrace.SetOf(n)
		if first, ok := seen[set]; ok {
			return usagef("%s and %s are one capture (%s: any file of a per-CPU set opens the whole set); give it once", first, n, set)
		}
		seen[set] = n
	}
	return nil
}
