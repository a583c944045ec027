package replay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// TestStallsRealBios checks single bios of the rig's captures (in
// /tmp/wi-captures, else ../shared/captures/rig): in wi-seed000-mqdl cg1's
// fio (pid 23275) queued bio 573 13.8 ms after bio 572 with its 64 reads
// in flight, all 64 completed in the gap (a host stall); in the stall job's
// capture cg2's fio (pid 22781) sleeps 12 ms every 1500 reads
// (seed000-stall.fio: thinktime_blocks=1500), at bios 63 + 1500 m: none
// of those is a host stall.
func TestStallsRealBios(t *testing.T) {
	w := WIRecording(t, "wi-seed000-mqdl", 23275, 0)
	w.Stalls()
	if _, ok := w.stalls.host[bioKey{23275, 573}]; !ok {
		t.Errorf("wi-seed000-mqdl: pid 23275's bio 573 (13.8 ms, 64 completions unreaped) is not a host stall")
	}
	s := WIRecording(t, "wi-seed000-stall-bfq-10-90-ll0", 22781, 0)
	s.Stalls()
	for k := uint32(63); k < 29820; k += 1500 {
		if _, ok := s.stalls.host[bioKey{22781, k}]; ok {
			t.Errorf("stall job: cg2's bio %d (its thinktime) taken as a host stall", k)
		}
	}
}

// WIRecording opens the capture name of bench/whatif's rig set (in
// /tmp/wi-captures, else ../shared/captures/rig) as the recording a test's
// figures come from: it skips when the capture is absent, or when it has
// no process with pid (0: any) and bios bios (0: any), as a later run of
// bench/whatif/record.sh writes under the same name (another recording:
// other PIDs, other stalls). Exported for the external tests.
func WIRecording(tb testing.TB, name string, pid uint32, bios int) *Workload {
	tb.Helper()
	for _, dir := range []string{"/tmp/wi-captures", "../../shared/captures/rig"} {
		base := filepath.Join(dir, name, name)
		if _, err := os.Stat(base + ".blktrace.0"); err != nil {
			continue
		}
		w, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range w.Processes {
			if (pid == 0 || p.PID == pid) && (bios == 0 || p.Bios == bios) {
				return w
			}
		}
		tb.Skipf("%s is another recording than this test's (no pid %d with %d bios); skipping", name, pid, bios)
	}
	tb.Skipf("capture %s absent; skipping", name)
	return nil
}
