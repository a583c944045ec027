package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
)

// source is an opened INPUT: a stream of events with the capture's
// metadata and what the reader noticed on the way.
type source interface {
	trace.EventReader
	// Meta describes the capture; complete once ReadEvent returned io.EOF.
	Meta() trace.Meta
	Close() error
}

// diagnoser is implemented by sources that report gaps and drops.
type diagnoser interface {
	Diagnostics() blktrace.Diagnostics
}

// arrowMagic starts every Arrow IPC file.
var arrowMagic = []byte("ARROW1")

// openInput opens an INPUT of docs/cli.md: an Arrow event file written by
// `tracesched convert --events`, or anything parse/blktrace detects; "-" is
// standard input, copied to a temporary file on first use so that every
// pass of a command can read it. Reading stops with ctx's error once ctx is
// done.
func openInput(ctx context.Context, name string) (source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := name
	if name == "-" {
		p, err := sessionOf(ctx).stdinPath(ctx)
		if err != nil {
			return nil, err
		}
		path = p
	}
	src, err := openPath(path)
	if err != nil {
		if name == "-" {
			err = relabel(err, path, "standard input")
		}
		return nil, err
	}
	return newCtxSource(ctx, src), nil
}

// relabel replaces the spool file's name in err's text with what the user
// named ("standard input"), keeping err's chain.
func relabel(err error, from, to string) error {
	if !strings.Contains(err.Error(), from) {
		return fmt.Errorf("%s: %w", to, err)
	}
	return &relabelled{err: err, text: strings.ReplaceAll(err.Error(), from, to)}
}

type relabelled struct {
	err  error
	text string
}

func (e *relabelled) Error() string { return e.text }
func (e *relabelled) Unwrap() error { return e.err }

// openPath opens a file or per-CPU set by content.
func openPath(name string) (source, error) {
	if f, err := os.Open(name); err == nil {
		head := make([]byte, len(arrowMagic))
		n, _ := io.ReadFull(f, head)
		if n == len(head) && bytes.Equal(head, arrowMagic) {
			r, err := arrowfile.OpenEvents(f, arrowfile.WithName(name))
			if err != nil {
				f.Close()
				if herr := requestsFileHint(name, err); herr != err {
					return nil, herr
				}
				return nil, err // named by WithName
			}
			return &arrowSource{EventFileReader: r, f: f}, nil
		}
		f.Close()
	}
	in, err := blktrace.Open(name)
	if err != nil {
		return nil, err
	}
	return in, nil
}

// ctxSource is a source that fails with its context's error once the
// context is done, checked every ctxCheckEvents events.
type ctxSource struct {
	source
	ctx context.Context
	n   uint32
	// into and batch: source's in-place readers, when it has them (asked
	// once, not per event).
	into  interface{ ReadEventInto(*trace.Event) error }
	batch batchReader
}

// batchReader reads events in batches (blktrace.Input.ReadEventsInto):
// it fills evs, or fewer with the error that ended the stream.
type batchReader interface {
	ReadEventsInto(evs []trace.Event) (int, error)
}

func newCtxSource(ctx context.Context, src source) *ctxSource {
	s := &ctxSource{source: src, ctx: ctx}
	s.into, _ = src.(interface{ ReadEventInto(*trace.Event) error })
	s.batch, _ = src.(batchReader)
	return s
}

// ctxCheckEvents is how many events pass between checks of the context:
// a few microseconds of reading.
const ctxCheckEvents = 1 << 12

func (s *ctxSource) check() error {
	s.n++
	if s.n%ctxCheckEvents == 0 {
		return s.ctx.Err()
	}
	return nil
}

func (s *ctxSource) ReadEvent() (trace.Event, error) {
	if err := s.check(); err != nil {
		return trace.Event{}, err
	}
	return s.source.ReadEvent()
}

// ReadEventInto reads the next event into ev, in place when the source can.
func (s *ctxSource) ReadEventInto(ev *trace.Event) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.into != nil {
		return s.into.ReadEventInto(ev)
	}
	var err error
	*ev, err = s.source.ReadEvent()
	return err
}

