package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// Code health (issue 14): --kernel 5.10/5.11 replays were diffed with the
// 5.12+ think-time rule (diff.Options.LegacyThinkTime was never set
// outside tests), and diff/tui ignored the options replay used. The
// threshold shows which rule ran: slice_idle before 5.12 (bfq's
// bfq_update_has_short_ttime compared the mean with bfqd->bfq_slice_idle),
// slice_idle/2 from 5.12 on.
func TestThinkTimeRuleFollowsTheKernel(t *testing.T) {
	fx := fixture(t, "fx-bfq-2cg-w100-900")
	threshold := func(out string) float64 {
		t.Helper()
		var m struct {
			ThinkTime struct {
				Threshold *float64 `json:"threshold_seconds"`
			} `json:"think_time"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil || m.ThinkTime.Threshold == nil {
			t.Fatalf("think_time.threshold_seconds missing: %v", err)
		}
		return *m.ThinkTime.Threshold
	}
	for _, c := range []struct {
		kernel string
		want   float64 // s, with the default slice_idle of 8 ms
	}{{"5.11", 0.008}, {"5.12", 0.004}, {"6.18", 0.004}} {
		pred := filepath.Join(t.TempDir(), "pred.arrow")
		out, errOut, code := run(t, "replay", "--sched", "bfq", "--kernel", c.kernel, "--json", "-o", pred, fx)
		if code != exitOK {
			t.Fatalf("replay --kernel %s: exit %d: %s", c.kernel, code, errOut)
		}
		if got := threshold(out); got != c.want {
			t.Errorf("replay --kernel %s: threshold %v s, want %v", c.kernel, got, c.want)
		}
		out, errOut, code = run(t, "diff", "--json", fx, pred)
		if code != exitOK {
			t.Fatalf("diff: exit %d: %s", code, errOut)
		}
		if got := threshold(out); got != c.want {
			t.Errorf("diff of a --kernel %s replay: threshold %v s, want %v (the replay's rule)", c.kernel, got, c.want)
		}
	}
	// slice_idle set on the replay reaches the diff of its output.
	pred := filepath.Join(t.TempDir(), "pred.arrow")
	if _, errOut, code := run(t, "replay", "--sched", "bfq", "--set", "slice_idle_us=2000", "-o", pred, fx); code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	out, _, _ := run(t, "diff", "--json", fx, pred)
	if got := threshold(out); got != 0.001 {
		t.Errorf("diff of a slice_idle_us=2000 replay: threshold %v s, want 0.001", got)
	}
	for v, want := range map[string]bool{"5.10": true, "5.11": true, "5.12": false, "6.1": false, "4.19": true, "x": false} {
		if got := kernelBefore(v, 5, 12); got != want {
			t.Errorf("kernelBefore(%q, 5, 12) = %v", v, got)
		}
	}
}
