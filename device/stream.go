package device

// SeqRecent is how many of the requests issued last a request may continue
// to count as sequential (OpTiming.Seq): it starts at the sector where one
// of them ended. 64 holds the other streams' requests that come between
// two of one stream's on a device kept 33-64 deep (rig/wi-mix4-mqdl: a
// 1 MiB reader among 4 KiB to 64 KiB random I/O).
const SeqRecent = 64

// streams remembers where the last SeqRecent requests issued ended: the
// one locality rule both the calibration (prepare) and the replay
// (Timing) apply. The zero value has seen nothing.
type streams struct {
	ends [SeqRecent]uint64 // end sectors, +1 (0: empty)
	next int
}

// issue reports whether a request of bytes at sector continues one of the
// streams, and records its end. A zero-byte request (a flush) neither
// continues nor ends a stream.
func (s *streams) issue(sector uint64, bytes uint32) bool {
	if bytes == 0 {
		return false
	}
	seq := false
	for _, e := range s.ends {
		if e == sector+1 {
			seq = true
			break
		}
	}
	s.ends[s.next] = sector + uint64(bytes>>9) + 1
	s.next = (s.next + 1) % SeqRecent
	return seq
}
