package blktrace_test

// Tests on REAL captures of the ftrace blk tracer (fixtures/fx-ftrace-*,
// recorded on Linux 6.18 with BFQ on a loop device; see fixtures/README.md):
// the raw trace_pipe stream with options bin + context-info, the text of
// /sys/kernel/tracing/trace with default options, and the blk_classic text.
// Every expectation is computed here from the raw bytes or lines,
// independently of the package's decoder and text parser.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

const (
	fxFtraceBin     = "fx-ftrace-bin"
	fxFtraceText    = "fx-ftrace-text"
	fxFtraceClassic = "fx-ftrace-classic"

	fxLoopDev = "7,0" // the capture's loop device
)

func fxPath(t *testing.T, fx, file string) string {
	return shared.Fixture(t, fx, file)
}

// fxRaw returns the decompressed bytes of a .zst fixture file.
func fxRaw(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fxCaptureValue returns the value of "key ..." in the fixture's capture.txt
// (the words after key on its line).
func fxCaptureValue(t *testing.T, fx, key string) []string {
	t.Helper()
	b, err := os.ReadFile(fxPath(t, fx, "capture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == key {
			return f[1:]
		}
	}
	t.Fatalf("%s/capture.txt: no %q line", fx, key)
	return nil
}

// fxCgroupID is the id (inode) of the fixture's blkio cgroup "fxcg".
func fxCgroupID(t *testing.T, fx string) uint64 {
	v := fxCaptureValue(t, fx, "cgroup") // cgroup fxcg id N weight W
	if len(v) < 3 || v[0] != "fxcg" || v[1] != "id" {
		t.Fatalf("bad cgroup line %q", v)
	}
	id, err := strconv.ParseUint(v[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// fxCmdlines returns the saved_cmdlines recorded with the capture (pid -> comm).
func fxCmdlines(t *testing.T, fx string) map[uint32]string {
	b, err := os.ReadFile(fxPath(t, fx, "capture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "== saved_cmdlines\n")
	if !ok {
		t.Fatal("capture.txt has no saved_cmdlines section")
	}
	m := map[uint32]string{}
	for _, l := range strings.Split(strings.TrimSpace(after), "\n") {
		pid, comm, ok := strings.Cut(l, " ")
		if n, err := strconv.ParseUint(pid, 10, 32); ok && err == nil {
			m[uint32(n)] = comm
		}
	}
	return m
}

// fxReadAll opens path with blktrace.Open and reads every event, failing on
// any error other than io.EOF.
func fxReadAll(t *testing.T, path string) ([]trace.Event, trace.Meta, blktrace.Diagnostics) {
	t.Helper()
	in, err := blktrace.Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	defer in.Close()
	var evs []trace.Event
	for {
		ev, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: event %d: %v", path, len(evs), err)
		}
		evs = append(evs, ev)
	}
	return evs, in.Meta(), in.Diagnostics()
}

// fxKey is an independent action key: the blkparse letter of an I/O record
// or "m" for a message.
func fxKey(ev *trace.Event) string {
	if ev.Action == trace.ActionMessage {
		return "m"
	}
	return ev.Action.String()
}

func fxCounts(evs []trace.Event) map[string]int {
	c := map[string]int{}
	for i := range evs {
		c[fxKey(&evs[i])]++
	}
	return c
}

func fxEqualCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		if got[k] != want[k] {
			t.Errorf("%s: action %s: reader %d, independent count %d", what, k, got[k], want[k])
		}
	}
}

// checkBFQMessage checks that a message parses as BFQ's. BFQ 6.18 logs
// "new_ioprio N new_weight W" from bfq_init_bfqq before it sets bfqq->pid,
// so two messages per capture name the queue "bfq0A"; trace.ParseMessage
// (at the time of writing) refuses pid 0 and returns them with no
// scheduler. They are counted, and either parse is accepted.
func checkBFQMessage(text string, bfq0 *int) error {
	m := trace.ParseMessage(text)
	if strings.HasPrefix(text, "bfq0A new_ioprio ") {
		*bfq0++
		if m.PID == 0 && (m.Sched == "" && m.Body == text || m.Sched == "bfq" && m.Body == text[len("bfq0A "):]) {
			return nil
		}
	} else if m.Sched == "bfq" && m.Body != "" {
		return nil
	}
	return fmt.Errorf("message %q parses to %+v", text, m)
}

// ---------------------------------------------------------------- bin

// binRec is one record of the trace_pipe bin stream, decoded here by hand:
// the 16-byte ftrace context header, the 48-byte v7 blk_io_trace, the pdu.
type binRec struct {
	hdrPID, hdrCPU int32
	hdrTS          uint64
	magic, seq     uint32
	time           uint64
	sector         uint64
	bytes          uint32
	action         uint32
	pid, dev, cpu  uint32
	errno          uint16
	pdu            []byte
}

// Kernel constants (include/uapi/linux/blktrace_api.h), spelled out here so
// the test does not share the decoder's tables.
const (
	kMagicV7     = 0x65617407
	kTCNotify    = 1 << 10 // BLK_TC_NOTIFY, in action >> 16
	kTACgroup    = 0x100   // __BLK_TA_CGROUP / __BLK_TN_CGROUP
	kTNMessage   = 2       // __BLK_TN_MESSAGE
	kTCWrite     = 1 << 1  // BLK_TC_WRITE
	kTCRead      = 1 << 0  // BLK_TC_READ
	kMinorBits   = 20      // dev_t in the record: major << 20 | minor
	kLoop0Device = 7 << kMinorBits
)

var kLetters = map[uint32]string{
	1: "Q", 2: "M", 3: "F", 4: "G", 5: "S", 6: "R", 7: "D", 8: "C", 9: "P",
	10: "U", 11: "UT", 12: "I", 13: "X", 14: "B", 15: "A",
}

func walkBin(t *testing.T, b []byte) []binRec {
	t.Helper()
	le := binary.LittleEndian
	var recs []binRec
	for p := 0; p < len(b); {
		if bytes.HasPrefix(b[p:], []byte("CPU:")) {
			t.Fatalf("offset %d: in-band lost-events marker %q: the fixture should have none", p, b[p:min(p+40, len(b))])
		}
		if len(b)-p < 64 {
			t.Fatalf("offset %d: %d trailing bytes, a record needs 64", p, len(b)-p)
		}
		h := b[p+16:]
		r := binRec{
			hdrPID: int32(le.Uint32(b[p:])), hdrCPU: int32(le.Uint32(b[p+4:])), hdrTS: le.Uint64(b[p+8:]),
			magic: le.Uint32(h), seq: le.Uint32(h[4:]), time: le.Uint64(h[8:]), sector: le.Uint64(h[16:]),
			bytes: le.Uint32(h[24:]), action: le.Uint32(h[28:]), pid: le.Uint32(h[32:]), dev: le.Uint32(h[36:]),
			cpu: le.Uint32(h[40:]), errno: le.Uint16(h[44:]),
		}
		pdulen := int(le.Uint16(h[46:]))
		if p+64+pdulen > len(b) {
			t.Fatalf("offset %d: pdu_len %d runs past the end", p, pdulen)
		}
		r.pdu = h[48 : 48+pdulen]
		if r.magic != kMagicV7 {
			t.Fatalf("offset %d: magic %#x", p, r.magic)
		}
		recs = append(recs, r)
		p += 64 + pdulen
	}
	return recs
}

func (r *binRec) notify() bool { return (r.action>>16)&kTCNotify != 0 }

func (r *binRec) key() string {
	code := r.action & 0xff
	if r.notify() {
		if code == kTNMessage {
			return "m"
		}
		return fmt.Sprintf("note%d", code)
	}
	if l, ok := kLetters[code]; ok {
		return l
	}
	return fmt.Sprintf("code%d", code)
}

// cgroupAndRest splits a pdu flagged with the cgroup bit.
func (r *binRec) cgroupAndRest() (uint64, []byte, bool) {
	if r.action&kTACgroup == 0 {
		return 0, r.pdu, false
	}
	return binary.LittleEndian.Uint64(r.pdu), r.pdu[8:], true
}

func TestFtraceBinFixture(t *testing.T) {
	path := fxPath(t, fxFtraceBin, fxFtraceBin+".pipe.bin.zst")
	recs := walkBin(t, fxRaw(t, path))
	evs, meta, diag := fxReadAll(t, path)

	if diag.Format != "ftrace-bin+zstd" || meta.Source != "ftrace-bin" {
		t.Errorf("format %q, source %q; want ftrace-bin+zstd, ftrace-bin", diag.Format, meta.Source)
	}
	if diag.DroppedEvents != 0 || diag.UnknownActions != 0 || diag.CPUMismatch != 0 {
		t.Errorf("diagnostics %+v: want no drops, unknown actions or cpu mismatches", diag)
	}
	if len(evs) != len(recs) {
		t.Fatalf("reader returned %d events, the stream holds %d records", len(evs), len(recs))
	}

	want := map[string]int{}
	for i := range recs {
		want[recs[i].key()]++
	}
	fxEqualCounts(t, "bin", fxCounts(evs), want)
	// The capture's shape, from walking it once (fio: 272 reads + 800 writes).
	for _, k := range []string{"Q", "G", "I", "D", "C", "P", "U"} {
		if want[k] != 1072 {
			t.Errorf("raw count of %s = %d, want 1072 (fio's 272 reads + 800 writes, no merges)", k, want[k])
		}
	}
	if want["m"] != 19612 || len(recs) != 27116 {
		t.Errorf("raw: %d messages, %d records; want 19612, 27116", want["m"], len(recs))
	}

	cg := fxCgroupID(t, fxFtraceBin)
	cmd := fxCmdlines(t, fxFtraceBin)
	origin := int64(recs[0].hdrTS) // first record is an I/O record (Q)
	if meta.Origin != origin {
		t.Errorf("origin %d, want the first record's time %d", meta.Origin, origin)
	}
	if len(meta.Devices) != 1 || meta.Devices[0].String() != fxLoopDev {
		t.Errorf("devices %v, want [%s]", meta.Devices, fxLoopDev)
	}
	var bad, inversions, bfq0 int
	var qR, qW, cgMsgs int
	sched := map[string]int{}
	for i := range recs {
		r, ev := &recs[i], &evs[i]
		fail := func(format string, args ...any) {
			if bad++; bad <= 10 {
				t.Errorf("record %d (%s): %s", i, r.key(), fmt.Sprintf(format, args...))
			}
		}
		// the 16-byte header against the record and the event
		if uint32(r.hdrPID) != r.pid || uint32(r.hdrCPU) != r.cpu || r.hdrTS != r.time || r.seq != 0 {
			fail("header pid %d cpu %d ts %d seq %d vs record pid %d cpu %d time %d", r.hdrPID, r.hdrCPU, r.hdrTS, r.seq, r.pid, r.cpu, r.time)
		}
		if ev.PID != uint32(r.hdrPID) || ev.CPU != uint32(r.hdrCPU) || int64(ev.Time)+meta.Origin != int64(r.hdrTS) {
			fail("event pid %d cpu %d time %d(+%d) vs header pid %d cpu %d ts %d", ev.PID, ev.CPU, ev.Time, meta.Origin, r.hdrPID, r.hdrCPU, r.hdrTS)
		}
		if i > 0 && r.hdrTS < recs[i-1].hdrTS {
			inversions++
		}
		if r.dev != kLoop0Device || ev.Dev.String() != fxLoopDev {
			fail("device %#x / %v", r.dev, ev.Dev)
		}
		if ev.Comm != "" {
			fail("comm %q: the bin stream has no process notes", ev.Comm)
		}
		id, rest, tagged := r.cgroupAndRest()
		if !tagged && r.key() != "P" && r.key() != "U" {
			fail("no cgroup flag")
		}
		if ev.Cgroup != id {
			fail("cgroup %d, pdu says %d", ev.Cgroup, id)
		}
		if r.notify() {
			text := string(bytes.TrimRight(rest, "\x00"))
			if ev.Action != trace.ActionMessage || ev.Text != text {
				fail("message %v %q, want %q", ev.Action, ev.Text, text)
			}
			if err := checkBFQMessage(ev.Text, &bfq0); err != nil {
				fail("%v", err)
			}
			m := trace.ParseMessage(ev.Text)
			if m.PID > 0 {
				if comm := cmd[uint32(m.PID)]; comm != "fio" {
					fail("message names queue of pid %d (%q), not a fio job", m.PID, comm)
				}
			}
			sched[m.QueueName()]++
			if id == cg {
				cgMsgs++
			}
			continue
		}
		if ev.Sector != r.sector || ev.Bytes != r.bytes || ev.Error != int16(r.errno) {
			fail("sector/bytes/error %d/%d/%d, want %d/%d/%d", ev.Sector, ev.Bytes, ev.Error, r.sector, r.bytes, int16(r.errno))
		}
		if uint32(ev.Cat) != r.action>>16 {
			fail("category %#x, want %#x", uint32(ev.Cat), r.action>>16)
		}
		switch r.key() {
		case "U":
			if want := binary.BigEndian.Uint64(rest); ev.Depth != want {
				fail("unplug depth %d, want %d", ev.Depth, want)
			}
		case "Q":
			// The reader job is in cgroup fxcg, the writer in the root group.
			switch cat := r.action >> 16; {
			case cat&kTCRead != 0:
				qR++
				if id != cg {
					fail("read Q in cgroup %d, want fxcg %d", id, cg)
				}
			case cat&kTCWrite != 0:
				qW++
				if id != 1 {
					fail("write Q in cgroup %d, want the root 1", id)
				}
			}
			if r.bytes != 4096 {
				fail("Q of %d bytes, fio issued 4k", r.bytes)
			}
		}
	}
	if inversions != 0 {
		t.Errorf("%d time inversions: trace_pipe merges the CPUs by time", inversions)
	}
	if qR != 272 || qW != 800 {
		t.Errorf("Q: %d reads, %d writes; fio did 272 and 800", qR, qW)
	}
	if cgMsgs == 0 || sched[""] == 0 || len(sched) < 3 {
		t.Errorf("BFQ messages: %d in fxcg, queues %v", cgMsgs, sched)
	}
	if bfq0 != 2 {
		t.Errorf("%d bfq0A messages, want 2 (one per new queue)", bfq0)
	}
}

// ---------------------------------------------------------------- text

// ftraceLine matches a line of the blk tracer's default text: the context
// prefix, the device, the optional cgroup column (blk_cgroup), the action
// and RWBS columns, and the rest.
var ftraceLine = regexp.MustCompile(`^\s*(\S.*)-(\d+)\s+\[(\d{3})\] \S{5} +(\d+)\.(\d{6}): +(\d+,\d+) +(?:([0-9a-f]+,[0-9a-f]+) +)?([A-Za-z]{1,2}) +([A-Z]+) (.*)$`)

type textLine struct {
	comm     string
	pid, cpu uint32
	ns       int64
	dev      string
	cgroup   string
	act      string
	rwbs     string
	rest     string
}

func textLines(t *testing.T, b []byte, re *regexp.Regexp, parse func([]string) textLine) (lines []textLine, headers int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		s := sc.Text()
		if strings.HasPrefix(s, "#") {
			headers++
			continue
		}
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("line %d does not match the expected layout: %q", n, s)
		}
		lines = append(lines, parse(m))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines, headers
}

func atou(s string) uint32 {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		panic(err)
	}
	return uint32(n)
}

func parseFtraceLine(m []string) textLine {
	sec, _ := strconv.ParseInt(m[4], 10, 64)
	us, _ := strconv.ParseInt(m[5], 10, 64)
	return textLine{comm: m[1], pid: atou(m[2]), cpu: atou(m[3]), ns: sec*1e9 + us*1e3, dev: m[6], cgroup: m[7], act: m[8], rwbs: m[9], rest: m[10]}
}

// checkTextEvents compares the reader's events with independently parsed
// lines and returns the problems found (at most a few are reported).
func checkTextEvents(t *testing.T, what string, lines []textLine, evs []trace.Event, origin int64, fxcg uint64) {
	t.Helper()
	if len(evs) != len(lines) {
		t.Fatalf("%s: reader returned %d events for %d lines", what, len(evs), len(lines))
	}
	want := map[string]int{}
	for _, l := range lines {
		want[l.act]++
	}
	fxEqualCounts(t, what, fxCounts(evs), want)

	bad, bfq0 := 0, 0
	var comms, qR, qW int
	for i, l := range lines {
		ev := &evs[i]
		fail := func(format string, args ...any) {
			if bad++; bad <= 10 {
				t.Errorf("%s: line %d (%s): %s", what, i, l.act, fmt.Sprintf(format, args...))
			}
		}
		if ev.PID != l.pid || ev.CPU != l.cpu || int64(ev.Time)+origin != l.ns || ev.Dev.String() != l.dev {
			fail("event pid %d cpu %d time %d+%d dev %v; line pid %d cpu %d time %d dev %s", ev.PID, ev.CPU, ev.Time, origin, ev.Dev, l.pid, l.cpu, l.ns, l.dev)
		}
		if l.comm != "" {
			// default text: the context prefix names the task
			if l.comm != "<...>" {
				comms++
				if ev.Comm != l.comm {
					fail("comm %q, prefix says %q", ev.Comm, l.comm)
				}
			}
		} else if l.act != "m" && l.act != "C" {
			// blk_classic: Q/G/I/D/P/U lines end in [comm]
			if _, c, ok := strings.Cut(l.rest, "["); ok {
				c = c[:strings.LastIndexByte(c, ']')]
				if ev.Comm != c {
					fail("comm %q, line says [%s]", ev.Comm, c)
				}
				comms++
			}
		}
		if l.cgroup != "" {
			lo, hi, _ := strings.Cut(l.cgroup, ",")
			a, _ := strconv.ParseUint(lo, 16, 32)
			b, _ := strconv.ParseUint(hi, 16, 32)
			if ev.Cgroup != b<<32|a {
				fail("cgroup %d, column %s", ev.Cgroup, l.cgroup)
			}
		}
		if l.act == "m" {
			if ev.Action != trace.ActionMessage || ev.Text != l.rest {
				fail("message %v %q, want %q", ev.Action, ev.Text, l.rest)
			}
			if err := checkBFQMessage(ev.Text, &bfq0); err != nil {
				fail("%v", err)
			}
			continue
		}
		if ev.RWBS() != l.rwbs {
			fail("rwbs %s, want %s", ev.RWBS(), l.rwbs)
		}
		switch l.act {
		case "Q", "G", "I", "D", "C":
			// "SECTOR + NSECT [...]"
			f := strings.Fields(l.rest)
			if len(f) < 3 || f[1] != "+" {
				fail("tail %q", l.rest)
				break
			}
			if s, _ := strconv.ParseUint(f[0], 10, 64); ev.Sector != s || ev.Sectors() != uint64(atou(f[2])) {
				fail("sector %d+%d, tail %q", ev.Sector, ev.Sectors(), l.rest)
			}
			if l.act == "C" && f[3] != "[0]" {
				fail("completion status %s", f[3])
			}
			if l.act == "Q" {
				if strings.HasPrefix(l.rwbs, "R") {
					qR++
					if fxcg != 0 && l.cgroup != "" && ev.Cgroup != fxcg {
						fail("read Q in cgroup %d, want fxcg %d", ev.Cgroup, fxcg)
					}
				} else {
					qW++
					if fxcg != 0 && l.cgroup != "" && ev.Cgroup != 1 {
						fail("write Q in cgroup %d, want root 1", ev.Cgroup)
					}
				}
			}
		case "U":
			f := strings.Fields(l.rest) // "[comm] depth"
			if d, _ := strconv.ParseUint(f[len(f)-1], 10, 64); ev.Depth != d {
				fail("depth %d, tail %q", ev.Depth, l.rest)
			}
		}
	}
	if comms == 0 || qR == 0 || qW == 0 || bfq0 != 2 {
		t.Errorf("%s: %d comms checked, %d read Q, %d write Q, %d bfq0A messages (want 2)", what, comms, qR, qW, bfq0)
	}
}

func TestFtraceTextFixture(t *testing.T) {
	path := fxPath(t, fxFtraceText, fxFtraceText+".trace.txt.zst")
	lines, headers := textLines(t, fxRaw(t, path), ftraceLine, parseFtraceLine)
	evs, meta, diag := fxReadAll(t, path)
	if diag.Format != "ftrace-text+zstd" || meta.Source != "ftrace-text" {
		t.Errorf("format %q, source %q; want ftrace-text+zstd, ftrace-text", diag.Format, meta.Source)
	}
	if diag.DroppedEvents != 0 || headers != 2 {
		t.Errorf("dropped %d, %d header lines (want 0, 2)", diag.DroppedEvents, headers)
	}
	if meta.Origin != lines[0].ns {
		t.Errorf("origin %d, want the first line's %d", meta.Origin, lines[0].ns)
	}
	fxcg := fxCgroupID(t, fxFtraceText)
	checkTextEvents(t, "text", lines, evs, meta.Origin, fxcg)

	// The capture's shape: fio did 260 reads + 800 writes (fio.json), all
	// queued; one write bio was back-merged (M), the others got a request
	// each (G I D C, one plug P/U per request); all events but P/U carry a
	// cgroup.
	c := fxCounts(evs)
	if c["Q"] != 1060 || c["M"] != 1 {
		t.Errorf("Q %d, M %d; want 1060, 1", c["Q"], c["M"])
	}
	for _, k := range []string{"G", "I", "D", "C", "P", "U"} {
		if c[k] != 1059 {
			t.Errorf("%s: %d, want 1059", k, c[k])
		}
	}
	for i, l := range lines {
		if (l.cgroup == "") != (l.act == "P" || l.act == "U") {
			t.Fatalf("line %d: action %s with cgroup column %q", i, l.act, l.cgroup)
		}
	}
	// Comm from the prefix reaches completions run in other contexts.
	seen := map[string]bool{}
	for i := range evs {
		if evs[i].Action == trace.ActionComplete {
			seen[evs[i].Comm] = true
		}
	}
	if !seen["fio"] || len(seen) < 2 {
		t.Errorf("C comms %v: want fio and at least one other context", seen)
	}
}

// classicLine matches blk_classic: "%3d,%-3d %2d %5d.%09lu %5u %2s %3s ".
var classicLine = regexp.MustCompile(`^ *(\d+,\d+) +(\d+) +(\d+)\.(\d{9}) +(\d+) +([A-Za-z]{1,2}) +([A-Z]+) (.*)$`)

func TestFtraceClassicFixture(t *testing.T) {
	path := fxPath(t, fxFtraceClassic, fxFtraceClassic+".trace.txt.zst")
	lines, headers := textLines(t, fxRaw(t, path), classicLine, func(m []string) textLine {
		sec, _ := strconv.ParseInt(m[3], 10, 64)
		ns, _ := strconv.ParseInt(m[4], 10, 64)
		return textLine{dev: m[1], cpu: atou(m[2]), ns: sec*1e9 + ns, pid: atou(m[5]), act: m[6], rwbs: m[7], rest: m[8]}
	})
	evs, meta, diag := fxReadAll(t, path)
	// blk_classic lines are blkparse lines without the sequence column; the
	// reader reads them as blkparse text (times as printed: absolute).
	if !strings.HasSuffix(diag.Format, "-text+zstd") {
		t.Errorf("format %q", diag.Format)
	}
	t.Logf("blk_classic detected as %q, origin %d", diag.Format, meta.Origin)
	if diag.DroppedEvents != 0 || headers != 4 {
		t.Errorf("dropped %d, %d header lines (want 0, 4)", diag.DroppedEvents, headers)
	}
	// blk_classic prints no cgroup column even with blk_cgroup on.
	checkTextEvents(t, "classic", lines, evs, meta.Origin, 0)
	c := fxCounts(evs)
	for _, k := range []string{"Q", "G", "I", "D", "C"} {
		if c[k] != 943 { // fio: 191 reads + 752 writes
			t.Errorf("%s: %d, want 943", k, c[k])
		}
	}
}

// TestFtraceTextBinAgree compares the action mix of the bin and text
// captures: two separate runs of the same fio job on the same setup.
func TestFtraceTextBinAgree(t *testing.T) {
	bin, _, _ := fxReadAll(t, fxPath(t, fxFtraceBin, fxFtraceBin+".pipe.bin.zst"))
	txt, _, _ := fxReadAll(t, fxPath(t, fxFtraceText, fxFtraceText+".trace.txt.zst"))
	cb, ct := fxCounts(bin), fxCounts(txt)
	// Per queued bio: each I/O action within 1 % (merges are rare: 0 and
	// 1 of about 1070 bios), messages within 10 %.
	for _, k := range []string{"Q", "G", "I", "D", "C", "P", "U", "M", "m"} {
		rb := float64(cb[k]) / float64(cb["Q"])
		rt := float64(ct[k]) / float64(ct["Q"])
		tol := 0.01
		if k == "m" {
			tol = 0.10 * rb
		}
		if math.Abs(rb-rt) > tol {
			t.Errorf("%s per Q: bin %.3f (%d), text %.3f (%d)", k, rb, cb[k], rt, ct[k])
		}
	}
	// Read/write split of the queued bios within 5 points.
	share := func(evs []trace.Event) float64 {
		var r, n float64
		for i := range evs {
			if evs[i].Action == trace.ActionQueue {
				n++
				if evs[i].Cat&trace.CatRead != 0 {
					r++
				}
			}
		}
		return r / n
	}
	if sb, st := share(bin), share(txt); math.Abs(sb-st) > 0.05 {
		t.Errorf("read share of Q: bin %.3f, text %.3f", sb, st)
	}
	// Same message vocabulary: the BFQ bodies (queue names stripped) seen
	// 20 times or more in one run appear in the other.
	vocab := func(evs []trace.Event) map[string]int {
		v := map[string]int{}
		for i := range evs {
			if evs[i].Action == trace.ActionMessage {
				body := trace.ParseMessage(evs[i].Text).Body
				w, _, _ := strings.Cut(body, " ")
				v[w]++
			}
		}
		return v
	}
	vb, vt := vocab(bin), vocab(txt)
	for w, n := range vb {
		if n >= 20 && vt[w] == 0 {
			t.Errorf("message %q: %d in bin, none in text", w, n)
		}
	}
	for w, n := range vt {
		if n >= 20 && vb[w] == 0 {
			t.Errorf("message %q: %d in text, none in bin", w, n)
		}
	}
}
