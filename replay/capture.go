package replay

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/tracesched/tracesched/trace"
)

// Source opens a capture's event stream from its start; a Workload opens it
// twice (a scan, then the replay). A stream that implements io.Closer is
// closed when done.
type Source func() (trace.EventReader, error)

// NewWorkload scans a capture and returns its workload: the device whose
// requests were issued (the one with the most D events, so the bottom of a
// remapped stack), the queue depth it showed (most requests between D and
// C), its largest request, and the captured per-process and per-cgroup
// bandwidth. The bios are read again, streamed, when the workload is
// replayed; the scan keeps only per-process and per-device counters.
func NewWorkload(open Source) (*Workload, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	defer closeReader(r)
	type devScan struct {
		issues   int
		inflight int
		depth    int
		maxSect  uint32
		bios     int
		flushQ   int // bios with PREFLUSH or FUA
		flushD   int // flush requests issued (D of zero bytes with F)
		fuaD     int // requests issued with FUA
		perPID   map[uint32]int
		stats    *statsBuilder
	}
	devs := map[trace.Dev]*devScan{}
	dev := func(d trace.Dev) *devScan {
		s := devs[d]
		if s == nil {
			s = &devScan{perPID: map[uint32]int{}, stats: newStatsBuilder()}
			devs[d] = s
		}
		return s
	}
	comms := map[uint32]string{}
	rb := trace.NewRebuilder(nil, func(b *trace.Bio) {
		s := dev(b.Dev)
		s.bios++
		s.perPID[b.PID]++
		s.stats.addBio(b.PID, comms[b.PID], b.Cgroup, b.Bytes, b.Queue, b.Done)
	})
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("scanning capture: %w", err)
		}
		switch e.Action {
		case trace.ActionQueue:
			if e.Comm != "" {
				comms[e.PID] = e.Comm
			}
			if e.Cat&(trace.CatFlush|trace.CatFUA) != 0 {
				dev(e.Dev).flushQ++
			}
		case trace.ActionIssue:
			s := dev(e.Dev)
			s.issues++
			s.inflight++
			s.depth = max(s.depth, s.inflight)
			s.maxSect = max(s.maxSect, uint32(e.Bytes>>9))
			if e.Bytes == 0 && e.Cat&trace.CatFlush != 0 {
				s.flushD++
			}
			if e.Cat&trace.CatFUA != 0 {
				s.fuaD++
			}
		case trace.ActionComplete:
			s := dev(e.Dev)
			if s.inflight > 0 {
				s.inflight--
			}
		case trace.ActionProcess:
			if e.Text != "" {
				comms[e.PID] = e.Text
			}
		}
		rb.Add(&e)
	}
	rb.Close()
	keys := make([]trace.Dev, 0, len(devs))
	for d := range devs {
		keys = append(keys, d)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var best trace.Dev
	found := false
	for _, d := range keys {
		if !found || devs[d].issues > devs[best].issues {
			best, found = d, true
		}
	}
	if !found || devs[best].bios == 0 {
		return nil, errors.New("capture has no bios to replay")
	}
	s := devs[best]
	w := &Workload{Dev: best, Depth: s.depth, MaxSectors: max(s.maxSect, defaultMaxSectors), Bios: s.bios, perPID: s.perPID}
	switch {
	case s.flushD > 0:
		w.WriteCache = WriteBack
	case s.flushQ > 0:
		w.WriteCache = WriteThrough
	}
	w.FUA = s.fuaD > 0
	s.stats.finish(w)
	for i := range w.Processes {
		if w.Processes[i].Comm == "" {
			w.Processes[i].Comm = comms[w.Processes[i].PID]
		}
	}
	w.open = func() (recordSource, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return newCaptureSource(r, best, w.WriteCache == WriteBack, w.FUA), nil
	}
	return w, nil
}

func closeReader(r trace.EventReader) {
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}

// captureSource streams a capture's bios on one device in Q order.
//
// The Rebuilder hands over a bio when its request finishes, so bios come
// out of it in completion order. captureSource keeps a FIFO of the device's
// Q events in capture order, keyed by (PID, per-process index: the
// Rebuilder's Bio.Index, which counts a process's Q events on every
// device), and releases its head once the Rebuilder has finished that bio.
// The look-ahead is thus bounded by the bios queued after the oldest one
// still in flight in the capture (the Rebuilder gives up on a bio that
// never joins a request after a fixed stretch of trace time).
type captureSource struct {
	r      trace.EventReader
	dev    trace.Dev
	rb     *trace.Rebuilder
	eof    bool
	fifo   []*captureQ
	head   int
	byKey  map[bioKey]*captureQ
	qIndex map[uint32]uint32    // Q events seen per process, every device
	lastQ  map[uint32]*captureQ // last Q of each process on dev
	plug   map[uint32]bool      // process holds a plug
	comms  map[uint32]string
	inf    *inferrer
	// The flush machinery's bios (flush.go): with a write-back cache a bio
	// with PREFLUSH (or FUA on a device without FUA) completes for its
	// process at the zero-byte C of its restored request (REQ_FSEQ_DONE),
	// after the post-flush, not at its data phase's C, and an empty flush
	// is never issued itself (its flush request is): such a bio waits, in
	// Q order per sector, for that C.
	wb, fua   bool
	flushWait []*captureQ
}

type bioKey struct {
	pid   uint32
	index uint32
}

