package replay

import "testing"

func TestAttrName(t *testing.T) {
	for in, want := range map[string]string{
		"slice_idle_us":                  "slice_idle_us",
		"iosched/slice_idle_us":          "slice_idle_us",
		"queue/iosched/slice_idle_us":    "slice_idle_us",
		" queue/nr_requests ":            "nr_requests",
		"/sys/block/sda/queue/iosched/x": "x",
		"queue/rotational":               "rotational",
		"blkio.weight:/tsched-cg1":       "blkio.weight:/tsched-cg1",
	} {
		if got := AttrName(in); got != want {
			t.Errorf("AttrName(%q) = %q, want %q", in, got, want)
		}
	}
}
