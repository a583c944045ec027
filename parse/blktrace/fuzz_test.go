package blktrace

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// exercise reads r to its end (at most limit events), checking that every
// event is valid and calling the accessors a consumer would.
func exercise(t *testing.T, r trace.EventReader, limit int) {
	var last error
	for i := 0; i < limit; i++ {
		ev, err := r.ReadEvent()
		if err != nil {
			if err != io.EOF && err.Error() == "" {
				t.Fatal("empty error")
			}
			last = err
			break
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("event %d %+v: %v", i, ev, err)
		}
		_ = ev.RWBS() + ev.Action.String() + ev.Action.Letter() + ev.Dev.String() + ev.Time.String()
		_ = ev.Message().QueueName()
		_ = ev.End()
	}
	if last != nil {
		// Errors are sticky.
		if _, err := r.ReadEvent(); err != last {
			t.Fatalf("error not sticky: %v then %v", last, err)
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, fx := range fixtureNames {
		for _, cpu := range []string{"0", "1"} {
			raw := zstdFile(f, fixtureFile(f, fx, ".blktrace."+cpu+".zst"))
			raw = raw[:min(len(raw), 4096)]
			f.Add(raw)
		}
	}
	evs := sampleEvents()
	f.Add(encodeAll(evs, encOpts{be: true}))
	f.Add(encodeAll(evs, encOpts{v8: true}))
	f.Add(encodeAll(evs, encOpts{v8: true, be: true}))
	f.Add(encodeAll(evs, encOpts{ftrace: true, noSeq: true}))
	f.Add(encodeAll(evs, encOpts{garbage: true, origin: 1 << 40})[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			if asFormatError(err) == nil {
				t.Fatalf("NewReader error is not a *FormatError: %v", err)
			}
			return
		}
		exercise(t, r, 1<<16)
		m := r.Meta()
		_ = m.Devices
		_ = r.Dropped()
	})
}

func FuzzTextReader(f *testing.F) {
	for _, fx := range fixtureNames {
		txt := zstdFile(f, fixtureFile(f, fx, ".blkparse.txt.zst"))
		f.Add(txt[:min(len(txt), 2048)])
		if i := bytes.Index(txt, []byte("\nCPU0")); i > 0 {
			f.Add(txt[i+1:])
		}
	}
	f.Add([]byte("# tracer: blk\n       kjournald-305   [000]  3046.491224:   8,1    A WBS 6367 + 8 <- (8,1) 6304\n          <idle>-0     [000]  3046.511914:   8,1    C  RS 6367 + 8 [0]\nCPU:0 [LOST 3 EVENTS]\n"))
	f.Add([]byte("  8,16   0       26     0.000081000  1234  I   R 36 (12 00 00 00 24 00 ..) [fio]\n  8,16   0       24     0.000079000    77 UT   N [kworker/1:1H] 3\n  7,0    1        0     0.000246335  4059 1,0  m   N bfq4058S expire\n"))
	f.Add([]byte("  8,1    0  3046.491227000   305  Q   R 6367 + 8 [kjournald]\n"))
	if d := shared.Dir(); d != "" {
		for _, p := range []string{"text-wiscsee/blkparse-output.txt", "text-leveldb/blk_data.txt"} {
			if fh, err := os.Open(filepath.Join(d, "captures", "public", p)); err == nil {
				var b strings.Builder
				sc := bufio.NewScanner(fh)
				for i := 0; i < 20 && sc.Scan(); i++ {
					b.WriteString(sc.Text() + "\n")
				}
				fh.Close()
				f.Add([]byte(b.String()))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := NewTextReader(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			return
		}
		exercise(t, tr, 1<<16)
		_ = tr.Meta()
	})
}