type captureQ struct {
	rec  Record
	done bool // the Rebuilder has finished it
	// flushWait: a flush-machinery bio whose final zero-byte C has not
	// come yet (captureSource.flushWait).
	flushWait bool
	plugged   bool
	plugEnd   bool
}

func newCaptureSource(r trace.EventReader, dev trace.Dev, writeBack, fua bool) *captureSource {
	s := &captureSource{r: r, dev: dev, byKey: map[bioKey]*captureQ{}, qIndex: map[uint32]uint32{},
		lastQ: map[uint32]*captureQ{}, plug: map[uint32]bool{}, comms: map[uint32]string{}, inf: newInferrer(),
		wb: writeBack, fua: fua}
	s.rb = trace.NewRebuilder(nil, s.onBio)
	return s
}

func (s *captureSource) onBio(b *trace.Bio) {
	if b.Dev != s.dev {
		return
	}
	k := bioKey{b.PID, b.Index}
	q := s.byKey[k]
	if q == nil {
		return
	}
	delete(s.byKey, k)
	q.rec.Issue = b.Issue
	q.rec.Cgroup = b.Cgroup
	if !q.flushWait {
		q.rec.Done = b.Done
	}
	q.done = true
}

// flushFinal takes the zero-byte C of a flush sequence's restored request
// (blk_flush_complete_seq, REQ_FSEQ_DONE: its flags lost PREFLUSH, so no F)
// as the completion of the oldest waiting flush bio at its sector.
func (s *captureSource) flushFinal(e *trace.Event) {
	for i, q := range s.flushWait {
		if q.rec.Sector == e.Sector {
			q.rec.Done = e.Time
			q.flushWait = false
			q.done = true
			s.flushWait = append(s.flushWait[:i], s.flushWait[i+1:]...)
			return
		}
	}
}

func (s *captureSource) add(e *trace.Event) {
	switch e.Action {
	case trace.ActionProcess:
		if e.Text != "" {
			s.comms[e.PID] = e.Text
		}
	case trace.ActionQueue:
		idx := s.qIndex[e.PID]
		s.qIndex[e.PID] = idx + 1
		if e.Comm != "" {
			s.comms[e.PID] = e.Comm
		}
		if e.Dev != s.dev {
			break
		}
		q := &captureQ{rec: Record{PID: e.PID, Index: idx, Cgroup: e.Cgroup, Comm: s.comms[e.PID],
			Sector: e.Sector, Bytes: e.Bytes, Cat: e.Cat.OpFlags(), Queue: e.Time,
			Issue: trace.NoTime, Done: trace.NoTime, got: trace.NoTime}}
		q.plugged = s.plug[e.PID]
		if s.wb && (q.rec.Cat&trace.CatFlush != 0 || (!s.fua && q.rec.Cat&trace.CatFUA != 0)) {
			q.flushWait = true
			s.flushWait = append(s.flushWait, q)
		}
		s.fifo = append(s.fifo, q)
		s.byKey[bioKey{e.PID, idx}] = q
		s.lastQ[e.PID] = q
	case trace.ActionGetRQ, trace.ActionBackMerge, trace.ActionFrontMerge:
		// The end of the bio's submission (it slept for a request before G).
		if q := s.lastQ[e.PID]; e.Dev == s.dev && q != nil && !q.rec.got.Valid() && q.rec.Sector == e.Sector {
			q.rec.got = e.Time
		}
	case trace.ActionComplete:
		if e.Dev == s.dev && e.Bytes == 0 && e.Cat&trace.CatFlush == 0 && len(s.flushWait) > 0 {
			s.flushFinal(e)
		}
	case trace.ActionPlug:
		if e.Dev != s.dev {
			break
		}
		s.plug[e.PID] = true
		// P follows the G of the plug's first request.
		if q := s.lastQ[e.PID]; q != nil && !q.plugEnd {
			q.plugged = true
		}
	case trace.ActionUnplugIO, trace.ActionUnplugTimer:
		if e.Dev != s.dev {
			break
		}
		if s.plug[e.PID] {
			s.plug[e.PID] = false
			if q := s.lastQ[e.PID]; q != nil && q.plugged {
				q.plugEnd = true
			}
		}
	}
	s.rb.Add(e)
}

func (s *captureSource) next() (*Record, error) {
	for {
		if s.head < len(s.fifo) {
			q := s.fifo[s.head]
			if (q.done && !q.flushWait) || s.eof {
				s.fifo[s.head] = nil
				s.head++
				if s.head >= 1024 && s.head*2 >= len(s.fifo) {
					n := copy(s.fifo, s.fifo[s.head:])
					clear(s.fifo[n:])
					s.fifo, s.head = s.fifo[:n], 0
				}
				delete(s.byKey, bioKey{q.rec.PID, q.rec.Index})
				r := &q.rec
				r.Plugged, r.PlugEnd = q.plugged, q.plugEnd
				if r.Comm == "" {
					r.Comm = s.comms[r.PID]
				}
				s.inf.infer(r)
				return r, nil
			}
		} else if s.eof {
			s.close()
			return nil, io.EOF
		}
		e, err := s.r.ReadEvent()
		if err == io.EOF {
			s.eof = true
			s.rb.Close()
			continue
		}
		if err != nil {
			return nil, err
		}
		s.add(&e)
	}
}

func (s *captureSource) close() {
	if s.r != nil {
		closeReader(s.r)
		s.r = nil
	}
}
