package blktrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/trace"
)

// maxLine bounds a text line; longer lines are a *SyntaxError.
const maxLine = 64 << 10

// TextReader reads blktrace events from text:
//
//   - blkparse's default output (`%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s `
//     plus a tail per action), including "m N" message lines with or without
//     the cgroup column ("1,0" = low32,high32 of the cgroup id in hex) and the
//     summary block at the end, which is ignored;
//   - the ftrace blk tracer's text (/sys/kernel/tracing/trace or trace_pipe):
//     '#' header lines, the context prefix "comm-pid [cpu] flags secs.usecs:"
//     and the blk part, and the blk_classic variant (blkparse's line without
//     the sequence column). "[LOST n EVENTS]" lines count as dropped events.
//
// blkparse text is already relative to blkparse's genesis: Meta().Origin is
// 0 and times are as printed (ns). ftrace text carries absolute times in µs;
// they are rebased to the first I/O event like binary input. Text carries
// sectors, not bytes: Bytes = sectors*512, except for passthrough lines
// that print a byte count. The Cat of a text event holds the RWBS bits plus
// the family bit of its action (QUEUE, ISSUE, COMPLETE, REQUEUE, NOTIFY).
type TextReader struct {
	scratch trace.Event
	tp      *textParser
	p       pipeline
}

// NewTextReader returns a TextReader over r; name is used in errors. It
// refuses input that looks binary.
func NewTextReader(r io.Reader, name string) (*TextReader, error) {
	br := bufio.NewReaderSize(r, readBufSize)
	head := skipBOM(br)
	if looksBinary(head) {
		return nil, &SyntaxError{File: name, Line: 1, Column: 1, Err: errors.New("binary data, not text")}
	}
	tr := &TextReader{tp: newTextParser(br, name)}
	tr.p.src = tr.tp
	return tr, nil
}

// ReadEvent returns the next event, or io.EOF at the end. A line that
// cannot be parsed gives a *SyntaxError with its line and column.
func (tr *TextReader) ReadEvent() (trace.Event, error) {
	// The scratch event lives in the reader: a local would escape
	// through the source interface and cost an allocation per event.
	err := tr.p.next(&tr.scratch)
	return tr.scratch, err
}

// Meta describes the text: Source "blkparse-text" or "ftrace-text".
func (tr *TextReader) Meta() trace.Meta { return tr.p.meta(tr.tp.source()) }

// Dropped returns the events ftrace reported lost ("[LOST n EVENTS]").
func (tr *TextReader) Dropped() uint64 { return tr.tp.lost }

const (
	kindUnknown  = iota
	kindBlkparse // blkparse's default format: times relative to the capture's start
	kindFtrace   // ftrace's default text: context prefix, absolute trace-clock times
	kindClassic  // ftrace's blk_classic text: blkparse's columns without the sequence, absolute times
)

type textParser struct {
	name    string
	br      *bufio.Reader
	line    int
	kind    int
	summary bool
	lost    uint64
	// seenEvent: an event line was parsed (the layout is decided by the first).
	seenEvent bool
	err       error
}

func newTextParser(br *bufio.Reader, name string) *textParser {
	return &textParser{name: name, br: br}
}

func (tp *textParser) source() string {
	if tp.kind == kindFtrace || tp.kind == kindClassic {
		return "ftrace-text"
	}
	return "blkparse-text"
}

// timesRelative reports whether the text's times count from the capture's
// start (blkparse's) rather than the trace clock (ftrace's, rebased to the
// first event like binary input).
func (tp *textParser) timesRelative() bool { return tp.kind == kindBlkparse || tp.kind == kindUnknown }

// ftracePrefix matches the ftrace context prefix:
// "comm-pid [cpu] flags secs.usecs: " with an optional tgid column.
var ftracePrefix = regexp.MustCompile(`^\s*(.*?)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+):\s+`)

var lostLine = regexp.MustCompile(`^CPU:(\d+) \[LOST (\d+) EVENTS\]`)

var summaryPrefixes = []string{"CPU", "Total (", "Throughput", "Events (", "Skips:", "Trace started"}

