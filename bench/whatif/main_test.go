package main

import (
	"encoding/json"
	"testing"
)

// TestManifestIncomplete: a real run whose trace the rig found incomplete
// (trace_complete false, as fs-bfq-writeback-r2's manifest of 2026-12-02:
// 599 D events against the kernel's 682) is left out; a complete one, or
// a manifest older than the check (no trace_complete, as the
// ../shared/captures/recorded ones), is kept.
func TestManifestIncomplete(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"scheduler": "bfq", "trace_complete": false}`, true},
		{`{"scheduler": "bfq", "trace_complete": true}`, false},
		{`{"scheduler": "bfq"}`, false},
	} {
		var m manifest
		if err := json.Unmarshal([]byte(c.json), &m); err != nil {
			t.Fatal(err)
		}
		if got := m.incomplete(); got != c.want {
			t.Errorf("%s: incomplete %v, want %v", c.json, got, c.want)
		}
	}
}
