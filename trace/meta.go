package trace

// Meta describes a capture as a whole. It travels in the Arrow schema
// metadata of both streams.
type Meta struct {
	Source  string // format read: "blktrace", "blkparse-dump", "ftrace-bin", "ftrace-text", "blkparse-text", "arrow", "replay"
	Kernel  string // kernel version when known, else ""
	Devices []Dev  // devices seen, ascending
	// Origin is the absolute time (ns, the recording clock) that Time 0
	// stands for: the first event of the capture, as blkparse counts.
	Origin int64
	// Wall clock at Origin, when the capture carries a timestamp note (0 otherwise).
	WallSec, WallNsec uint32
	// Cgroups maps cgroup ids to paths where the source or the user names them.
	Cgroups map[uint64]string
	// Extra carries free-form key/value pairs (scheduler, tunables, replay flags).
	Extra map[string]string
}
