package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/tracesched/tracesched/replay"
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

// TestTracedHost: a pair whose real runs carry BFQ's messages is predicted
// with the table's bfq+messages cost as bfq's; a target without such a
// cost keeps the table as it is. The manifest says which runs carry them.
func TestTracedHost(t *testing.T) {
	*flagWork = t.TempDir()
	path, err := tracedHost("default", "bfq")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := replay.LoadHostCosts(f, path)
	if err != nil {
		t.Fatal(err)
	}
	d := replay.DefaultHostCosts()
	if h.SubmitNS["bfq"] != d.SubmitNS["bfq+messages"] || h.SubmitNS["mq-deadline"] != d.SubmitNS["mq-deadline"] {
		t.Errorf("traced table %v, want bfq = bfq+messages of %v", h.SubmitNS, d.SubmitNS)
	}
	if p, err := tracedHost("default", "mq-deadline"); err != nil || p != "default" {
		t.Errorf("mq-deadline: %q, %v; want the table as it is", p, err)
	}
	var m manifest
	for doc, want := range map[string]bool{
		`{"cgroups": [{"path": "/", "trace_messages": 0}, {"path": "/a", "trace_messages": 12}]}`: true,
		`{"cgroups": [{"path": "/", "trace_messages": 0}]}`:                                       false,
		`{"cgroups": [{"path": "/"}]}`:                                                            false,
	} {
		m = manifest{}
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m.messages() != want {
			t.Errorf("%s: messages %v, want %v", doc, !want, want)
		}
	}
}