func (tp *textParser) syntax(col int, format string, args ...any) error {
	tp.err = &SyntaxError{File: tp.name, Line: tp.line, Column: col, Err: fmt.Errorf(format, args...)}
	return tp.err
}

// positionError returns err as a *SyntaxError at the line last read, and
// makes it sticky.
func (tp *textParser) positionError(err error) error {
	tp.err = &SyntaxError{File: tp.name, Line: tp.line, Column: 1, Err: err}
	return tp.err
}

func (tp *textParser) next(ev *trace.Event) error {
	if tp.err != nil {
		return tp.err
	}
	for {
		b, err := tp.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(b) > maxLine {
			tp.line++
			return tp.syntax(1, "line longer than %d bytes", min(len(b), maxLine))
		}
		if err != nil && err != io.EOF {
			// A read error (a truncated or unreadable compressed file) at
			// the line being read.
			tp.err = &SyntaxError{File: tp.name, Line: tp.line + 1, Column: 1, Err: explainRead(err)}
			return tp.err
		}
		if len(b) == 0 && err == io.EOF {
			tp.err = io.EOF
			return io.EOF
		}
		tp.line++
		s := strings.TrimRight(string(b), "\r\n")
		ok, perr := tp.parseLine(s, ev)
		if perr != nil {
			return perr
		}
		if ok {
			return nil
		}
		if err == io.EOF {
			tp.err = io.EOF
			return io.EOF
		}
	}
}

// lineScanner splits a line into space-separated tokens, tracking columns.
type lineScanner struct {
	s string
	i int
}

// tok returns the next token and its 1-based column, or "" at the end.
func (ls *lineScanner) tok() (string, int) {
	for ls.i < len(ls.s) && (ls.s[ls.i] == ' ' || ls.s[ls.i] == '\t') {
		ls.i++
	}
	start := ls.i
	for ls.i < len(ls.s) && ls.s[ls.i] != ' ' && ls.s[ls.i] != '\t' {
		ls.i++
	}
	return ls.s[start:ls.i], start + 1
}

func (ls *lineScanner) peek() (string, int) {
	save := ls.i
	t, c := ls.tok()
	ls.i = save
	return t, c
}

// isDevToken reports whether t looks like "major,minor" in decimal.
func isDevToken(t string) bool {
	i := strings.IndexByte(t, ',')
	return i > 0 && i < len(t)-1 && allDigits(t[:i]) && allDigits(t[i+1:])
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseLine parses one line into ev. It reports false for lines that carry
// no event (headers, blank lines, the summary).
func (tp *textParser) parseLine(s string, ev *trace.Event) (bool, error) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] == '#' {
		return false, nil
	}
	ls := &lineScanner{s: s}
	first, _ := ls.peek()
	if isDevToken(first) {
		if tp.kind == kindUnknown {
			tp.kind = kindBlkparse
		}
		return true, tp.parseBlkparse(ls, ev)
	}
	if m := ftracePrefix.FindStringSubmatchIndex(s); m != nil {
		if tp.kind == kindUnknown || tp.kind == kindBlkparse && tp.line == 1 {
			tp.kind = kindFtrace
		}
		return true, tp.parseFtrace(s, m, ev)
	}
	if m := lostLine.FindStringSubmatch(t); m != nil {
		n, _ := strconv.ParseUint(m[2], 10, 64)
		tp.lost += n
		return false, nil
	}
	if tp.summary {
		return false, nil
	}
	for _, p := range summaryPrefixes {
		if strings.HasPrefix(t, p) {
			tp.summary = true
			return false, nil
		}
	}
	if strings.HasPrefix(t, "Input file ") || strings.HasPrefix(t, "discarded traces") {
		return false, nil
	}
	return false, tp.syntax(len(s)-len(strings.TrimLeft(s, " \t"))+1, "unrecognized line %q", clip(t))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (tp *textParser) parseDev(t string, col int) (trace.Dev, error) {
	i := strings.IndexByte(t, ',')
	if i <= 0 {
		return 0, tp.syntax(col, "bad device %q", t)
	}
	ma, err1 := strconv.ParseUint(t[:i], 10, 12)
	mi, err2 := strconv.ParseUint(t[i+1:], 10, 20)
	if err1 != nil || err2 != nil {
		return 0, tp.syntax(col, "bad device %q", t)
	}
	return trace.MkDev(uint32(ma), uint32(mi)), nil
}

