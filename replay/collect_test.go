package replay

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// TestCollectorMatchesNewWorkload reads each fixture once through a
// Collector and checks that its workload is NewWorkload's, field by field,
// and streams the same records (every field, the inferred ones and the
// plug flags included) as NewWorkload's second read of the capture.
func TestCollectorMatchesNewWorkload(t *testing.T) {
	for _, name := range []string{"fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900", "fx-bfq-4seqread/fx-bfq-4seqread", "fx-mqdl-rw-nocg/fx-mqdl-rw-nocg",
		"fx-ftrace-bin/fx-ftrace-bin.pipe.bin.zst", "fx-ftrace-classic/fx-ftrace-classic.trace.txt.zst", "fx-ftrace-text/fx-ftrace-text.trace.txt.zst"} {
		dir, file := filepath.Split(name)
		t.Run(file, func(t *testing.T) {
			wr := compareCollected(t, filepath.Join(shared.Fixture(t, filepath.Clean(dir)), file))
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
			t.Logf("%d records, %d plugged, %d unplugs", len(wr), plugged, unplugs)
		})
	}
}

// The filesystem captures carry what the fixtures lack: PREFLUSH and FUA
// bios completing at the end of their flush sequence, submissions that
// slept for a request (got), and cross-process edges (after). The
// Collector, which cannot know the device's cache until the end of its one
// pass, must still stream NewWorkload's records.
func TestCollectorMatchesNewWorkloadFilesystems(t *testing.T) {
	if testing.Short() {
		t.Skip("reads recorded captures")
	}
	for _, name := range []string{"fs-mqdl-fsync-vs-seqread", "fs-bfq-fsync-vs-seqread", "fs-mqdl-pgbench", "fs-bfq-untar"} {
		t.Run(name, func(t *testing.T) {
			wr := compareCollected(t, filepath.Join(shared.Path(t, "captures", "recorded-fs", name), name))
			flushes, edges, slept := 0, 0, 0
			for i := range wr {
				if wr[i].Cat&(trace.CatFlush|trace.CatFUA) != 0 {
					flushes++
				}
				if wr[i].after != nil {
					edges++
				}
				if wr[i].got.Valid() && wr[i].got-wr[i].Queue >= minTagSleep {
					slept++
				}
			}
			if flushes == 0 {
				t.Errorf("no PREFLUSH or FUA bio in a filesystem capture")
			}
			t.Logf("%d records, %d PREFLUSH/FUA, %d cross-process edges, %d slept for a request", len(wr), flushes, edges, slept)
		})
	}
}

// compareCollected reads path once through a Collector and checks that its
// workload is NewWorkload's, field by field, and that it streams the same
// records (every field, the inferred ones and the plug flags included;
// pointers compared by the bio they name) as NewWorkload's second read of
// the capture. It returns NewWorkload's records.
func compareCollected(t *testing.T, path string) []Record {
	t.Helper()
	want, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	c := NewCollector()
	evs, _ := fixture.Events(t, path)
	for i := range evs {
		c.Add(&evs[i])
	}
	got, err := c.Workload()
	if err != nil {
		t.Fatal(err)
	}
	if got.Dev != want.Dev || got.Depth != want.Depth || got.MaxSectors != want.MaxSectors || got.Bios != want.Bios ||
		got.Start != want.Start || got.End != want.End || got.WriteCache != want.WriteCache || got.FUA != want.FUA {
		t.Errorf("workload %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(got.Processes, want.Processes) || !reflect.DeepEqual(got.Cgroups, want.Cgroups) || !reflect.DeepEqual(got.perPID, want.perPID) {
		t.Errorf("stats differ:\n%+v\n%+v\nwant\n%+v\n%+v", got.Processes, got.Cgroups, want.Processes, want.Cgroups)
	}
	wr, gr := records(t, want), records(t, got)
	if len(gr) != len(wr) {
		t.Fatalf("%d records, want %d", len(gr), len(wr))
	}
	for i := range wr {
		if a, b := comparable(gr[i]), comparable(wr[i]); a != b {
			t.Fatalf("record %d:\n%+v\nwant\n%+v", i, a, b)
		}
	}
	if again := records(t, got); len(again) != len(gr) {
		t.Error("a second run of the collected workload streams other records")
	} else {
		for i := range gr {
			if comparable(again[i]) != comparable(gr[i]) {
				t.Fatalf("a second run of the collected workload streams other records (record %d)", i)
			}
		}
	}
	return wr
}

// bioRef names a record by its process and index.
type bioRef struct{ pid, index uint32 }

// comparableRecord is a Record with its pointers replaced by what they name.
type comparableRecord struct {
	r             Record
	after, parent bioRef
}

func comparable(r Record) comparableRecord {
	c := comparableRecord{r: r}
	if r.after != nil {
		c.after = bioRef{r.after.PID, r.after.Index}
	}
	if r.parent != nil {
		c.parent = bioRef{r.parent.PID, r.parent.Index}
	}
	c.r.after, c.r.parent, c.r.proc = nil, nil, nil
	return c
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
