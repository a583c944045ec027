// Package pipeline is a replay's data flow in one place, for the command,
// the benchmarks and the tests:
//
//  1. the capture is read once (Loader, or Read): each event feeds the
//     diff's real side and the replay's workload together (the workload
//     keeps its bios, compactly, so it does not read the capture again);
//  2. the device model is calibrated from the real side's requests on the
//     workload's device (Calibrate), or taken from a Cache of fitted
//     models keyed by those requests;
//  3. the workload is replayed (Replay) into the predicted side, the
//     events also handed to a sink (an Arrow writer);
//  4. the two sides are compared (diff.Compare).
package pipeline

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Capture is a capture read once: its real side for the diff (and the
// calibration), its metadata, and its workload.
type Capture struct {
	Real     *diff.Side
	Meta     trace.Meta
	Workload *replay.Workload
}

// Loader reads a capture's events into a Capture: Add each event, in the
// order a trace.EventReader returns them, then Finish.
type Loader struct {
	side *diff.Side
	col  *replay.Collector
}

// NewLoader returns an empty Loader. The real side's Rebuilder also
// rebuilds the workload's bios: one Rebuilder for both.
func NewLoader() *Loader {
	col := replay.NewSharedCollector()
	return &Loader{side: diff.NewSideObserved(trace.Meta{}, col.OnBio), col: col}
}

// Add feeds the next event to the real side and the workload.
func (l *Loader) Add(e *trace.Event) {
	l.col.Before(e)
	l.side.Add(e)
	l.col.After()
}

// Finish completes the capture described by meta (what the reader knew at
// its end). It fails when the capture has no bios to replay.
func (l *Loader) Finish(meta trace.Meta) (*Capture, error) {
	l.side.Meta = meta
	l.side.Finish()
	w, err := l.col.Workload()
	if err != nil {
		return nil, err
	}
	return &Capture{Real: l.side, Meta: meta, Workload: w}, nil
}

// Read reads every event of r into a Capture; meta is asked for the
// capture's metadata at the end (nil: none). tick, when not nil, is called
// after each event.
func Read(r trace.EventReader, meta func() trace.Meta, tick func()) (*Capture, error) {
	l := NewLoader()
	for n := 0; ; n++ {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading event %d: %w", n, err)
		}
		l.Add(&e)
		if tick != nil {
			tick()
		}
	}
	var m trace.Meta
	if meta != nil {
		m = meta()
	}
	return l.Finish(m)
}

// DeviceRequests returns the real side's requests on the workload's
// device, what the calibration fits, as one slice (about 136 bytes a
// request: DeviceRequestSeq reads them without it).
func (c *Capture) DeviceRequests() []trace.Request {
	return OnDevice(c.Real.RequestSlice(), c.Workload.Dev)
}

// DeviceRequestSeq yields the real side's requests on the workload's
// device in ID order, as DeviceRequests holds them, decoded one at a time
// from the side's table into one reused trace.Request (valid during its
// yield only).
func (c *Capture) DeviceRequestSeq() iter.Seq[*trace.Request] {
	return SideRequests(c.Real, c.Workload.Dev)
}

// SideRequests yields the requests of side issued to dev in the side's
// order (ID order once finished), decoded one at a time into one reused
// trace.Request (valid during its yield only; diff.Side.Requests).
func SideRequests(side *diff.Side, dev trace.Dev) iter.Seq[*trace.Request] {
	return func(yield func(*trace.Request) bool) {
		for _, r := range side.Requests() {
			if r.Dev != dev {
				continue
			}
			if !yield(r) {
				return
			}
		}
	}
}

// OnDevice returns the requests issued to dev: reqs itself when they all
// are, else a filtered copy.
func OnDevice(reqs []trace.Request, dev trace.Dev) []trace.Request {
	n := 0
	for i := range reqs {
		if reqs[i].Dev == dev {
			n++
		}
	}
	if n == len(reqs) {
		return reqs
	}
	out := make([]trace.Request, 0, n)
	for i := range reqs {
		if reqs[i].Dev == dev {
			out = append(out, reqs[i])
		}
	}
	return out
}

// Calibration is a device model fitted by Calibrate.
type Calibration struct {
	Model *device.Model
	Fit   *device.Fit
	// Cached: the fit came from the cache; CacheErr: the cache could not
	// be written (the fit is still good).
	Cached   bool
	CacheErr error
}

// Calibrate is CalibrateSeq over a slice.
func Calibrate(reqs []trace.Request, opts device.CalibrateOptions, cache *Cache) (*Calibration, error) {
	return CalibrateSeq(device.Pointers(reqs), opts, cache)
}

// CalibrateSeq fits a device model to reqs as device.CalibrateSeq does
// (the fit of device.Calibrate, with memory bounded on large captures),
// with what the fit saw (Model.Coverage, device.CoverageOfSeq(reqs)),
// first looking it up in cache (nil: no cache) and storing a new fit
// there, its coverage included. A cache entry that fails to load is
// refitted and replaced. reqs is ranged over several times (the key, the
// fit's passes, the coverage).
func CalibrateSeq(reqs iter.Seq[*trace.Request], opts device.CalibrateOptions, cache *Cache) (*Calibration, error) {
	var key string
	if cache != nil {
		key = cache.KeySeq(reqs, opts)
		if m, fit, err := cache.Load(key); err == nil {
			return &Calibration{Model: m, Fit: fit, Cached: true}, nil
		}
	}
	m, fit, err := device.CalibrateSeq(reqs, opts)
	if err != nil {
		return nil, err
	}
	m.Coverage = device.CoverageOfSeq(reqs)
	c := &Calibration{Model: m, Fit: fit}
	if cache != nil {
		c.CacheErr = cache.Store(key, fit)
	}
	return c, nil
}

// Replay runs the capture's workload under cfg and returns the predicted
// side (described by meta) with the run's result. Every predicted event
// also goes to sink when it is not nil (an error there stops the run), and
// tick, when not nil, is called after each.
func (c *Capture) Replay(cfg replay.Config, meta trace.Meta, sink func(*trace.Event) error, tick func()) (*diff.Side, replay.Result, error) {
	pred := diff.NewSide(meta)
	res, err := replay.Run(c.Workload, cfg, func(e *trace.Event) error {
		pred.Add(e)
		if tick != nil {
			tick()
		}
		if sink != nil {
			return sink(e)
		}
		return nil
	})
	if err != nil {
		return nil, res, err
	}
	pred.Finish()
	return pred, res, nil
}
