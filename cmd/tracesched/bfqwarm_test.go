package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
)

// --bfq-warm takes max_budget in sectors, as the kernel's recalc_budg
// message shows it (fs-bfq-fsync-vs-seqread: 32 x 3812 = 121984), and
// refuses anything else.
func TestParseBFQWarm(t *testing.T) {
	w, err := parseBFQWarm([]string{"max_budget=121984"})
	if err != nil || w["max_budget"] != 121984 {
		t.Errorf("max_budget=121984: %v, %v", w, err)
	}
	if w, err := parseBFQWarm(nil); w != nil || err != nil {
		t.Errorf("no flag: %v, %v; want nothing", w, err)
	}
	for _, bad := range []string{"max_budget=0", "max_budget=-5", "max_budget=x", "peak_rate=100", "max_budget", "max_budget=2147483648"} {
		if _, err := parseBFQWarm([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// stats says what BFQ had tuned itself to before the trace, from its
// first recalc_budg message, with the --bfq-warm that starts a what-if
// there: fs-bfq-fsync-vs-seqread's "min budg 3812", 121,984 sectors. A
// BFQ started with its trace (the fixture: min budg 512, the default's)
// shows none, nor does the JSON.
func TestStatsBFQMaxBudget(t *testing.T) {
	out, stderr, code := run(t, "stats", fixture(t, "fx-bfq-2cg-w100-900"))
	if code != exitOK || strings.Contains(out, "tuned itself") {
		t.Errorf("fixture: exit %d, %q (stderr %q), want no tuned budget", code, out, stderr)
	}
	if out, _, _ := run(t, "stats", "--json", fixture(t, "fx-bfq-2cg-w100-900")); strings.Contains(out, "bfq_max_budget") {
		t.Errorf("fixture JSON has bfq_max_budget")
	}
	in := filepath.Join(shared.Path(t, "captures", "recorded-fs", "fs-bfq-fsync-vs-seqread"), "fs-bfq-fsync-vs-seqread")
	out, stderr, code = run(t, "stats", in)
	if want := "max_budget 121984 sectors (its first recalc_budg message); `replay --bfq-warm max_budget=121984`"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("fs-bfq-fsync-vs-seqread: exit %d, want %q in %q (stderr %q)", code, want, out, stderr)
	}
	out, _, _ = run(t, "stats", "--json", in)
	var m struct {
		MaxBudget *int64 `json:"bfq_max_budget"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.MaxBudget == nil || *m.MaxBudget != 121984 {
		t.Errorf("JSON bfq_max_budget %v (%v), want 121984", m.MaxBudget, err)
	}
}

// A what-if into BFQ that starts it as just started says so, on stderr
// and in change.assumed; given --bfq-warm, or validating, it does not.
func TestReplayBFQColdAssumed(t *testing.T) {
	in := fixture(t, "fx-mqdl-rw-nocg")
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--sched", "bfq"}, true},
		{[]string{"--sched", "bfq", "--bfq-warm", "max_budget=121984"}, false},
		{[]string{"--sched", "mq-deadline"}, false},
	} {
		_, stderr, code := run(t, append(append([]string{"replay", "--json"}, c.args...), in)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if got := strings.Contains(stderr, "bfq starts as just started (max_budget 16384 sectors"); got != c.want {
			t.Errorf("%v: stderr says BFQ starts cold: %v, want %v (%q)", c.args, got, c.want, stderr)
		}
		m := replayJSON(t, append(c.args, in)...)
		ch, _ := m["change"].(map[string]any)
		assumed := fmt.Sprint(ch["assumed"])
		if got := strings.Contains(assumed, "bfq starts as just started"); got != c.want {
			t.Errorf("%v: change.assumed %s: cold BFQ %v, want %v", c.args, assumed, got, c.want)
		}
	}
}
