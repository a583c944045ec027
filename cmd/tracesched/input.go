package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

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
// `tracesched convert --events`, or anything parse/blktrace detects.
func openInput(name string) (source, error) {
	if name != "-" {
		if f, err := os.Open(name); err == nil {
			head := make([]byte, len(arrowMagic))
			n, _ := io.ReadFull(f, head)
			if n == len(head) && bytes.Equal(head, arrowMagic) {
				r, err := arrowfile.OpenEvents(f, arrowfile.WithName(name))
				if err != nil {
					f.Close()
					return nil, err // named by WithName
				}
				return &arrowSource{EventFileReader: r, f: f}, nil
			}
			f.Close()
		}
	}
	in, err := blktrace.Open(name)
	if err != nil {
		return nil, err
	}
	return in, nil
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
func readInput(ios *IOStreams, name, label string, fn func(*trace.Event) error) (trace.Meta, blktrace.Diagnostics, error) {
	src, err := openInput(name)
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

// drain reads every event of r into fn, calling tick after each.
func drain(r trace.EventReader, tick func(n uint64), fn func(*trace.Event) error) error {
	for {
		ev, err := r.ReadEvent()
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