// ReadEventsInto reads the next events into evs as batchReader does, one
// at a time when the source cannot read batches; the context is checked
// before each batch once ctxCheckEvents events have passed.
func (s *ctxSource) ReadEventsInto(evs []trace.Event) (int, error) {
	if s.batch == nil {
		for i := range evs {
			if err := s.ReadEventInto(&evs[i]); err != nil {
				return i, err
			}
		}
		return len(evs), nil
	}
	if s.n += uint32(len(evs)); s.n >= ctxCheckEvents {
		s.n = 0
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
	}
	return s.batch.ReadEventsInto(evs)
}

// Progress reports the bytes read and the input's size (0: unknown).
func (s *ctxSource) Progress() (done, total int64) {
	if p, ok := s.source.(progresser); ok {
		return p.Progress()
	}
	return 0, 0
}

// Diagnostics reports what the reader noticed (nothing, for Arrow inputs).
func (s *ctxSource) Diagnostics() blktrace.Diagnostics {
	if d, ok := s.source.(diagnoser); ok {
		return d.Diagnostics()
	}
	return blktrace.Diagnostics{}
}

// arrowSource is an Arrow event file opened as an input.
type arrowSource struct {
	*arrowfile.EventFileReader
	f *os.File
}

func (s *arrowSource) Close() error {
	err := s.EventFileReader.Close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// reportDiagnostics writes what the reader found missing or odd to stderr.
func reportDiagnostics(ios *IOStreams, name string, src source) {
	d, ok := src.(diagnoser)
	if !ok {
		return
	}
	diag := d.Diagnostics()
	if len(diag.MissingCPUFiles) > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s: per-CPU files missing for CPUs %v (the rest were read)\n", name, diag.MissingCPUFiles)
	}
	if diag.DroppedEvents > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s: %d events dropped by the tracer (sequence gaps)\n", name, diag.DroppedEvents)
	}
	if diag.CPUMismatch > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s: %d records name another CPU than their file's (read anyway; blkparse drops them)\n", name, diag.CPUMismatch)
	}
	if diag.UnknownActions > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s: %d records with unknown actions skipped\n", name, diag.UnknownActions)
	}
}

// readInput opens name, hands every event to fn in order, reports what the
// reader noticed on stderr, and returns the capture's metadata and
// diagnostics. Progress is drawn on a terminal's stderr under label.
func readInput(ctx context.Context, ios *IOStreams, name, label string, fn func(*trace.Event) error) (trace.Meta, blktrace.Diagnostics, error) {
	src, err := openInput(ctx, name)
	if err != nil {
		return trace.Meta{}, blktrace.Diagnostics{}, err
	}
	defer src.Close()
	prog := newProgress(ios, label)
	prog.track(src)
	err = drain(src, prog.Add, fn)
	prog.Done()
	if err != nil {
		return trace.Meta{}, blktrace.Diagnostics{}, err
	}
	reportDiagnostics(ios, name, src)
	var diag blktrace.Diagnostics
	if d, ok := src.(diagnoser); ok {
		diag = d.Diagnostics()
	}
	return src.Meta(), diag, nil
}

// drain reads every event of r into fn, calling tick after each (after
// each batch, with the batch's count, when r reads batches). The events
// are read into reused Events (fn must not keep the pointer).
func drain(r trace.EventReader, tick func(n uint64), fn func(*trace.Event) error) error {
	if br, ok := r.(batchReader); ok {
		return drainBatches(br, tick, fn)
	}
	into, _ := r.(interface{ ReadEventInto(*trace.Event) error })
	var ev trace.Event
	for {
		var err error
		if into != nil {
			err = into.ReadEventInto(&ev)
		} else {
			ev, err = r.ReadEvent()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&ev); err != nil {
			return err
		}
		tick(1)
	}
}

// drainBatch is how many events drain reads at a time: about 9 KiB of
// events, which stay in the first-level cache between the reader and fn.
const drainBatch = 64

// drainBatches is drain over a batchReader: each batch's events go to fn
// in order, then the error that ended the batch, if any.
func drainBatches(r batchReader, tick func(n uint64), fn func(*trace.Event) error) error {
	evs := make([]trace.Event, drainBatch)
	for {
		n, err := r.ReadEventsInto(evs)
		for i := range n {
			if err := fn(&evs[i]); err != nil {
				return err
			}
		}
		if n > 0 {
			tick(uint64(n))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
