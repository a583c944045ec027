package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

type convertOptions struct {
	inputs []string
	out    string
	events string
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
			if opts.events != "" && opts.events == opts.out {
				return usagef("-o and --events name the same file")
			}
			return convertRun(ios, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "request stream `FILE` (Arrow IPC, zstd)")
	cmd.Flags().StringVar(&opts.events, "events", "", "also write every event to `FILE` (Arrow IPC, zstd)")
	return cmd
}

func convertRun(ios *IOStreams, opts *convertOptions) (err error) {
	if p := os.Getenv("TS_CPUPROFILE"); p != "" { // TEMPPROF
		f, _ := os.Create(p)                      // TEMPPROF
		pprof.StartCPUProfile(f)                  // TEMPPROF
		defer pprof.StopCPUProfile()              // TEMPPROF
	} // TEMPPROF
	src, err := openInputs(opts.inputs)
	if err != nil {
		return err
	}
	defer src.Close()

	reqFile, err := createAtomic(opts.out)
	if err != nil {
		return err
	}
	defer reqFile.Abort()
	reqW, err := trace.NewRequestWriter(reqFile, trace.Meta{})
	if err != nil {
		return err
	}
	var evFile *atomicFile
	var evW *trace.EventWriter
	if opts.events != "" {
		if evFile, err = createAtomic(opts.events); err != nil {
			return err
		}
		defer evFile.Abort()
		if evW, err = trace.NewEventWriter(evFile, trace.Meta{}); err != nil {
			return err
		}
	}

	var werr error
	rb := trace.NewRebuilder(func(r *trace.Request) {
		if werr == nil {
			werr = reqW.Write(r)
		}
	}, nil)
	prog := newProgress(ios, "convert")
	prog.track(src)
	defer prog.Done()
	for {
		ev, err := src.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		rb.Add(&ev)
		if evW != nil {
			if err := evW.Write(&ev); err != nil {
				return fmt.Errorf("writing %s: %w", opts.events, err)
			}
		}
		if werr != nil {
			return fmt.Errorf("writing %s: %w", opts.out, werr)
		}
		prog.Add(1)
	}
	rb.Close()
	if werr != nil {
		return fmt.Errorf("writing %s: %w", opts.out, werr)
	}
	meta := src.Meta()
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

// openInputs opens every INPUT and, when there are several, merges them by
// time on a common origin: each input counts time from its own first
// event, so each is shifted by its origin's distance from the earliest one.
func openInputs(names []string) (source, error) {
	if len(names) == 1 {
		return openInput(names[0])
	}
	var srcs []*peeked
	closeAll := func() {
		for _, s := range srcs {
			s.Close()
		}
	}
	for _, name := range names {
		s, err := openInput(name)
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
