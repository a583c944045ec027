package blktrace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestTextMatchesBinary reads each fixture twice, from its per-CPU binary
// files and from the cgroup-aware blkparse text made from them, and compares
// the events field by field wherever the text carries the field.
func TestTextMatchesBinary(t *testing.T) {
	for _, fx := range fixtureNames {
		t.Run(fx, func(t *testing.T) {
			bin, _ := openAll(t, fixtureFile(t, fx, ".blktrace.0.zst"))
			txt, tin := openAll(t, fixtureFile(t, fx, ".blkparse.txt.zst"))
			if m, d := tin.Meta(), tin.Diagnostics(); m.Source != "blkparse-text" || d.Format != "blkparse-text+zstd" || m.Origin != 0 {
				t.Errorf("text meta %+v, diagnostics %+v", m, d)
			}
			var io []trace.Event
			for _, ev := range bin {
				if ev.Action != trace.ActionProcess && ev.Action != trace.ActionTimestamp {
					io = append(io, ev)
				}
			}
			if len(io) != len(txt) {
				t.Fatalf("binary %d events, text %d", len(io), len(txt))
			}
			bad := 0
			for i := range io {
				if d := diffTextEvent(&io[i], &txt[i]); d != "" {
					t.Errorf("event %d: %s\n bin %+v\n txt %+v", i, d, io[i], txt[i])
					if bad++; bad > 5 {
						t.FailNow()
					}
				}
			}
		})
	}
}

// diffTextEvent compares a binary event with the event read from its
// blkparse text line, on the fields the text carries.
func diffTextEvent(b, x *trace.Event) string {
	var d bytes.Buffer
	chk := func(name string, ok bool, bv, xv any) {
		if !ok {
			fmt.Fprintf(&d, "%s %v != %v; ", name, bv, xv)
		}
	}
	chk("time", b.Time == x.Time, b.Time, x.Time)
	chk("cpu", b.CPU == x.CPU, b.CPU, x.CPU)
	chk("pid", b.PID == x.PID, b.PID, x.PID)
	chk("dev", b.Dev == x.Dev, b.Dev, x.Dev)
	chk("action", b.Action == x.Action, b.Action, x.Action)
	chk("rwbs", b.RWBS() == x.RWBS(), b.RWBS(), x.RWBS())
	if b.Action == trace.ActionMessage {
		chk("text", b.Text == x.Text, b.Text, x.Text)
		chk("cgroup", b.Cgroup == x.Cgroup, b.Cgroup, x.Cgroup)
		return d.String()
	}
	chk("seq", b.Seq == x.Seq, b.Seq, x.Seq)
	chk("op", b.Cat.OpFlags() == x.Cat.OpFlags(), b.Cat.OpFlags(), x.Cat.OpFlags())
	switch b.Action {
	case trace.ActionPlug, trace.ActionUnplugIO, trace.ActionUnplugTimer:
		chk("depth", b.Depth == x.Depth, b.Depth, x.Depth)
	default:
		chk("sector", b.Sector == x.Sector, b.Sector, x.Sector)
		chk("sectors", b.Sectors() == x.Sectors(), b.Sectors(), x.Sectors())
	}
	switch b.Action {
	case trace.ActionComplete, trace.ActionRequeue:
		chk("error", b.Error == x.Error, b.Error, x.Error)
	case trace.ActionSplit:
		chk("split", b.SplitSector == x.SplitSector, b.SplitSector, x.SplitSector)
	case trace.ActionRemap:
		chk("from", b.FromDev == x.FromDev && b.FromSector == x.FromSector, b.FromSector, x.FromSector)
	default:
		chk("comm", b.Comm == x.Comm, b.Comm, x.Comm)
	}
	return d.String()
}
