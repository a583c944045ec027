package arrowfile

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to OpenEvents and OpenRequests and reads
// every row: decoding must return errors, never panic or exhaust memory.
// Seeds: small valid files of both kinds (generated here) and the corpus in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add(encodeEventsForTest(f, arrowGenEvents(40, 9), arrowTestMeta(), WithBatchRows(16)))
	var buf bytes.Buffer
	w, _ := NewRequestWriter(&buf, arrowTestMeta(), WithBatchRows(8))
	for _, q := range arrowGenRequests(20, 9) {
		w.Write(&q)
	}
	w.Close()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := OpenEvents(bytes.NewReader(data)); err == nil {
			for n := 0; n < 1<<20; n++ {
				e, err := r.ReadEvent()
				if err != nil {
					break
				}
				_ = e.Validate()
				_ = e.Message()
			}
			r.Meta()
			r.Close()
		}
		if r, err := OpenRequests(bytes.NewReader(data)); err == nil {
			for n := 0; n < 1<<20; n++ {
				if _, err := r.ReadRequest(); err != nil {
					break
				}
			}
			r.Close()
		}
	})
}
