package diff

import (
	"encoding/json"
	"fmt"
	"math"
)

// nanNull returns nil for NaN (JSON null), else a pointer to v.
func nanNull(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes KendallTau as null when nothing was compared (NaN).
// The key keeps its place, first.
func (o Order) MarshalJSON() ([]byte, error) {
	type plain Order
	return json.Marshal(struct {
		KendallTau *float64 `json:"kendall_tau"`
		plain
	}{nanNull(o.KendallTau), plain(o)})
}

// MarshalJSON writes Agreement as null when nothing was compared (NaN).
func (t ThinkTime) MarshalJSON() ([]byte, error) {
	type plain ThinkTime
	return json.Marshal(struct {
		Agreement *float64 `json:"agreement"`
		plain
	}{nanNull(t.Agreement), plain(t)})
}

// Compared reports whether the two sides had anything to compare bio by
// bio: at least one bio matched by (PID, Index). When not, the dispatch
// order and the think times are not compared (NaN) and the text report
// says so instead of printing perfect agreement.
func (r *Result) Compared() bool { return r.Identity.Matched > 0 }

// fmtOrNA formats v with format, or "n/a" padded to width when v is NaN.
func fmtOrNA(format string, width int, v float64) string {
	if math.IsNaN(v) {
		return fmt.Sprintf("%*s", width, "n/a")
	}
	return fmt.Sprintf(format, v)
}

// defaultWeight is the weight a cgroup has when none was set: BFQ's
// BFQ_DEFAULT_GRP_WEIGHT (100) and CFQ's CFQ_WEIGHT_LEGACY_DFL (500); 0
// for schedulers without weights.
func defaultWeight(sched string) int {
	switch sched {
	case "bfq":
		return 100
	case "cfq":
		return 500
	}
	return 0
}
