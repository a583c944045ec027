package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rbParseEvents reads a tiny event script, one event a line:
//
//	TIME_NS ACTION DEV SECTOR+SECTORS [pid=N] [cat=fs|pc|flush|w] [split=S] [from=DEV:SECTOR] [err=N]
//
// ACTION is a blkparse letter; DEV is major,minor.
func rbParseEvents(t testing.TB, script string) []Event {
	t.Helper()
	var out []Event
	for n, line := range strings.Split(strings.TrimSpace(script), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			t.Fatalf("line %d: %q: too few fields", n+1, line)
		}
		ts, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		a, ok := ParseAction(f[1])
		if !ok {
			t.Fatalf("line %d: bad action %q", n+1, f[1])
		}
		e := Event{Time: Time(ts), Action: a, Dev: rbParseDev(t, f[2]), PID: 1, Cat: CatRead}
		sec, cnt, _ := strings.Cut(f[3], "+")
		e.Sector, _ = strconv.ParseUint(sec, 10, 64)
		c, _ := strconv.ParseUint(cnt, 10, 32)
		e.Bytes = uint32(c) << 9
		for _, kv := range f[4:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "pid":
				p, _ := strconv.ParseUint(v, 10, 32)
				e.PID = uint32(p)
			case "cat":
				for _, c := range strings.Split(v, "|") {
					switch c {
					case "fs":
						e.Cat |= CatFS
					case "pc":
						e.Cat |= CatPC
					case "flush":
						e.Cat |= CatFlush
					case "w":
						e.Cat = e.Cat&^CatRead | CatWrite
					}
				}
			case "split":
				e.SplitSector, _ = strconv.ParseUint(v, 10, 64)
			case "from":
				d, s, _ := strings.Cut(v, ":")
				e.FromDev = rbParseDev(t, d)
				e.FromSector, _ = strconv.ParseUint(s, 10, 64)
			case "err":
				x, _ := strconv.ParseInt(v, 10, 16)
				e.Error = int16(x)
			default:
				t.Fatalf("line %d: unknown key %q", n+1, k)
			}
		}
		out = append(out, e)
	}
	return out
}

func rbParseDev(t testing.TB, s string) Dev {
	t.Helper()
	ma, mi, ok := strings.Cut(s, ",")
	a, err1 := strconv.ParseUint(ma, 10, 32)
	b, err2 := strconv.ParseUint(mi, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad device %q", s)
	}
	return MkDev(uint32(a), uint32(b))
}

// rbRun rebuilds a script and returns the requests and bios in emission order.
func rbRun(t testing.TB, script string) ([]Request, []Bio, RebuildStats) {
	t.Helper()
	var reqs []Request
	var bios []Bio
	b := NewRebuilder(func(r *Request) { reqs = append(reqs, *r) }, func(x *Bio) { bios = append(bios, *x) })
	for _, e := range rbParseEvents(t, script) {
		b.Add(&e)
	}
	b.Close()
	return reqs, bios, b.Stats()
}

// rbFmtReq prints the fields the table tests check.
func rbFmtReq(r Request) string {
	tm := func(x Time) string {
		if x == NoTime {
			return "-"
		}
		return strconv.FormatInt(int64(x), 10)
	}
	s := fmt.Sprintf("#%d %s %d+%d pid=%d Q=%s G=%s I=%s D=%s C=%s bios=%d",
		r.ID, r.Dev, r.Sector, r.Bytes>>9, r.PID, tm(r.Queue), tm(r.Get), tm(r.Insert), tm(r.Issue), tm(r.Complete), r.Bios)
	if r.BackMerges+r.FrontMerges > 0 {
		s += fmt.Sprintf(" M=%d F=%d", r.BackMerges, r.FrontMerges)
	}
	if r.Requeues > 0 {
		s += fmt.Sprintf(" R=%d", r.Requeues)
	}
	if r.FromDev != 0 {
		s += fmt.Sprintf(" from=%s:%d", r.FromDev, r.FromSector)
	}
	if r.Error != 0 {
		s += fmt.Sprintf(" err=%d", r.Error)
	}
	var fl []string
	for _, f := range []struct {
		f RequestFlags
		n string
	}{{FlagNoQueue, "noqueue"}, {FlagIncomplete, "incomplete"}, {FlagRemapped, "remapped"}, {FlagSplit, "split"}, {FlagPartial, "partial"}, {FlagMergedAway, "mergedaway"}} {
		if r.Flags&f.f != 0 {
			fl = append(fl, f.n)
		}
	}
	if len(fl) > 0 {
		s += " [" + strings.Join(fl, ",") + "]"
	}
	return s
}

