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
			path := filepath.Join(shared.Fixture(t, filepath.Clean(dir)), file)
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
				got.Start != want.Start || got.End != want.End {
				t.Errorf("workload %+v, want %+v", got, want)
			}
			if !reflect.DeepEqual(got.Processes, want.Processes) || !reflect.DeepEqual(got.Cgroups, want.Cgroups) || !reflect.DeepEqual(got.perPID, want.perPID) {
				t.Errorf("stats differ:\n%+v\n%+v\nwant\n%+v\n%+v", got.Processes, got.Cgroups, want.Processes, want.Cgroups)
			}
			wr, gr := records(t, want), records(t, got)
			if len(gr) != len(wr) {
				t.Fatalf("%d records, want %d", len(gr), len(wr))
			}
			plugged, unplugs := 0, 0
			for i := range wr {
				if gr[i] != wr[i] {
					t.Fatalf("record %d:\n%+v\nwant\n%+v", i, gr[i], wr[i])
				}
				if wr[i].Plugged {
					plugged++
				}
				if wr[i].PlugEnd {
					unplugs++
				}
			}
			if again := records(t, got); !reflect.DeepEqual(again, gr) {
				t.Error("a second run of the collected workload streams other records")
			}
			if plugged == 0 || unplugs == 0 {
				t.Errorf("%d plugged records, %d unplugs: every fixture plugs", plugged, unplugs)
			}
			t.Logf("%d records, %d plugged, %d unplugs", len(wr), plugged, unplugs)
		})
	}
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
