package blktrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/trace"
)

// Diagnostics reports what an Input read and what it found missing or odd.
type Diagnostics struct {
	Files []string // files read, in CPU order for a per-CPU set ("-" for standard input)
	// MissingCPUFiles lists the CPU indexes absent from a per-CPU set
	// between 0 and the highest index present (blkparse stops at the first).
	MissingCPUFiles []int
	// DroppedEvents counts events missing from the per-(device, CPU)
	// sequence numbers of I/O records (blkparse's "skips"). Streams without
	// sequence numbers (ftrace) report 0.
	DroppedEvents uint64
	// CPUMismatch counts records of a per-CPU file whose cpu field differs
	// from the file's index. They are read, not dropped (blkparse drops them).
	CPUMismatch uint64
	// UnknownActions counts records skipped because their action code is
	// unknown (blkparse's "Bad fs action"; DRV_DATA-like extensions).
	UnknownActions uint64
	// Format is the detected format (a Meta.Source value), with "+zstd" or
	// "+gzip" when the input was compressed.
	Format string
}

// Input is one INPUT of the command line (docs/cli.md "Inputs"), opened by
// Open: a per-CPU file set, a blkparse -d dump, standard input, an ftrace
// blk tracer stream (bin or text) or blkparse text, each possibly gzip- or
// zstd-compressed. ReadEvent returns its events in nondecreasing Time
// (per-CPU files merged by time), with the exceptions the package
// documentation lists.
type Input struct {
	scratch trace.Event
	p       pipeline
	source  string
	diag    Diagnostics
	closers []io.Closer
	decs    []*decoder
	text    *textParser
	single  bool // one binary stream: its Source is decided by its content

	consumed atomic.Int64 // bytes read from the input files (compressed bytes when compressed)
	size     int64        // their total size; 0 when unknown (standard input)
}

func (in *Input) sourceName() string {
	switch {
	case in.text != nil:
		return in.text.source()
	case in.single:
		return binarySource(in.source, in.decs[0], &in.p)
	}
	return in.source
}

var perCPUName = regexp.MustCompile(`^(.+)\.blktrace\.(\d+)(\.zst|\.gz)?$`)

// Open opens name: "-" for standard input; a directory holding one per-CPU
// set; any file of a per-CPU set (NAME.blktrace.N, optionally .zst or .gz),
// which opens the whole set; the basename of a set ("dir/sda"); or any
// single file, whose format is detected from its content.
func Open(name string) (*Input, error) {
	if name == "-" {
		return (&Input{}).openStream(os.Stdin, "-", nil)
	}
	fi, err := os.Stat(name)
	switch {
	case err == nil && fi.IsDir():
		ents, err := os.ReadDir(name)
		if err != nil {
			return nil, err
		}
		bases := map[string]bool{}
		for _, e := range ents {
			if m := perCPUName.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
				bases[m[1]] = true
			}
		}
		switch len(bases) {
		case 0:
			return nil, fmt.Errorf("%s: no blktrace per-CPU files (NAME.blktrace.N) in directory", name)
		case 1:
			for b := range bases {
				return openSet(filepath.Join(name, b))
			}
		}
		var names []string
		for b := range bases {
			names = append(names, b)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s: directory holds %d per-CPU sets (%s); name one", name, len(names), strings.Join(names, ", "))
	case err == nil:
		if m := perCPUName.FindStringSubmatch(filepath.Base(name)); m != nil {
			return openSet(filepath.Join(filepath.Dir(name), m[1]))
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		in := &Input{size: fi.Size()}
		return in.openStream(&countingReader{r: f, n: &in.consumed}, name, f)
	default:
		in, serr := openSet(name)
		if serr != nil {
			if errors.Is(serr, errNoSet) {
				return nil, err // the Stat error names the file
			}
			return nil, serr
		}
		return in, nil
	}
}

// SetOf returns what Open reads for name, as a path: the basename of the
// per-CPU set for a file of one (NAME.blktrace.N, optionally .zst or .gz)
// or a directory holding one set, else name itself, cleaned ("-" for
// standard input). Two names with the same SetOf are one capture.
func SetOf(name string) string {
	if name == "-" {
		return name
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		ents, err := os.ReadDir(name)
		if err == nil {
			bases := map[string]bool{}
			for _, e := range ents {
				if m := perCPUName.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
					bases[m[1]] = true
				}
			}
			if len(bases) == 1 {
				for b := range bases {
					return filepath.Join(name, b)
				}
			}
		}
		return filepath.Clean(name)
	}
	if m := perCPUName.FindStringSubmatch(filepath.Base(name)); m != nil {
		return filepath.Join(filepath.Dir(name), m[1])
	}
	return filepath.Clean(name)
}