func rbFmtBio(x Bio) string {
	tm := func(v Time) string {
		if v == NoTime {
			return "-"
		}
		return strconv.FormatInt(int64(v), 10)
	}
	return fmt.Sprintf("%d/%d %s %d+%d req=%d %s D=%s C=%s", x.PID, x.Index, x.Dev, x.Sector, x.Bytes>>9, x.Request, x.Merge, tm(x.Issue), tm(x.Done))
}

func TestRebuilderTable(t *testing.T) {
	tests := []struct {
		name   string
		script string
		reqs   []string
		bios   []string
	}{
		{
			name: "simple",
			script: `
10 Q 8,0 100+8
20 G 8,0 100+8
30 I 8,0 100+8
40 D 8,0 100+8
90 C 8,0 100+8`,
			reqs: []string{"#1 8,0 100+8 pid=1 Q=10 G=20 I=30 D=40 C=90 bios=1"},
			bios: []string{"1/0 8,0 100+8 req=1 none D=40 C=90"},
		},
		{
			name: "back and front merges",
			script: `
10 Q 8,0 100+8
11 G 8,0 100+8
12 Q 8,0 108+8
13 M 8,0 108+8
14 Q 8,0 92+8 pid=2
15 F 8,0 92+8 pid=2
20 I 8,0 92+24
30 D 8,0 92+24
50 C 8,0 92+24`,
			reqs: []string{"#1 8,0 92+24 pid=1 Q=10 G=11 I=20 D=30 C=50 bios=3 M=1 F=1"},
			bios: []string{"1/0 8,0 100+8 req=1 none D=30 C=50", "1/1 8,0 108+8 req=1 back D=30 C=50", "2/0 8,0 92+8 req=1 front D=30 C=50"},
		},
		{
			name: "request merge is not a bio merge",
			script: `
10 Q 8,0 100+8
11 G 8,0 100+8
12 I 8,0 100+8
20 Q 8,0 108+8
21 G 8,0 108+8
22 I 8,0 108+8
23 M 8,0 108+8 cat=fs
30 D 8,0 100+16
50 C 8,0 100+16`,
			reqs: []string{
				"#2 8,0 108+8 pid=1 Q=20 G=21 I=22 D=- C=- bios=1 [mergedaway]",
				"#1 8,0 100+16 pid=1 Q=10 G=11 I=12 D=30 C=50 bios=2",
			},
			bios: []string{"1/0 8,0 100+8 req=1 none D=30 C=50", "1/1 8,0 108+8 req=1 none D=30 C=50"},
		},
		{
			name: "requeue",
			script: `
10 Q 8,0 100+8
11 G 8,0 100+8
12 I 8,0 100+8
13 D 8,0 100+8
20 R 8,0 100+8 cat=fs
21 I 8,0 100+8
30 D 8,0 100+8
40 C 8,0 100+8`,
			reqs: []string{"#1 8,0 100+8 pid=1 Q=10 G=11 I=21 D=30 C=40 bios=1 R=1"},
			bios: []string{"1/0 8,0 100+8 req=1 none D=30 C=40"},
		},
		{
			name: "partial completion",
			script: `
10 Q 8,0 100+16
11 G 8,0 100+16
13 D 8,0 100+16
20 C 8,0 100+8
30 C 8,0 108+8`,
			reqs: []string{"#1 8,0 100+16 pid=1 Q=10 G=11 I=- D=13 C=30 bios=1 [partial]"},
			bios: []string{"1/0 8,0 100+16 req=1 none D=13 C=30"},
		},
		{
			name: "split",
			script: `
10 Q 8,0 1000+1024
11 X 8,0 1000+512 split=1512
12 G 8,0 1000+512
13 G 8,0 1512+512
14 D 8,0 1000+512
15 D 8,0 1512+512
20 C 8,0 1000+512
30 C 8,0 1512+512`,
			reqs: []string{
				"#1 8,0 1000+512 pid=1 Q=10 G=12 I=- D=14 C=20 bios=1 [split]",
				"#2 8,0 1512+512 pid=1 Q=10 G=13 I=- D=15 C=30 bios=1 [split]",
			},
			bios: []string{"1/0 8,0 1000+1024 req=1 none D=14 C=30"},
		},
		{
			name: "remap chain without upper Q",
			script: `
10 A 8,2 500+8 from=253,0:100
11 A 8,0 600+8 from=8,2:500
12 Q 8,0 600+8
13 G 8,0 600+8
14 D 8,0 600+8
20 C 8,0 600+8`,
			reqs: []string{"#1 8,0 600+8 pid=1 Q=12 G=13 I=- D=14 C=20 bios=1 from=253,0:100 [remapped]"},
			bios: []string{"1/0 8,0 600+8 req=1 none D=14 C=20"},
		},
		{
			name: "remap with upper bio completed on dm",
			script: `
10 Q 253,0 100+8
11 A 8,0 600+8 from=253,0:100
12 Q 8,0 600+8
13 G 8,0 600+8
14 D 8,0 600+8
20 C 8,0 600+8
21 C 253,0 100+8`,
			reqs: []string{
				"#1 8,0 600+8 pid=1 Q=12 G=13 I=- D=14 C=20 bios=1 from=253,0:100 [remapped]",
				"#2 253,0 100+8 pid=1 Q=10 G=- I=- D=- C=21 bios=1",
			},
			bios: []string{"1/1 8,0 600+8 req=1 none D=14 C=20", "1/0 253,0 100+8 req=2 none D=- C=21"},
		},
		{
			name: "in flight at start",
			script: `
10 D 8,52 100+8
20 C 8,52 100+8
30 C 8,52 500+8`,
			reqs: []string{
				"#1 8,52 100+8 pid=0 Q=- G=- I=- D=10 C=20 bios=0 [noqueue]",
				"#2 8,52 500+8 pid=0 Q=- G=- I=- D=- C=30 bios=0 [noqueue]",
			},
		},
		{
			name: "same sector reuse never matches the later request",
			script: `
10 Q 8,0 100+8 pid=1
11 G 8,0 100+8 pid=1
12 D 8,0 100+8 pid=1
20 Q 8,0 100+8 pid=2
21 G 8,0 100+8 pid=2
30 C 8,0 100+8
31 D 8,0 100+8 pid=2
40 C 8,0 100+8`,
			reqs: []string{
				"#1 8,0 100+8 pid=1 Q=10 G=11 I=- D=12 C=30 bios=1",
				"#2 8,0 100+8 pid=2 Q=20 G=21 I=- D=31 C=40 bios=1",
			},
			bios: []string{"1/0 8,0 100+8 req=1 none D=12 C=30", "2/0 8,0 100+8 req=2 none D=31 C=40"},
		},
		{
			name: "same sector reissue while old in flight: oldest completes first",
			script: `
10 Q 8,0 100+8 pid=1
11 G 8,0 100+8 pid=1
12 D 8,0 100+8 pid=1
20 Q 8,0 100+8 pid=2
21 G 8,0 100+8 pid=2
22 D 8,0 100+8 pid=2
30 C 8,0 100+8
40 C 8,0 100+8`,
			reqs: []string{
				"#1 8,0 100+8 pid=1 Q=10 G=11 I=- D=12 C=30 bios=1",
				"#2 8,0 100+8 pid=2 Q=20 G=21 I=- D=22 C=40 bios=1",
			},
			bios: []string{"1/0 8,0 100+8 req=1 none D=12 C=30", "2/0 8,0 100+8 req=2 none D=22 C=40"},
		},
		{
			name: "flush",
			script: `
10 Q 8,0 4096+8 cat=w|flush
11 G 8,0 4096+8 cat=w|flush
12 D 8,0 0+0 cat=w|flush|fs
13 C 8,0 0+0 cat=w|flush|fs
14 D 8,0 4096+8 cat=w|fs
15 C 8,0 4096+8 cat=w|fs`,
			reqs: []string{
				"#2 8,0 0+0 pid=0 Q=- G=- I=- D=12 C=13 bios=0 [noqueue]",
				"#1 8,0 4096+8 pid=1 Q=10 G=11 I=- D=14 C=15 bios=1",
			},
			bios: []string{"1/0 8,0 4096+8 req=1 none D=14 C=15"},
		},
		{
			// Two fsyncs' empty preflushes pending together share one
			// flush_rq (blk_kick_flush splices the pending list behind
			// it): one D FN, its C FN, then a zero-byte C for each (from
			// the completing CPU's context, pid 14 here, as in
			// fs-mqdl-pgbench). A third fsync's flush, queued while that
			// one was in flight, gets the next flush: it must not be
			// served by it, nor its D by the second's request.
			name: "shared empty flushes",
			script: `
10 Q 8,0 0+0 pid=1 cat=w|flush
11 G 8,0 0+0 pid=1 cat=w|flush
12 Q 8,0 0+0 pid=2 cat=w|flush
13 G 8,0 0+0 pid=2 cat=w|flush
14 D 8,0 0+0 pid=0 cat=flush
15 Q 8,0 0+0 pid=3 cat=w|flush
16 G 8,0 0+0 pid=3 cat=w|flush
20 C 8,0 0+0 pid=14 cat=flush
21 C 8,0 0+0 pid=14 cat=w
22 C 8,0 0+0 pid=14 cat=w
23 D 8,0 0+0 pid=0 cat=flush
30 C 8,0 0+0 pid=14 cat=flush
31 C 8,0 0+0 pid=14 cat=w`,
			reqs: []string{
				"#1 8,0 0+0 pid=1 Q=10 G=11 I=- D=14 C=20 bios=1",
				"#2 8,0 0+0 pid=2 Q=12 G=13 I=- D=14 C=21 bios=1",
				"#4 8,0 0+0 pid=0 Q=- G=- I=- D=- C=22 bios=0 [noqueue]",
				"#3 8,0 0+0 pid=3 Q=15 G=16 I=- D=23 C=30 bios=1",
				"#5 8,0 0+0 pid=0 Q=- G=- I=- D=- C=31 bios=0 [noqueue]",
			},
			bios: []string{"1/0 8,0 0+0 req=1 none D=14 C=20", "2/0 8,0 0+0 req=2 none D=14 C=21", "3/0 8,0 0+0 req=3 none D=23 C=30"},
		},
		{
			name: "incomplete and orphan",
			script: `
10 Q 8,0 100+8
11 G 8,0 100+8
12 D 8,0 100+8
20 Q 8,0 300+8`,
			reqs: []string{"#1 8,0 100+8 pid=1 Q=10 G=11 I=- D=12 C=- bios=1 [incomplete]"},
			bios: []string{"1/0 8,0 100+8 req=1 none D=12 C=-", "1/1 8,0 300+8 req=0 none D=- C=-"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reqs, bios, _ := rbRun(t, tc.script)
			var got []string
			for _, r := range reqs {
				// pid of requests without a bio comes from the event; scripts use pid=1 by default
				got = append(got, rbFmtReq(r))
			}
			rbCompare(t, "requests", got, tc.reqs)
			got = got[:0]
			for _, x := range bios {
				got = append(got, rbFmtBio(x))
			}
			rbCompare(t, "bios", got, tc.bios)
		})
	}
}

