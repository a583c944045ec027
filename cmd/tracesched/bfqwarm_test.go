package main

import "testing"

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