var errNoSet = errors.New("no per-CPU files")

type setFile struct {
	cpu  int
	path string
}

// openSet opens every file of the per-CPU set with basename base.
func openSet(base string) (*Input, error) {
	dir, b := filepath.Split(base)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byCPU := map[int]setFile{}
	rank := func(p string) int {
		switch {
		case strings.HasSuffix(p, ".zst"):
			return 1
		case strings.HasSuffix(p, ".gz"):
			return 2
		}
		return 0
	}
	for _, e := range ents {
		m := perCPUName.FindStringSubmatch(e.Name())
		if m == nil || m[1] != b || e.IsDir() {
			continue
		}
		cpu, err := strconv.Atoi(m[2])
		if err != nil || cpu > 1<<16 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if old, ok := byCPU[cpu]; !ok || rank(p) < rank(old.path) {
			byCPU[cpu] = setFile{cpu, p}
		}
	}
	if len(byCPU) == 0 {
		return nil, fmt.Errorf("%s: %w", base, errNoSet)
	}
	files := make([]setFile, 0, len(byCPU))
	for _, f := range byCPU {
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b setFile) int { return a.cpu - b.cpu })

	in := &Input{source: "blktrace"}
	next := 0
	comp := ""
	for _, f := range files {
		for ; next < f.cpu; next++ {
			in.diag.MissingCPUFiles = append(in.diag.MissingCPUFiles, next)
		}
		next = f.cpu + 1
		fh, err := os.Open(f.path)
		if err != nil {
			in.Close()
			return nil, err
		}
		in.closers = append(in.closers, fh)
		if fi, err := fh.Stat(); err == nil {
			in.size += fi.Size()
		}
		r, c, kind, err := decompress(&countingReader{r: fh, n: &in.consumed}, len(files))
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		if c != nil {
			in.closers = append(in.closers, c)
		}
		if kind != "" {
			comp = "+" + kind
		}
		dec, s, err := openDecoder(r, f.path, int64(f.cpu), nil)
		if err != nil {
			in.Close()
			return nil, err
		}
		if s.ftrace {
			// A per-CPU file with ftrace framing: readable all the same.
			in.source = "ftrace-bin"
		}
		in.decs = append(in.decs, dec)
		in.diag.Files = append(in.diag.Files, f.path)
	}
	in.diag.Format = comp
	if len(in.decs) == 1 {
		in.p.src = in.decs[0]
	} else {
		srcs := make([]rawSource, len(in.decs))
		for i, d := range in.decs {
			srcs[i] = d
		}
		m := &merger{}
		m.init(srcs)
		in.p.src = m
	}
	return in, nil
}

// openStream opens one stream of any format into in.
func (in *Input) openStream(f io.Reader, name string, closer io.Closer) (*Input, error) {
	if closer != nil {
		in.closers = append(in.closers, closer)
	}
	in.diag.Files = []string{name}
	r, c, kind, err := decompress(f, 1)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if c != nil {
		in.closers = append(in.closers, c)
	}
	br := bufio.NewReaderSize(r, readBufSize)
	head, _ := br.Peek(512)
	if _, serr := sniffBinary(head); serr == errNotBinary && bytes.HasPrefix(head, utf8BOM) {
		head = skipBOM(br)
	}
	if _, serr := sniffBinary(head); serr != errNotBinary || looksBinary(head) {
		dec, s, err := openDecoder(br, name, -1, nil)
		if err != nil {
			in.Close()
			return nil, err
		}
		in.single = true
		if s.ftrace {
			in.source = "ftrace-bin"
		}
		in.decs = []*decoder{dec}
		in.p.src = dec
	} else {
		in.text = newTextParser(br, name)
		in.p.src = in.text
	}
	if kind != "" {
		in.diag.Format = "+" + kind
	}
	return in, nil
}