func rbCompare(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n\t%s\nwant:\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestRebuilderIndex checks rbIndex against a map of slices under random
// pushes, drops and pops on colliding sectors.
func TestRebuilderIndex(t *testing.T) {
	var x rbIndex[*int]
	model := map[uint64][]*int{}
	vals := make([]int, 4000)
	rng := uint64(1)
	rand := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for step := range 200_000 {
		sec := uint64(rand(300)) * 8 // few keys: long probe runs, many deletions
		if rand(4) == 0 {
			sec += uint64(rand(4)) << 40
		}
		switch rand(4) {
		case 0, 1:
			v := &vals[rand(len(vals))]
			if !slices.Contains(model[sec], v) {
				x.push(sec, v)
				model[sec] = append(model[sec], v)
			}
		case 2:
			if l := model[sec]; len(l) > 0 {
				v := l[rand(len(l))]
				x.drop(sec, v)
				model[sec] = slices.DeleteFunc(l, func(p *int) bool { return p == v })
			} else {
				x.drop(sec, &vals[0])
			}
		case 3:
			want := (*int)(nil)
			if l := model[sec]; len(l) > 0 {
				want = l[len(l)-1]
				model[sec] = l[:len(l)-1]
			}
			if got := x.popNewest(sec); got != want {
				t.Fatalf("step %d: popNewest(%d) = %p, want %p", step, sec, got, want)
			}
		}
		if len(model[sec]) == 0 {
			delete(model, sec)
		}
		if step%1000 == 0 {
			if x.n != len(model) {
				t.Fatalf("step %d: %d keys, want %d", step, x.n, len(model))
			}
			for k, l := range model {
				if !slices.Equal(x.get(k), l) {
					t.Fatalf("step %d: list at %d differs", step, k)
				}
			}
		}
	}
}
