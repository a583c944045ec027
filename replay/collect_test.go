package replay

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// TestWorkloadOfFixtures reads each fixture through NewWorkload and checks
// what the capture shows of it: every fixture plugs (fio with libaio), so
// the records carry plug starts and ends, and a second run of the workload
// streams the same records (the engine keeps its state in fresh ones).
func TestWorkloadOfFixtures(t *testing.T) {
	for _, name := range []string{"fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900", "fx-bfq-4seqread/fx-bfq-4seqread", "fx-mqdl-rw-nocg/fx-mqdl-rw-nocg",
		"fx-ftrace-bin/fx-ftrace-bin.pipe.bin.zst", "fx-ftrace-classic/fx-ftrace-classic.trace.txt.zst", "fx-ftrace-text/fx-ftrace-text.trace.txt.zst"} {
		dir, file := filepath.Split(name)
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(shared.Fixture(t, filepath.Clean(dir)), file)
			w, wr := workloadRecords(t, path)
			plugged, unplugs := 0, 0
			for i := range wr {
				if wr[i].Plugged {
					plugged++
				}
				if wr[i].PlugEnd {
					unplugs++
				}
			}
			if plugged == 0 || unplugs == 0 {
				t.Errorf("%d plugged records, %d unplugs: every fixture plugs", plugged, unplugs)
			}
			if len(wr) != w.Bios {
				t.Errorf("%d records streamed, the workload counts %d bios", len(wr), w.Bios)
			}
			t.Logf("%d records, %d plugged, %d unplugs", len(wr), plugged, unplugs)
		})
	}
}

// The filesystem captures carry what the fixtures lack: PREFLUSH bios that
// complete for their process at the zero-byte C of their restored request
// (blk_flush_complete_seq, REQ_FSEQ_DONE), after the post-flush, not at
// their data phase's C. The expectation is read off the raw events
// independently of the Collector: the device issued flush requests (a D of
// zero bytes with F), so its cache is write-back, and every PREFLUSH bio's
// completion is one of the zero-byte, flagless C events at its sector.
func TestWorkloadFlushCompletions(t *testing.T) {
	if testing.Short() {
		t.Skip("reads recorded captures")
	}
	for _, name := range []string{"fs-mqdl-fsync-vs-seqread", "fs-bfq-fsync-vs-seqread", "fs-mqdl-pgbench"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(shared.Path(t, "captures", "recorded-fs", name), name)
			w, wr := workloadRecords(t, path)
			gots := recordGots(t, w)
			evs, _ := fixture.Events(t, path)
			type at struct {
				sector uint64
				t      trace.Time
			}
			finals := map[at]bool{}
			flushReqs := 0
			for i := range evs {
				e := &evs[i]
				if e.Dev != w.Dev || e.Bytes != 0 {
					continue
				}
				switch {
				case e.Action == trace.ActionIssue && e.Cat&trace.CatFlush != 0:
					flushReqs++
				case e.Action == trace.ActionComplete && e.Cat&trace.CatFlush == 0:
					finals[at{e.Sector, e.Time}] = true
				}
			}
			if flushReqs == 0 || w.WriteCache != WriteBack {
				t.Fatalf("%d flush requests issued, workload cache %v: want write back", flushReqs, w.WriteCache)
			}
			preflush, atFinal := 0, 0
			for i := range wr {
				r := &wr[i]
				if r.Cat&trace.CatFlush == 0 {
					continue
				}
				preflush++
				if r.Done.Valid() && finals[at{r.Sector, r.Done}] {
					atFinal++
				}
				if got := gots[i]; got.Valid() && got < r.Queue {
					t.Errorf("record %d:%d got its request at %v, before its Q at %v", r.PID, r.Index, got, r.Queue)
				}
			}
			if preflush == 0 || atFinal != preflush {
				t.Errorf("%d of %d PREFLUSH bios complete at their flush sequence's final C", atFinal, preflush)
			}
			t.Logf("%d records, %d flush requests issued, %d PREFLUSH bios", len(wr), flushReqs, preflush)
		})
	}
}

