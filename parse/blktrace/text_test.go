package blktrace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// ftraceLine renders ev as the ftrace blk tracer's text (option
// context-info on, blk_classic off), blk part after kernel/trace/blktrace.c.
func ftraceLine(ev *trace.Event, origin int64) string {
	abs := int64(ev.Time) + origin
	comm := ev.Comm
	if comm == "" {
		comm = "<...>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%16s-%-7d [%03d] d..1. %5d.%06d: %3d,%-3d ", comm, ev.PID, ev.CPU, abs/1e9, abs%1e9/1e3, ev.Dev.Major(), ev.Dev.Minor())
	if ev.Cgroup != 0 {
		fmt.Fprintf(&b, "%x,%-x ", uint32(ev.Cgroup), uint32(ev.Cgroup>>32))
	}
	fmt.Fprintf(&b, "%2s %3s ", ev.Action, ev.RWBS())
	switch ev.Action {
	case trace.ActionMessage:
		b.WriteString(ev.Text)
	case trace.ActionPlug:
		fmt.Fprintf(&b, "[%s]", ev.Comm)
	case trace.ActionUnplugIO, trace.ActionUnplugTimer:
		fmt.Fprintf(&b, "[%s] %d", ev.Comm, ev.Depth)
	case trace.ActionComplete:
		fmt.Fprintf(&b, "%d + %d [%d]", ev.Sector, ev.Sectors(), ev.Error)
	default:
		fmt.Fprintf(&b, "%d + %d [%s]", ev.Sector, ev.Sectors(), ev.Comm)
	}
	return b.String()
}

// TestFtraceText renders a fixture as ftrace text and reads it back: times
// to the microsecond, comm from the context prefix, cgroup column.
func TestFtraceText(t *testing.T) {
	fx := fixtureNames[0]
	evs, in := openAll(t, fixtureFile(t, fx, ".blktrace.0.zst"))
	origin := in.Meta().Origin
	var b strings.Builder
	b.WriteString("# tracer: blk\n#\n# entries-in-buffer/entries-written: 8069/8069   #P:2\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n")
	var want []trace.Event
	for i := range evs {
		if evs[i].Action.IsNotify() && evs[i].Action != trace.ActionMessage {
			continue
		}
		want = append(want, evs[i])
		b.WriteString(ftraceLine(&evs[i], origin))
		b.WriteByte('\n')
		if i == 100 {
			b.WriteString("CPU:0 [LOST 7 EVENTS]\n")
		}
	}
	tr, err := NewTextReader(strings.NewReader(b.String()), "trace")
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, tr)
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	m := tr.Meta()
	if m.Source != "ftrace-text" || tr.Dropped() != 7 {
		t.Errorf("meta %+v, dropped %d", m, tr.Dropped())
	}
	for i := range want {
		w, g := &want[i], &got[i]
		wt := (int64(w.Time) + origin) / 1000 * 1000
		if int64(g.Time)+m.Origin != wt || g.Action != w.Action || g.PID != w.PID || g.CPU != w.CPU ||
			g.Dev != w.Dev || g.Sector != w.Sector || g.Bytes != w.Bytes || g.Text != w.Text ||
			g.Cgroup != w.Cgroup || g.Comm != w.Comm || g.Depth != w.Depth || g.RWBS() != w.RWBS() {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, *g, *w)
		}
	}
}

