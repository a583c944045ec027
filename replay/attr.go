package replay

import "strings"

// AttrName returns the sysfs attribute name k with its directory prefixes
// dropped: "queue/iosched/slice_idle_us", "iosched/slice_idle_us" and
// "slice_idle_us" all name slice_idle_us, and "queue/nr_requests" names
// nr_requests. It is the one place where --set names are normalised: the
// command and every scheduler model call it, so a name means the same
// whichever reads it.
func AttrName(k string) string {
	k = strings.TrimSpace(k)
	if rest, ok := strings.CutPrefix(k, "/sys/block/"); ok {
		if _, attr, ok := strings.Cut(rest, "/"); ok {
			k = attr // drop the device name
		}
	}
	k = strings.TrimPrefix(k, "queue/")
	return strings.TrimPrefix(k, "iosched/")
}