func (tp *textParser) parseUint(t string, col int, bits int, what string) (uint64, error) {
	v, err := strconv.ParseUint(t, 10, bits)
	if err != nil {
		return 0, tp.syntax(col, "bad %s %q", what, t)
	}
	return v, nil
}

// parseTime parses "secs.frac" into ns; frac has 1 to 9 digits.
func (tp *textParser) parseTime(t string, col int) (int64, error) {
	i := strings.IndexByte(t, '.')
	if i <= 0 || i == len(t)-1 || len(t)-i-1 > 9 || !allDigits(t[:i]) || !allDigits(t[i+1:]) || i > 10 {
		return 0, tp.syntax(col, "bad time %q", t)
	}
	sec, _ := strconv.ParseInt(t[:i], 10, 64)
	frac, _ := strconv.ParseInt(t[i+1:], 10, 64)
	for n := len(t) - i - 1; n < 9; n++ {
		frac *= 10
	}
	return sec*1e9 + frac, nil
}

// parseCgroup parses blkparse's "%x,%x" cgroup column (low32, high32).
func parseCgroup(t string) (uint64, bool) {
	i := strings.IndexByte(t, ',')
	if i <= 0 || i == len(t)-1 {
		return 0, false
	}
	lo, err1 := strconv.ParseUint(t[:i], 16, 32)
	hi, err2 := strconv.ParseUint(t[i+1:], 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return hi<<32 | lo, true
}

func (tp *textParser) parseBlkparse(ls *lineScanner, ev *trace.Event) error {
	*ev = trace.Event{}
	t, c := ls.tok()
	dev, err := tp.parseDev(t, c)
	if err != nil {
		return err
	}
	ev.Dev = dev
	t, c = ls.tok()
	cpu, err := tp.parseUint(t, c, 32, "cpu")
	if err != nil {
		return err
	}
	ev.CPU = uint32(cpu)
	t, c = ls.tok()
	if !strings.Contains(t, ".") { // blkparse: sequence column; blk_classic has none
		seq, err := tp.parseUint(t, c, 32, "sequence")
		if err != nil {
			return err
		}
		ev.Seq = uint32(seq)
		t, c = ls.tok()
	} else if tp.kind == kindBlkparse && !tp.seenEvent {
		tp.kind = kindClassic
	}
	tp.seenEvent = true
	ns, err := tp.parseTime(t, c)
	if err != nil {
		return err
	}
	ev.Time = trace.Time(ns)
	t, c = ls.tok()
	pid, err := tp.parseUint(t, c, 32, "pid")
	if err != nil {
		return err
	}
	ev.PID = uint32(pid)
	return tp.parseBlkPart(ls, ev)
}

func (tp *textParser) parseFtrace(s string, m []int, ev *trace.Event) error {
	*ev = trace.Event{}
	comm := s[m[2]:m[3]]
	pid, err := strconv.ParseUint(s[m[4]:m[5]], 10, 32)
	if err != nil {
		return tp.syntax(m[4]+1, "bad pid %q", s[m[4]:m[5]])
	}
	cpu, err := strconv.ParseUint(s[m[6]:m[7]], 10, 32)
	if err != nil {
		return tp.syntax(m[6]+1, "bad cpu %q", s[m[6]:m[7]])
	}
	sec, err1 := strconv.ParseInt(s[m[8]:m[9]], 10, 64)
	frac := s[m[10]:m[11]]
	us, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || len(frac) > 9 || m[9]-m[8] > 10 {
		return tp.syntax(m[8]+1, "bad time %q", s[m[8]:m[11]])
	}
	for n := len(frac); n < 9; n++ {
		us *= 10
	}
	ev.Time = trace.Time(sec*1e9 + us)
	ev.PID = uint32(pid)
	ev.CPU = uint32(cpu)
	ls := &lineScanner{s: s, i: m[1]}
	t, c := ls.tok()
	dev, err := tp.parseDev(t, c)
	if err != nil {
		return err
	}
	ev.Dev = dev
	if err := tp.parseBlkPart(ls, ev); err != nil {
		return err
	}
	if comm != "" && comm != "<...>" {
		ev.Comm = comm
	}
	return nil
}

var longActions = map[string]trace.Action{
	"queue": trace.ActionQueue, "backmerge": trace.ActionBackMerge, "frontmerge": trace.ActionFrontMerge,
	"getrq": trace.ActionGetRQ, "sleeprq": trace.ActionSleepRQ, "requeue": trace.ActionRequeue,
	"issue": trace.ActionIssue, "complete": trace.ActionComplete, "plug": trace.ActionPlug,
	"unplug_io": trace.ActionUnplugIO, "unplug_timer": trace.ActionUnplugTimer, "insert": trace.ActionInsert,
	"split": trace.ActionSplit, "bounce": trace.ActionBounce, "remap": trace.ActionRemap,
	"message": trace.ActionMessage,
}

// parseRWBS maps an RWBS column to category bits. Non-write I/O events get
// READ as the kernel sets it (for N too).
func parseRWBS(s string, notify bool) (trace.Category, bool) {
	var c trace.Category
	i := 0
	if len(s) >= 2 && s[0] == 'F' {
		c |= trace.CatFlush
		i = 1
	}
	if i >= len(s) {
		return 0, false
	}
	switch s[i] {
	case 'D':
		c |= trace.CatDiscard | trace.CatWrite
	case 'W':
		c |= trace.CatWrite
	case 'R', 'N':
		if !notify {
			c |= trace.CatRead
		}
	case 'B': // barrier, 2.6 kernels
		c |= trace.CatFlush
	default:
		return 0, false
	}
	for _, ch := range s[i+1:] {
		switch ch {
		case 'F':
			c |= trace.CatFUA
		case 'A':
			c |= trace.CatAhead
		case 'S':
			c |= trace.CatSync
		case 'M':
			c |= trace.CatMeta
		case 'B': // barrier after the direction (2.6 kernels); FLUSH since 2.6.37
			c |= trace.CatFlush
		default:
			return 0, false
		}
	}
	return c, true
}

func family(a trace.Action) trace.Category {
	switch a {
	case trace.ActionRequeue:
		return trace.CatRequeue
	case trace.ActionIssue:
		return trace.CatIssue
	case trace.ActionComplete:
		return trace.CatComplete
	case trace.ActionSplit, trace.ActionBounce:
		return 0
	case trace.ActionDrvData:
		return trace.CatDrvData
	}
	if a.IsNotify() {
		return trace.CatNotify
	}
	return trace.CatQueue
}

// parseBlkPart parses what follows the device (ftrace) or pid (blkparse):
// an optional cgroup column, the action, RWBS and the action's tail.
func (tp *textParser) parseBlkPart(ls *lineScanner, ev *trace.Event) error {
	t, c := ls.tok()
	if strings.Contains(t, ",") {
		cg, ok := parseCgroup(t)
		if !ok {
			return tp.syntax(c, "bad cgroup column %q", t)
		}
		ev.Cgroup = cg
		t, c = ls.tok()
	} else if strings.HasPrefix(t, "/") || t == "<...>" {
		ev.CgroupPath = t
		t, c = ls.tok()
	}
	if t == "" {
		return tp.syntax(c, "missing action")
	}
	a, ok := trace.ParseAction(t)
	if !ok {
		a, ok = longActions[t]
	}
	if !ok || a == trace.ActionProcess || a == trace.ActionTimestamp {
		return tp.syntax(c, "unknown action %q", t)
	}
	ev.Action = a
	t, c = ls.tok()
	cat, ok := parseRWBS(t, a.IsNotify())
	if !ok {
		return tp.syntax(c, "bad rwbs %q", t)
	}
	ev.Cat = cat | family(a)
	if a == trace.ActionMessage {
		ev.Seq = 0
		rest := ls.s[ls.i:]
		if len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		ev.Text = rest
		return nil
	}
	return tp.parseTail(ls, ev)
}

// parseTail parses "SECTOR + NSECT", "SECTOR / NEW", "<- (M,m) FROM",
// "(pdu hex)" or "(elapsed)" groups, "[comm]" or "[error]", and a trailing
// unplug depth.
func (tp *textParser) parseTail(ls *lineScanner, ev *trace.Event) error {
	a := ev.Action
	errTail := a == trace.ActionComplete || a == trace.ActionRequeue
	haveNum, havePlus := false, false
	var num uint64
	for {
		t, c := ls.tok()
		if t == "" {
			break
		}
		switch {
		case t == "+":
			t, c = ls.tok()
			n, err := tp.parseUint(t, c, 32, "sector count")
			if err != nil {
				return err
			}
			if n > 1<<23-1 {
				return tp.syntax(c, "sector count %d too large", n)
			}
			ev.Bytes = uint32(n) << 9
			havePlus = true
		case t == "/":
			t, c = ls.tok()
			n, err := tp.parseUint(t, c, 64, "split sector")
			if err != nil {
				return err
			}
			ev.SplitSector = n
			if haveNum && n > num && n-num < 1<<23 {
				// The record's sector/bytes are the split-off first part.
				ev.Bytes = uint32(n-num) << 9
			}
		case t == "<-":
			t, c = ls.tok()
			if len(t) < 5 || t[0] != '(' || t[len(t)-1] != ')' {
				return tp.syntax(c, "bad remap device %q", t)
			}
			d, err := tp.parseDev(t[1:len(t)-1], c+1)
			if err != nil {
				return err
			}
			ev.FromDev = d
			t, c = ls.tok()
			n, err := tp.parseUint(t, c, 64, "remap sector")
			if err != nil {
				return err
			}
			ev.FromSector = n
		case t[0] == '(':
			// A PC payload "(12 00 ..)" or -t's "(   7000)": skip the group.
			for !strings.HasSuffix(t, ")") {
				t, c = ls.tok()
				if t == "" {
					return tp.syntax(c, "unterminated parenthesis")
				}
			}
			if !havePlus && (haveNum || errTail) {
				// "BYTES (pdu)" on D/I/Q, "(pdu) [err]" on C/R: passthrough.
				ev.Cat |= trace.CatPC
				ev.Bytes = uint32(min(num, 1<<32-1))
				ev.Sector = 0
				haveNum = false
			}
		case t[0] == '[':
			start := c - 1
			end := strings.LastIndexByte(ls.s, ']')
			if end < start {
				return tp.syntax(c, "unterminated [")
			}
			inner := ls.s[start+1 : end]
			ls.i = end + 1
			if errTail {
				v, err := strconv.ParseInt(inner, 10, 32)
				if err != nil || v < -32768 || v > 65535 {
					return tp.syntax(c+1, "bad error %q", inner)
				}
				ev.Error = int16(v)
			} else if inner != "(null)" && inner != "unknown" {
				ev.Comm = inner
			}
			if a == trace.ActionUnplugIO || a == trace.ActionUnplugTimer || a == trace.ActionZoneUnplug {
				t, c = ls.tok()
				if t != "" {
					n, err := tp.parseUint(t, c, 64, "depth")
					if err != nil {
						return err
					}
					ev.Depth = n
				}
			}
			if t, c = ls.tok(); t != "" {
				return tp.syntax(c, "unexpected %q after %q", t, "]")
			}
			return tp.finishTail(ev, haveNum, num)
		default:
			if haveNum {
				return tp.syntax(c, "unexpected %q", t)
			}
			n, err := tp.parseUint(t, c, 64, "sector")
			if err != nil {
				return err
			}
			num, haveNum = n, true
		}
	}
	return tp.finishTail(ev, haveNum, num)
}

func (tp *textParser) finishTail(ev *trace.Event, haveNum bool, num uint64) error {
	if haveNum {
		ev.Sector = num
	}
	return nil
}
