package blktrace

import (
	"io"

	"github.com/tracesched/tracesched/trace"
)

// Reader reads one binary blktrace stream: a raw per-CPU relay file
// (NAME.blktrace.N), a blkparse -d combined dump, or an ftrace blk tracer
// bin stream (16-byte ftrace header before each record). Records of
// protocol version 7 (48-byte header) and 8 (64-byte header) are read in
// either byte order, detected from the first magic.
//
// ReadEvent returns events with Time relative to the stream's first I/O
// event (Meta().Origin holds that event's absolute time), in the stream's
// order: nondecreasing Time for relay files and dumps, except for the notes
// a dump keeps at its front (see the package documentation).
type Reader struct {
	scratch trace.Event
	dec     *decoder
	p       pipeline
	source  string
}

// NewReader returns a Reader for the binary stream r; name is used in error
// messages. It reads the first record header to detect the byte order, the
// version and the ftrace framing, and returns a *FormatError for anything
// else ("unsupported blktrace version 0x%02x" for an unknown version). An
// empty stream is valid and yields io.EOF at once.
func NewReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, -1, "")
}

func newReader(r io.Reader, name string, fileCPU int64, source string) (*Reader, error) {
	dec, s, err := openDecoder(r, name, fileCPU, nil)
	if err != nil {
		return nil, err
	}
	if source == "" && s.ftrace {
		source = "ftrace-bin"
	}
	rd := &Reader{dec: dec, source: source}
	rd.p.src = dec
	return rd, nil
}

// openDecoder sniffs the first bytes of r and returns a decoder positioned
// at the first record. An empty r gives a decoder that returns io.EOF.
func openDecoder(r io.Reader, name string, fileCPU int64, buf []byte) (*decoder, sniffResult, error) {
	d := newDecoder(r, name, sniffResult{version: 7}, fileCPU, buf)
	d.fill(ftraceHdr + v8HdrLen)
	if d.rerr != nil {
		return nil, sniffResult{}, &FormatError{File: name, Offset: int64(d.end), Err: explainRead(d.rerr)} // where the data stopped
	}
	if d.end == 0 {
		return d, sniffResult{binary: true, version: 7}, nil
	}
	s, err := sniffBinary(d.buf[:d.end])
	if err != nil {
		if err == errNotBinary {
			var m uint32
			if d.end >= 4 {
				m = d.u32(d.buf)
			}
			err = &FormatError{File: name, Offset: 0, Err: errBadMagic(m)}
		} else {
			err = &FormatError{File: name, Offset: 0, Err: err}
		}
		return nil, s, err
	}
	d.be, d.version, d.ftrace = s.be, s.version, s.ftrace
	if s.version == 8 {
		d.hdrLen = v8HdrLen
	}
	return d, s, nil
}

// ReadEvent returns the next event, or io.EOF at the end of the stream.
// Errors (a *FormatError for malformed input) are sticky.
func (r *Reader) ReadEvent() (trace.Event, error) {
	// The scratch event lives in the reader: a local would escape
	// through the source interface and cost an allocation per event.
	err := r.p.next(&r.scratch)
	return r.scratch, err
}

// Meta describes the stream: Source is "ftrace-bin" for ftrace framing,
// "blkparse-dump" for a combined stream (records of several CPUs, or notes
// with absolute times before rebased events), else "blktrace"; Origin is
// the absolute time of the first I/O event. Source, Devices and the wall
// clock are complete once ReadEvent has returned io.EOF.
func (r *Reader) Meta() trace.Meta { return r.p.meta(binarySource(r.source, r.dec, &r.p)) }

// binarySource names the format of a single binary stream from what was
// read of it.
func binarySource(fixed string, d *decoder, p *pipeline) string {
	switch {
	case fixed != "":
		return fixed
	case d.multiCPU || p.clamped:
		return "blkparse-dump"
	}
	return "blktrace"
}

// Dropped returns the number of events missing from the per-(device, CPU)
// sequence numbers of the I/O records read so far.
func (r *Reader) Dropped() uint64 { return r.dec.dropped }
