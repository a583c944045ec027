package cfq

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

type benchHost struct {
	q    replay.Queue
	sink bool // the host records log lines
}

func (benchHost) ArmTimer(int, trace.Time)               {}
func (benchHost) CancelTimer(int)                        {}
func (benchHost) Kick()                                  {}
func (benchHost) Log(trace.Time, uint32, uint64, string) {}
func (benchHost) InDriver() int                          { return 0 }
func (h benchHost) Queue() replay.Queue                  { return h.q }
func (h benchHost) LogEnabled() bool                     { return h.sink }

// BenchmarkHooks pushes requests of 8 processes in 4 cgroups through
// Insert, Dispatch and Completed, 32 in flight, on an NCQ disk with the
// default tunables: one op is one request. "log" runs have a host that
// records the decision lines (each line is built and handed to Host.Log),
// the others a host without a message sink (LogEnabled false), as a replay
// whose output is not kept.
func BenchmarkHooks(b *testing.B) {
	for _, c := range []struct {
		rot, sink bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		rot := c.rot
		name := "nonrot"
		if rot {
			name = "rotational"
		}
		if c.sink {
			name += "/log"
		} else {
			name += "/nolog"
		}
		b.Run(name, func(b *testing.B) {
			s, err := New(benchHost{replay.Queue{Rotational: rot, Depth: 32}, c.sink}, replay.Options{
				Weights: map[uint64]int{1: 100, 2: 300, 3: 600}, CgroupPaths: map[uint64]string{1: "/a", 2: "/b", 3: "/c"}})
			if err != nil {
				b.Fatal(err)
			}
			const procs, depth = 8, 32
			pool := make([]replay.Request, 2*depth+procs)
			free := make([]*replay.Request, 0, len(pool))
			for i := range pool {
				free = append(free, &pool[i])
			}
			var inflight []*replay.Request
			next := [procs]uint64{}
			now := trace.Time(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now += 2000
				p := i % procs
				rq := free[len(free)-1]
				free = free[:len(free)-1]
				*rq = replay.Request{ID: uint64(i + 1), PID: uint32(100 + p), Cgroup: uint64(p % 4),
					Sector: uint64(p)<<30 + next[p], Bytes: 4096, Cat: trace.CatRead, Queued: now, Inserted: now}
				next[p] += 8
				s.Insert(now, rq)
				for len(inflight) < depth {
					d := s.Dispatch(now)
					if d == nil {
						break
					}
					inflight = append(inflight, d)
				}
				if len(inflight) > 0 && (len(inflight) >= depth || i%2 == 0) {
					c := inflight[0]
					inflight = inflight[1:]
					s.Completed(now, c)
					free = append(free, c)
				}
				if len(free) == 0 { // the scheduler is holding everything: drain it
					for s.HasWork(now) {
						now += 1e9
						s.Timer(now, idleTimer)
						d := s.Dispatch(now)
						if d == nil {
							break
						}
						s.Completed(now, d)
						free = append(free, d)
					}
					for _, c := range inflight {
						s.Completed(now, c)
						free = append(free, c)
					}
					inflight = inflight[:0]
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