// TestTextLiterals reads lines quoted in the format spec (blktrace-format.md
// sections 3 and 4): blkparse default output, -t, PC, remap, split,
// messages with and without the cgroup column, old and new ftrace prefixes,
// blk_classic, and a summary block.
func TestTextLiterals(t *testing.T) {
	const in = `Input file sdb.blktrace.0 added
  8,16   0        4     0.000003000  1234  Q  WS 2056 + 8 [fio]
  8,16   0        9     0.000008000  1234  I  WS 2040 + 24 (    7000) [fio]
  8,16   1        4     0.000067000     0  C RAM 10000 + 256 [5]
  8,16   1        5     0.000070000     0  C FWS 0 [0]
  8,16   0       21     0.000076000  1234  X   R 50000 / 50512 [fio]
  8,16   0       22     0.000077000  1234  A   R 52048 + 8 <- (253,0) 2000
  8,16   0       24     0.000079000    77 UT   N [kworker/1:1H] 3
  8,16   0       26     0.000081000  1234  I   R 36 (12 00 00 00 24 00 ..) [fio]
  8,16   1        8     0.000083000     0  C   R (12 00 00 00 24 00 ..) [65531]
  8,16   0        0     0.000084000  1234  m   N cfq1234S  insert_request
  7,0    1        0     0.000246335  4059 1,0  m   N bfq4058S expire (4, slow 0, num_disp 0, short_ttime 1)
  8,16   0      229    10.236130406 14252  M   W 605380656 + 56 [DataXceiver for]
259,0    1        1     0.000000000 21279  A  RA 2348060440 + 8 <- (259,3) 2345510680
CPU0 (8,16):
 Reads Queued:        9922,    39688KiB	 Writes Queued:           0,        0KiB
Total (8,16):
Events (8,16): 223146 entries
Skips: 0 forward (0 -   0.0%)
`
	tr, err := NewTextReader(strings.NewReader(in), "doc")
	if err != nil {
		t.Fatal(err)
	}
	evs := readAll(t, tr)
	want := []string{
		"0.000003000 Q WS 2056+8 fio",
		"0.000008000 I WS 2040+24 fio",
		"0.000067000 C RAM 10000+256 err=5",
		"0.000070000 C FWS 0+0",
		"0.000076000 X R 50000+512 split=50512 fio",
		"0.000077000 A R 52048+8 from=253,0:2000 fio", // comm from the pid's earlier lines
		"0.000079000 UT N 0+0 depth=3 kworker/1:1H",
		"0.000081000 I R 0+0 pc=36 fio",
		"0.000083000 C N 0+0 pc=0 err=-5", // a PC completion prints no byte count
		"0.000084000 m N 0+0 \"cfq1234S  insert_request\" fio",
		"0.000246335 m N 0+0 cg=1 \"bfq4058S expire (4, slow 0, num_disp 0, short_ttime 1)\"",
		"10.236130406 M W 605380656+56 DataXceiver for",
		"0.000000000 A RA 2348060440+8 from=259,3:2345510680",
	}
	if len(evs) != len(want) {
		t.Fatalf("got %d events, want %d", len(evs), len(want))
	}
	for i, ev := range evs {
		if g := describe(&ev); g != want[i] {
			t.Errorf("line %d: got %s, want %s", i+2, g, want[i])
		}
	}

	const ft = `# tracer: blk
       kjournald-305   [000]  3046.491224:   8,1    A WBS 6367 + 8 <- (8,1) 6304
       kjournald-305   [000]  3046.491227:   8,1    Q   R 6367 + 8 [kjournald]
       kjournald-305   [000]  3046.491610:   8,1    U  WS [kjournald] 1
          <idle>-0     [000]  3046.511914:   8,1    C  RS 6367 + 8 [0]
            fio-4058    [001] d..1.   12.500001:   7,0   1,0  m   N bfq4058S allocated
`
	tr, err = NewTextReader(strings.NewReader(ft), "trace")
	if err != nil {
		t.Fatal(err)
	}
	evs = readAll(t, tr)
	wantFt := []string{
		"0.000000000 A FWS 6367+8 from=8,1:6304 kjournald",
		"0.000003000 Q R 6367+8 kjournald",
		"0.000386000 U WS 0+0 depth=1 kjournald",
		"0.020690000 C RS 6367+8 <idle>",
		"-3033.991223000 m N 0+0 cg=1 \"bfq4058S allocated\" fio",
	}
	for i, ev := range evs {
		if g := describe(&ev); i >= len(wantFt) || g != wantFt[i] {
			t.Errorf("ftrace line %d: got %s", i+2, g)
		}
	}
	if m := tr.Meta(); m.Source != "ftrace-text" || m.Origin != 3046491224000 {
		t.Errorf("meta %+v", m)
	}

	// blk_classic: blkparse's columns without the sequence, trace-clock
	// times rebased to the first event as ftrace's other layouts are.
	const classic = "# DEV   CPU TIMESTAMP     PID ACT FLG\n  8,1    0  3046.491227000   305  Q   R 6367 + 8 [kjournald]\n  8,1    0  3046.491230500   305  G   R 6367 + 8 [kjournald]\n"
	tr, _ = NewTextReader(strings.NewReader(classic), "classic")
	evs = readAll(t, tr)
	if len(evs) != 2 || describe(&evs[0]) != "0.000000000 Q R 6367+8 kjournald" || describe(&evs[1]) != "0.000003500 G R 6367+8 kjournald" || evs[0].PID != 305 {
		t.Errorf("blk_classic: %+v", evs)
	}
	if m := tr.Meta(); m.Source != "ftrace-text" || m.Origin != 3046491227000 {
		t.Errorf("blk_classic meta %+v", m)
	}
}

func describe(ev *trace.Event) string {
	s := fmt.Sprintf("%v %v %s %d+%d", ev.Time, ev.Action, ev.RWBS(), ev.Sector, ev.Sectors())
	if ev.Cat&trace.CatPC != 0 {
		s += fmt.Sprintf(" pc=%d", ev.Bytes)
	}
	if ev.Cgroup != 0 {
		s += fmt.Sprintf(" cg=%d", ev.Cgroup)
	}
	if ev.Error != 0 {
		s += fmt.Sprintf(" err=%d", ev.Error)
	}
	if ev.SplitSector != 0 {
		s += fmt.Sprintf(" split=%d", ev.SplitSector)
	}
	if ev.Action == trace.ActionRemap {
		s += fmt.Sprintf(" from=%v:%d", ev.FromDev, ev.FromSector)
	}
	if ev.Depth != 0 {
		s += fmt.Sprintf(" depth=%d", ev.Depth)
	}
	if ev.Text != "" {
		s += fmt.Sprintf(" %q", ev.Text)
	}
	if ev.Comm != "" {
		s += " " + ev.Comm
	}
	return s
}