// Progress returns how many bytes of the input files have been read and
// their total size (compressed sizes for compressed files), for a progress
// bar; total is 0 when unknown (standard input). Safe to call from another
// goroutine while ReadEvent runs.
func (in *Input) Progress() (done, total int64) { return in.consumed.Load(), in.size }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// looksBinary reports whether b holds control bytes that text never has.
//
// One control byte does not make a file binary: a text capture with a NUL
// or an ESC in its first 512 bytes (a process name with a terminal escape,
// a stray byte from a copy) is read as text, and its line gets a
// SyntaxError if it does not parse. A file is binary when more than one
// byte in eight of its head is a control byte (a blktrace record is mostly
// zero bytes and small integers: 30 or more of its 48 header bytes).
func looksBinary(b []byte) bool {
	n := 0
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) {
			n++
		}
	}
	return n > 0 && n*8 > len(b)
}

// utf8BOM starts a text file some editors save.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// skipBOM drops a UTF-8 byte-order mark at the start of br and returns the
// head peeked after it (up to 512 bytes). Column numbers of the first line
// then count from after the mark.
func skipBOM(br *bufio.Reader) []byte {
	head, _ := br.Peek(512)
	if bytes.HasPrefix(head, utf8BOM) {
		br.Discard(len(utf8BOM))
		head, _ = br.Peek(512)
	}
	return head
}

// decompress detects gzip and zstd by magic and returns a reader of the
// decompressed bytes (or of r itself), a closer for the decoder, and the
// compression's name ("" when none).
func decompress(r io.Reader, nstreams int) (io.Reader, io.Closer, string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.Equal(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		// Asynchronous block decoding overlaps decompression with parsing
		// when there are few streams; many streams decode synchronously to
		// bound goroutines and memory.
		conc := 2
		if nstreams > 2 {
			conc = 1
		}
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(conc), zstd.WithDecoderMaxMemory(1<<30), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return nil, nil, "", err
		}
		return zr, closerFunc(func() error { zr.Close(); return nil }), "zstd", nil
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		gr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, "", err
		}
		return gr, gr, "gzip", nil
	}
	return br, nil, "", nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// ReadEvent returns the next event in time order, or io.EOF at the end.
// Errors are sticky: a *FormatError (binary) or *SyntaxError (text) names
// the file and position.
func (in *Input) ReadEvent() (trace.Event, error) {
	// The scratch event lives in the reader: a local would escape
	// through the source interface and cost an allocation per event.
	err := in.p.next(&in.scratch)
	return in.scratch, err
}

// Meta describes the capture: Source (see trace.Meta), Devices (every
// Event.Dev seen, ascending; remap sources only as FromDev are not listed),
// Origin and the wall clock at it. Devices and the wall clock are complete
// once ReadEvent has returned io.EOF.
func (in *Input) Meta() trace.Meta {
	return in.p.meta(in.sourceName())
}

// Diagnostics returns what was read so far: complete after io.EOF.
func (in *Input) Diagnostics() Diagnostics {
	d := in.diag
	d.Files = slices.Clone(d.Files)
	d.MissingCPUFiles = slices.Clone(d.MissingCPUFiles)
	for _, dec := range in.decs {
		d.DroppedEvents += dec.dropped
		d.CPUMismatch += dec.cpuMismatch
		d.UnknownActions += dec.unknown
	}
	if in.text != nil {
		d.DroppedEvents += in.text.lost
	}
	d.Format = in.sourceName() + in.diag.Format
	return d
}

// Close closes the files and decompressors of the input.
func (in *Input) Close() error {
	var first error
	for i := len(in.closers) - 1; i >= 0; i-- {
		if err := in.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	in.closers = nil
	return first
}
