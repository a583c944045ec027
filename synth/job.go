// Package synth generates synthetic block I/O captures from workload
// descriptions shaped like fio jobs: each job is one process issuing a
// stream of bios (sequential or random, reads or writes, a given block size
// and queue depth, think time between a completion and the next
// submission). Generate turns the jobs into a trace.Event stream that looks
// like a blktrace capture (Q, G, I, D, C per bio) over a simple
// fixed-latency device, so that the replay engine's closed-loop inference
// sees each process's queue depth and think time.
//
// Everything is deterministic: randomness comes from a PCG generator seeded
// by the caller's seed and the job's position, and simulated time never
// reads a clock.
package synth

import (
	"math/rand/v2"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Pattern is a job's access pattern, as fio's rw= names it.
type Pattern uint8

const (
	Read      Pattern = iota // sequential reads (rw=read)
	Write                    // sequential writes (rw=write)
	RandRead                 // random reads (rw=randread)
	RandWrite                // random writes (rw=randwrite)
	ReadWrite                // sequential mixed reads and writes (rw=rw, readwrite)
	RandRW                   // random mixed reads and writes (rw=randrw)
)

var patternNames = [...]string{"read", "write", "randread", "randwrite", "rw", "randrw"}

func (p Pattern) String() string {
	if int(p) < len(patternNames) {
		return patternNames[p]
	}
	return "Pattern(?)"
}

// random reports whether offsets are random.
func (p Pattern) random() bool { return p == RandRead || p == RandWrite || p == RandRW }

// Job describes one process's I/O stream, after a fio job section.
type Job struct {
	Name         string
	PID          uint32 // process id; 0 lets Generate assign 1000+index
	Comm         string // process name; "" means "fio"
	Cgroup       uint64 // cgroup id (0: root)
	CgroupPath   string // cgroup path ("/tsched-cg1"), "" for root
	CgroupWeight int    // blkio weight wanted for the cgroup (0: default); informational

	RW        Pattern
	RWMixRead int    // percentage of reads for mixed patterns (default 50)
	BS        uint32 // block size, bytes (default 4096; a multiple of 512)
	Offset    uint64 // start of the region, bytes
	Size      uint64 // length of the region, bytes (default 1 GiB); without Runtime or IOs, also the amount transferred

	IODepth   int           // I/Os in flight at most (default 1; forced to 1 when Sync)
	Sync      bool          // synchronous engine (psync): one blocking I/O at a time
	Direct    bool          // O_DIRECT: writes carry REQ_SYNC (and REQ_IDLE); buffered writes are async
	ThinkTime time.Duration // wait between a completion and the next submission
	Rate      uint64        // bytes per second cap; 0 for none
	Start     time.Duration // delay before the first I/O (fio startdelay)
	Runtime   time.Duration // stop submitting after this long (0: until IOs or Size is done)
	IOs       int           // stop after this many I/Os (0: no limit)
}

// withDefaults returns j with zero fields set to their defaults.
func (j Job) withDefaults(index int) Job {
	if j.PID == 0 {
		j.PID = uint32(1000 + index)
	}
	if j.Comm == "" {
		j.Comm = "fio"
	}
	if j.BS == 0 {
		j.BS = 4096
	}
	j.BS &^= 511
	if j.BS == 0 {
		j.BS = 512
	}
	if j.Size < uint64(j.BS) {
		if j.Size == 0 {
			j.Size = 1 << 30
		} else {
			j.Size = uint64(j.BS)
		}
	}
	if j.IODepth < 1 || j.Sync {
		j.IODepth = 1
	}
	if j.RWMixRead == 0 && (j.RW == ReadWrite || j.RW == RandRW) {
		j.RWMixRead = 50
	}
	return j
}

// Bio is one I/O of a job's stream.
type Bio struct {
	Index  uint32         // position in the job's stream, from 0
	Sector uint64         // start sector (512-byte units)
	Bytes  uint32         // size
	Cat    trace.Category // operation and flags (CatRead or CatWrite, CatSync)
}

// Stream produces the bios of one job in order: offsets, sizes and
// directions, but no timing. Deterministic for a given job and seed.
type Stream struct {
	j      Job
	rng    *rand.Rand
	next   uint64 // next sequential offset, relative to the region (bytes)
	n      uint32 // bios produced
	blocks uint64 // blocks in the region
	done   uint64 // bytes produced
}

// NewStream returns the bio stream of job j (defaults applied as Generate
// applies them for a job at position index) seeded by seed.
func NewStream(j Job, index int, seed uint64) *Stream {
	j = j.withDefaults(index)
	return &Stream{
		j:      j,
		rng:    rand.New(rand.NewPCG(seed, uint64(index)*0x9e3779b97f4a7c15+uint64(j.PID))),
		blocks: j.Size / uint64(j.BS),
	}
}

// Job returns the stream's job with its defaults applied.
func (s *Stream) Job() Job { return s.j }

// More reports whether the job still has I/O to issue by count or size
// (Runtime is the caller's business: it depends on time).
func (s *Stream) More() bool {
	if s.j.IOs > 0 {
		return int(s.n) < s.j.IOs
	}
	if s.j.Runtime > 0 {
		return true
	}
	return s.done < s.j.Size
}

// Next returns the job's next bio. Sequential offsets wrap around the region.
func (s *Stream) Next() Bio {
	j := &s.j
	var off uint64
	if j.RW.random() {
		off = s.rng.Uint64N(s.blocks) * uint64(j.BS)
	} else {
		if s.next+uint64(j.BS) > s.blocks*uint64(j.BS) {
			s.next = 0
		}
		off = s.next
		s.next += uint64(j.BS)
	}
	write := false
	switch j.RW {
	case Write, RandWrite:
		write = true
	case ReadWrite, RandRW:
		write = s.rng.IntN(100) >= j.RWMixRead
	}
	cat := trace.CatRead
	if write {
		cat = trace.CatWrite
		if j.Direct {
			cat |= trace.CatSync
		}
	} else if j.Direct || j.Sync {
		cat |= trace.CatSync
	}
	b := Bio{Index: s.n, Sector: (j.Offset + off) >> 9, Bytes: j.BS, Cat: cat}
	s.n++
	s.done += uint64(j.BS)
	return b
}
