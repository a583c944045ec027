package arrowfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestArrowOtherWriters reads the files of testdata/other-writers (see its
// README): the same 300 events and 100 requests (arrowGenEvents(300, 7),
// arrowGenRequests(100, 7), arrowTestMeta()) as rewritten by apache-arrow's
// JavaScript writer (uncompressed, no Schema message at offset 8: the file
// starts with the dictionary batches) and as written by tracesched before
// comm and cgroup_path became plain strings (dictionaries grown by deltas).
// Every row and the Meta must come back as generated.
func TestArrowOtherWriters(t *testing.T) {
	wantEv, wantRq, wantMeta := arrowGenEvents(300, 7), arrowGenRequests(100, 7), arrowTestMeta()
	files, _ := filepath.Glob(filepath.Join("testdata", "other-writers", "*.arrow"))
	if len(files) < 4 {
		t.Fatalf("%d files in testdata/other-writers, want 4", len(files))
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		name := filepath.Base(path)
		if strings.HasSuffix(name, ".events.arrow") {
			got, meta := decodeEventsForTest(t, data, WithAllocator(mem))
			if len(got) != len(wantEv) {
				t.Fatalf("%s: %d events, want %d", name, len(got), len(wantEv))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], wantEv[i]) {
					t.Fatalf("%s: event %d:\n got %+v\nwant %+v", name, i, got[i], wantEv[i])
				}
			}
			if !reflect.DeepEqual(meta, wantMeta) {
				t.Fatalf("%s: meta\n got %+v\nwant %+v", name, meta, wantMeta)
			}
		} else {
			r, err := OpenRequests(bytes.NewReader(data), WithAllocator(mem))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			n := 0
			for ; ; n++ {
				q, err := r.ReadRequest()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: request %d: %v", name, n, err)
				}
				if n >= len(wantRq) || q != wantRq[n] {
					t.Fatalf("%s: request %d:\n got %+v", name, n, q)
				}
			}
			if n != len(wantRq) || !reflect.DeepEqual(r.Meta(), wantMeta) {
				t.Fatalf("%s: %d requests, meta %+v", name, n, r.Meta())
			}
			r.Close()
		}
		mem.AssertSize(t, 0)
	}
}

// TestArrowErrorsNameFileAndOffset corrupts the body of each batch of a
// file in turn: every error the reader returns must start with the name
// given by WithName and say where (a byte offset).
func TestArrowErrorsNameFileAndOffset(t *testing.T) {
	data := encodeEventsForTest(t, arrowGenEvents(600, 3), arrowTestMeta(), WithBatchRows(200))
	failed := 0
	for at := 200; at < len(data)-200; at += 97 {
		bad := bytes.Clone(data)
		for k := 0; k < 16; k++ {
			bad[at+k] ^= 0x5a
		}
		r, err := OpenEvents(bytes.NewReader(bad), WithName("sda.ev.arrow"))
		if err == nil {
			for {
				if _, err = r.ReadEvent(); err != nil {
					break
				}
			}
			r.Close()
		}
		if err == nil || err == io.EOF {
			continue // the flipped bytes were padding or values
		}
		failed++
		msg := err.Error()
		if !strings.HasPrefix(msg, "sda.ev.arrow: ") || !(strings.Contains(msg, "byte ") || strings.Contains(msg, "offset ") || strings.Contains(msg, "footer")) {
			t.Errorf("corruption at byte %d: %q names no file or position", at, msg)
		}
	}
	if failed == 0 {
		t.Fatal("no corruption was detected: the test checks nothing")
	}
	t.Logf("%d corruptions detected", failed)
}
