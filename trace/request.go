package trace

// Request is one block-layer request rebuilt from a trace: the bios that
// joined it and the times of its life cycle. Times not observed are NoTime.
//
// Invariants: where set, Queue <= Get <= Insert <= Issue <= Complete (a
// requeued request keeps its last Insert and Issue, as btt counts them);
// Bios >= 1 unless the request was already in flight when the capture
// started (FlagNoQueue).
type Request struct {
	ID     uint64   // position in the order requests were created, from 1; unique within a stream
	Dev    Dev      // device the request was issued to
	Sector uint64   // start sector (512-byte units) when issued
	Bytes  uint32   // size when issued, after merges
	Cat    Category // operation and flags (Category.OpFlags of its first bio)
	PID    uint32   // process of its first bio
	Comm   string   // that process's name when known
	Cgroup uint64   // cgroup id of its first bio, 0 when unknown

	Queue    Time // Q of its first bio
	Get      Time // G: request allocated
	Insert   Time // I: inserted into the scheduler
	Issue    Time // D: issued to the driver (the last issue when requeued)
	Complete Time // C: completed (the last completion when partial)

	Bios        uint32 // bios (Q) served by the request, the first one included
	BackMerges  uint32 // bios merged at the back (M)
	FrontMerges uint32 // bios merged at the front (F)
	Requeues    uint32 // times it was requeued (R)
	FirstBio    uint32 // index of its first bio in its process's stream of bios

	FromDev    Dev    // the device of the first bio before remaps (0 if never remapped)
	FromSector uint64 // its sector there
	Error      int16  // completion status: negative errno, 0 for success
	Flags      RequestFlags
}

// RequestFlags mark what the capture did not show of a request.
type RequestFlags uint16

const (
	// FlagNoQueue: the request was in flight when the capture started; its
	// first events (Q, and perhaps G, I, D) were not captured.
	FlagNoQueue RequestFlags = 1 << iota
	// FlagIncomplete: the capture ended before the request completed.
	FlagIncomplete
	// FlagRemapped: its bios came from another device (A events).
	FlagRemapped
	// FlagSplit: its first bio was split off a larger bio (X).
	FlagSplit
	// FlagPartial: it completed in several steps (several C events).
	FlagPartial
	// FlagMergedAway: the request was merged into another request and never
	// issued on its own (a request-level M); its bios are accounted there.
	FlagMergedAway
)

// Latency returns to-from, or false when either time is unobserved.
func Latency(from, to Time) (int64, bool) {
	if from == NoTime || to == NoTime {
		return 0, false
	}
	return int64(to - from), true
}

// Bio is one bio (one Q event) and the fate of the request that served it.
// A bio is known by (PID, Index) on every side of a diff: its process and
// its position in that process's stream of bios, so bios line up even where
// merges differ.
type Bio struct {
	PID     uint32   // process that queued it
	Index   uint32   // position in its process's stream of bios, from 0
	Dev     Dev      // device it was queued on
	Sector  uint64   // start sector
	Bytes   uint32   // size
	Cat     Category // operation and flags
	Cgroup  uint64   // cgroup id, 0 when unknown
	Queue   Time     // Q
	Request uint64   // ID of the request that served it; 0 if none was seen
	Merge   MergeKind
	Issue   Time // D of its request, NoTime if never issued in the capture
	Done    Time // C of its request, NoTime if never completed in the capture
}

// MergeKind says how a bio joined its request.
type MergeKind uint8

const (
	MergeNone  MergeKind = iota // the bio started its request (G)
	MergeBack                   // merged at the back (M)
	MergeFront                  // merged at the front (F)
)

func (k MergeKind) String() string {
	switch k {
	case MergeBack:
		return "back"
	case MergeFront:
		return "front"
	}
	return "none"
}
