package replay

import (
	"errors"
	"fmt"
	"io"

	"github.com/tracesched/tracesched/trace"
)

// Source opens a capture's event stream from its start. A stream that
// implements io.Closer is closed when done.
type Source func() (trace.EventReader, error)

// NewWorkload reads a capture once and returns its workload: the device
// whose requests were issued (the one with the most D events, so the
// bottom of a remapped stack), the queue depth it showed (most requests
// between D and C), its largest request, the captured per-process and
// per-cgroup bandwidth, and the device's bios, kept compactly (about 90
// bytes a bio) for the replay. It is a Collector fed the whole stream;
// callers that read the capture for other purposes too feed a shared
// Collector themselves (internal/pipeline).
func NewWorkload(open Source) (*Workload, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	defer closeReader(r)
	c := NewCollector()
	for {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("scanning capture: %w", err)
		}
		c.Add(&e)
	}
	return c.Workload()
}

func closeReader(r trace.EventReader) {
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}

// bioKey names a bio by its process and its index among the process's Q
// events (the Rebuilder's Bio.Index).
type bioKey struct {
	pid   uint32
	index uint32
}
