package diff

import (
	"strconv"
	"time"
)

// Options tune Compare. The zero value gives the defaults documented on each
// field.
type Options struct {
	// Window is the width of the bandwidth windows (default 100 ms).
	Window time.Duration
	// Weights gives each cgroup id its weight, reported in Cgroup.Weight
	// (0 when unknown).
	Weights map[uint64]int

	// DivergenceWindow is the width W, in bios of the real dispatch order, of
	// the sliding window that finds divergences (default 32; the number of
	// matched bios when smaller).
	DivergenceWindow int
	// DivergenceThreshold is the mean |displacement|, in ranks, above which
	// a window counts as divergent (default 4).
	DivergenceThreshold float64
	// MaxDivergences caps the ranked divergence list (default 100; the count
	// in Order.Divergences is not capped).
	MaxDivergences int

	// SliceIdle is BFQ's slice_idle (default 8 ms): think times are clamped
	// at 2*SliceIdle, and a queue has a long think time when its mean
	// exceeds SliceIdle/2 (SliceIdle with LegacyThinkTime).
	SliceIdle time.Duration
	// IdleOff says slice_idle is 0: BFQ then never updates a queue's
	// think-time class (bfq_update_has_short_ttime returns at once), so
	// every sync queue keeps the short class it starts with.
	IdleOff bool
	// LegacyThinkTime selects the think-time rules of kernels before 5.12:
	// every request insertion is a sample (not only those into an idle
	// queue), and the threshold is SliceIdle rather than SliceIdle/2.
	LegacyThinkTime bool

	// MaxMismatches caps the decision mismatches reported (default 20).
	MaxMismatches int

	// RecordedScheduler names the scheduler that recorded the real side
	// ("" when unknown); it is reported as Result.RecordedScheduler.
	RecordedScheduler string
	// Changes lists, in words, what the prediction changed against the
	// capture's setup (scheduler, kernel, weights, tunables). Any makes the
	// Result a what-if (ModeWhatIf) that leads with Result.Change.
	Changes []string
	// Assumed lists, in words, what the prediction assumed that the
	// capture does not show (the host model's submission costs); reported
	// as Change.Assumed.
	Assumed []string
}

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = 100 * time.Millisecond
	}
	if o.DivergenceWindow <= 0 {
		o.DivergenceWindow = 32
	}
	if o.DivergenceThreshold <= 0 {
		o.DivergenceThreshold = 4
	}
	if o.MaxDivergences <= 0 {
		o.MaxDivergences = 100
	}
	if o.SliceIdle <= 0 {
		o.SliceIdle = 8 * time.Millisecond
	}
	if o.MaxMismatches <= 0 {
		o.MaxMismatches = 20
	}
	return o
}

// ThinkOptions returns the think-time settings that a scheduler's sysfs
// tunables imply (slice_idle in ms, or slice_idle_us): SliceIdle, 0 when
// neither is set (Compare's default applies), and IdleOff when idling is
// off. Values that do not parse are ignored.
func ThinkOptions(tunables map[string]string) (sliceIdle time.Duration, idleOff bool) {
	if v, ok := tunables["slice_idle_us"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Microsecond, n == 0
		}
	}
	if v, ok := tunables["slice_idle"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Millisecond, n == 0
		}
	}
	return 0, false
}