// workloadRecords reads path through NewWorkload and streams its records
// twice, failing the test when the two runs differ.
func workloadRecords(t *testing.T, path string) (*Workload, []Record) {
	t.Helper()
	w, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	first, again := records(t, w), records(t, w)
	if len(again) != len(first) {
		t.Fatalf("a second run streams %d records, the first %d", len(again), len(first))
	}
	for i := range first {
		if comparable(again[i]) != comparable(first[i]) {
			t.Fatalf("a second run streams other records (record %d)", i)
		}
	}
	return w, first
}

// comparableRecord is a Record with its pointers replaced by the bios they
// name (and its recordExt by a copy), so that records of two runs compare
// with ==.
type comparableRecord struct {
	r             Record
	ext           recordExt
	after, parent bioKey
}

func comparable(r Record) comparableRecord {
	c := comparableRecord{r: r}
	if r.ext != nil {
		c.ext = *r.ext
	}
	if a := c.ext.after; a != nil {
		c.after = bioKey{a.PID, a.Index}
	}
	if p := c.ext.parent; p != nil {
		c.parent = bioKey{p.PID, p.Index}
	}
	c.ext.after, c.ext.parent, c.r.ext, c.r.proc = nil, nil, nil, nil
	return c
}

// recordGots returns the captured got of each record a run of w streams
// (a capture's workload: the store's column, in stream order).
func recordGots(t *testing.T, w *Workload) []trace.Time {
	t.Helper()
	src, err := w.open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	s, ok := src.(*storeSource)
	if !ok {
		t.Fatalf("a capture's workload streams from a %T", src)
	}
	out := make([]trace.Time, s.recs.n)
	for i := range out {
		out[i] = trace.Time(s.recs.got.At(i))
	}
	return out
}

// records streams a workload's records once, as a run would.
func records(t *testing.T, w *Workload) []Record {
	t.Helper()
	src, err := w.open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	var out []Record
	for {
		r, err := src.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *r)
	}
}

// TestCollectProcPending checks a process's pending Qs (collectProc.pend)
// as the Rebuilder finishes them about in order: each Q is found by its
// bio index until taken, out of order too, and the array is compacted and
// reused rather than grown as the window slides (its capacity stays near
// the Qs pending, not the Qs ever pushed).
func TestCollectProcPending(t *testing.T) {
	var p collectProc
	qs := make([]collectQ, 100_000)
	for i := range qs {
		p.push(uint32(i), &qs[i])
		// Qs are taken 16 behind their push, each pair swapped.
		if j := i - 16; j >= 0 {
			j ^= 1
			if got := p.get(uint32(j)); got != &qs[j] {
				t.Fatalf("bio %d: get = %p, want %p", j, got, &qs[j])
			}
			p.take(uint32(j))
			if p.get(uint32(j)) != nil {
				t.Fatalf("bio %d found after take", j)
			}
		}
	}
	if c := cap(p.pend); c > 4*collectCompact {
		t.Errorf("pending array of capacity %d for %d Qs pending", c, len(p.pend)-p.head)
	}
	// In the steady state the window slides within its array.
	next := uint32(len(qs))
	allocs := testing.AllocsPerRun(10, func() {
		for range 10_000 {
			p.push(next, &qs[0])
			p.take(next - 16)
			next++
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 10,000 Qs pushed and taken in the steady state", allocs)
	}
	for j := next - 16; j < next; j++ {
		p.take(j)
	}
	if n := len(p.pend) - p.head; n != 0 {
		t.Errorf("%d Qs pending after every take", n)
	}
	p.push(500_000, &qs[0])
	if p.get(500_000) != &qs[0] || p.get(499_999) != nil {
		t.Error("a push after the window emptied is not found at its index alone")
	}
}

// A capture without Q events (blktrace -a issue -a complete, as
// public/keks-discard; or a blkparse text of completions only) has
// nothing to replay, and the error says why rather than only that.
func TestWorkloadWithoutQueueEvents(t *testing.T) {
	c := NewCollector()
	for i, a := range []trace.Action{trace.ActionIssue, trace.ActionComplete} {
		e := trace.Event{Time: trace.Time(1000 * (i + 1)), Action: a, Dev: 1, Sector: 8, Bytes: 4096, PID: 7, Cat: trace.CatWrite}
		c.Add(&e)
	}
	_, err := c.Workload()
	if err == nil || !strings.Contains(err.Error(), "no Q (queue) events") {
		t.Fatalf("err = %v, want one that names the missing Q events", err)
	}
}
