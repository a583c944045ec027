package arrowfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to OpenEvents and OpenRequests and reads
// every row: decoding must return errors, never panic or exhaust memory,
// and every event it returns must pass trace.Event.Validate (the readers'
// contract, as for parse/blktrace's). Seeds: small valid files of both
// kinds (generated here), the files of testdata/other-writers (apache-arrow
// JS rewrites, uncompressed and without a Schema message at offset 8; our
// former delta-dictionary files) and the corpus in testdata/fuzz/FuzzDecode.
//
// The readers run with lowered bounds (withReadLimits: 4 Ki rows, 64 KiB of
// text per batch): a mutated row count then fails the check at once rather
// than making each execution allocate and decode up to the default 4 Mi
// rows, which held FuzzDecode to a few executions per second.
func FuzzDecode(f *testing.F) {
	f.Add(encodeEventsForTest(f, arrowGenEvents(40, 9), arrowTestMeta(), WithBatchRows(16)))
	var buf bytes.Buffer
	w, _ := NewRequestWriter(&buf, arrowTestMeta(), WithBatchRows(8))
	for _, q := range arrowGenRequests(20, 9) {
		w.Write(&q)
	}
	w.Close()
	f.Add(buf.Bytes())
	others, _ := filepath.Glob(filepath.Join("testdata", "other-writers", "*.arrow"))
	for _, p := range others {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	limits := withReadLimits(1<<12, 1<<16)
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := OpenEvents(bytes.NewReader(data), limits); err == nil {
			for n := 0; n < 1<<13; n++ {
				e, err := r.ReadEvent()
				if err != nil {
					break
				}
				if err := e.Validate(); err != nil {
					t.Fatalf("event %d returned without error breaks Validate: %v (%+v)", n, err, e)
				}
				_ = e.Message()
			}
			r.Meta()
			r.Close()
		}
		if r, err := OpenRequests(bytes.NewReader(data), limits); err == nil {
			for n := 0; n < 1<<13; n++ {
				if _, err := r.ReadRequest(); err != nil {
					break
				}
			}
			r.Close()
		}
	})
}
