package diff

import (
	"cmp"
	"iter"
	"math/bits"
	"slices"

	"github.com/tracesched/tracesched/internal/column"
	"github.com/tracesched/tracesched/trace"
)

// A Side keeps its bios and requests column by column (internal/column):
// a few bytes per field instead of a trace.Bio (80 B) and a trace.Request
// (136 B) each. Process names, cgroup ids and categories are interned per
// Side; times are coded per block of a few thousand values against the
// block's least, so a time takes about four bytes. Read them through
// NumBios, BioAt, NumRequests and RequestAt (or the narrow accessors the
// measures use, which decode one field); a pass over every bio or request
// decodes its columns a chunk of rows at a time (column's Values, and
// Requests).

// intern numbers distinct values from 0 in order of first use. The two
// ids returned last are kept beside the map (a trace's values come from a
// few processes and cgroups in turn).
type intern[T comparable] struct {
	ids    map[T]uint32
	vals   []T
	recent [2]uint32 // ids, the latest first; valid below len(vals)
}

func (t *intern[T]) id(v T) uint64 {
	if n := uint32(len(t.vals)); n > 0 {
		if r := t.recent[0]; r < n && t.vals[r] == v {
			return uint64(r)
		}
		if r := t.recent[1]; r < n && t.vals[r] == v {
			t.recent[0], t.recent[1] = r, t.recent[0]
			return uint64(r)
		}
	}
	id, ok := t.ids[v]
	if !ok {
		if t.ids == nil {
			t.ids = map[T]uint32{}
		}
		id = uint32(len(t.vals))
		t.ids[v] = id
		t.vals = append(t.vals, v)
	}
	t.recent[0], t.recent[1] = id, t.recent[0]
	return uint64(id)
}

// bioTable is a Side's bios, one column per trace.Bio field; cat and cgroup
// are ids in the Side's tables.
type bioTable struct {
	n                              int
	pid, index, dev, sector, bytes column.Uints
	cat, cgroup, request, merge    column.Uints
	queue, issue, done             column.Times
}

func (t *bioTable) add(b *trace.Bio, cats *intern[trace.Category], cgs *intern[uint64]) {
	t.pid.Append(uint64(b.PID))
	t.index.Append(uint64(b.Index))
	t.dev.Append(uint64(b.Dev))
	t.sector.Append(b.Sector)
	t.bytes.Append(uint64(b.Bytes))
	t.cat.Append(cats.id(b.Cat))
	t.cgroup.Append(cgs.id(b.Cgroup))
	t.request.Append(b.Request)
	t.merge.Append(uint64(b.Merge))
	t.queue.Append(int64(b.Queue))
	t.issue.Append(int64(b.Issue))
	t.done.Append(int64(b.Done))
	t.n++
}

func (t *bioTable) seal() {
	for _, c := range []*column.Uints{&t.pid, &t.index, &t.dev, &t.sector, &t.bytes, &t.cat, &t.cgroup, &t.request, &t.merge} {
		c.Seal()
	}
	for _, c := range []*column.Times{&t.queue, &t.issue, &t.done} {
		c.Seal()
	}
}

// permute reorders every column by perm (new position j holds old perm[j]).
func (t *bioTable) permute(perm []int32) {
	for _, c := range []*column.Uints{&t.pid, &t.index, &t.dev, &t.sector, &t.bytes, &t.cat, &t.cgroup, &t.request, &t.merge} {
		*c = c.Permuted(perm)
	}
	for _, c := range []*column.Times{&t.queue, &t.issue, &t.done} {
		*c = c.Permuted(perm)
	}
	t.n = len(perm)
}

func (t *bioTable) bytesHeld() int {
	n := 0
	for _, c := range []*column.Uints{&t.pid, &t.index, &t.dev, &t.sector, &t.bytes, &t.cat, &t.cgroup, &t.request, &t.merge} {
		n += c.Bytes()
	}
	for _, c := range []*column.Times{&t.queue, &t.issue, &t.done} {
		n += c.Bytes()
	}
	return n
}

// reqTable is a Side's requests, one column per trace.Request field; cat,
// comm and cgroup are ids in the Side's tables, id is stored as ID minus
// the position (constant when the IDs are dense), error as uint16.
type reqTable struct {
	n                                                 int
	id, dev, sector, bytes, cat, pid, comm, cgroup    column.Uints
	queue, get, insert, issue, complete               column.Times
	bios, backMerges, frontMerges, requeues, firstBio column.Uints
	fromDev, fromSector, errno, flags                 column.Uints
}

func (t *reqTable) uints() []*column.Uints {
	return []*column.Uints{&t.id, &t.dev, &t.sector, &t.bytes, &t.cat, &t.pid, &t.comm, &t.cgroup,
		&t.bios, &t.backMerges, &t.frontMerges, &t.requeues, &t.firstBio, &t.fromDev, &t.fromSector, &t.errno, &t.flags}
}

func (t *reqTable) times() []*column.Times {
	return []*column.Times{&t.queue, &t.get, &t.insert, &t.issue, &t.complete}
}

func (t *reqTable) add(r *trace.Request, cats *intern[trace.Category], comms *intern[string], cgs *intern[uint64]) {
	t.id.Append(r.ID - uint64(t.n))
	t.dev.Append(uint64(r.Dev))
	t.sector.Append(r.Sector)
	t.bytes.Append(uint64(r.Bytes))
	t.cat.Append(cats.id(r.Cat))
	t.pid.Append(uint64(r.PID))
	t.comm.Append(comms.id(r.Comm))
	t.cgroup.Append(cgs.id(r.Cgroup))
	t.queue.Append(int64(r.Queue))
	t.get.Append(int64(r.Get))
	t.insert.Append(int64(r.Insert))
	t.issue.Append(int64(r.Issue))
	t.complete.Append(int64(r.Complete))
	t.bios.Append(uint64(r.Bios))
	t.backMerges.Append(uint64(r.BackMerges))
	t.frontMerges.Append(uint64(r.FrontMerges))
	t.requeues.Append(uint64(r.Requeues))
	t.firstBio.Append(uint64(r.FirstBio))
	t.fromDev.Append(uint64(r.FromDev))
	t.fromSector.Append(r.FromSector)
	t.errno.Append(uint64(uint16(r.Error)))
	t.flags.Append(uint64(r.Flags))
	t.n++
}

func (t *reqTable) seal() {
	for _, c := range t.uints() {
		c.Seal()
	}
	for _, c := range t.times() {
		c.Seal()
	}
}

// permute reorders every column by perm; the id column is recoded against
// the new positions.
func (t *reqTable) permute(perm []int32) {
	var id column.Uints
	for j, i := range perm {
		id.Append(t.id.At(int(i)) + uint64(i) - uint64(j))
	}
	id.Seal()
	t.id = id
	for _, c := range t.uints()[1:] {
		*c = c.Permuted(perm)
	}
	for _, c := range t.times() {
		*c = c.Permuted(perm)
	}
	t.n = len(perm)
}

func (t *reqTable) bytesHeld() int {
	n := 0
	for _, c := range t.uints() {
		n += c.Bytes()
	}
	for _, c := range t.times() {
		n += c.Bytes()
	}
	return n
}

// NumBios returns the number of bios.
func (s *Side) NumBios() int { return s.bios.n }

// NumRequests returns the number of requests.
func (s *Side) NumRequests() int { return s.reqs.n }

// BioAt returns bio i (0 <= i < NumBios), in (PID, Index) order once the
// Side is finished.
func (s *Side) BioAt(i int) trace.Bio {
	t := &s.bios
	return trace.Bio{
		PID: s.bioPID(i), Index: s.bioIndex(i), Dev: trace.Dev(t.dev.At(i)), Sector: t.sector.At(i),
		Bytes: s.bioBytes(i), Cat: s.bioCat(i), Cgroup: s.bioCgroup(i), Queue: s.bioQueue(i),
		Request: s.bioRequest(i), Merge: s.bioMerge(i), Issue: s.bioIssue(i), Done: s.bioDone(i),
	}
}

func (s *Side) bioPID(i int) uint32               { return uint32(s.bios.pid.At(i)) }
func (s *Side) bioIndex(i int) uint32             { return uint32(s.bios.index.At(i)) }
func (s *Side) bioBytes(i int) uint32             { return uint32(s.bios.bytes.At(i)) }
func (s *Side) bioCat(i int) trace.Category       { return s.cats.vals[s.bios.cat.At(i)] }
func (s *Side) bioCgroup(i int) uint64            { return s.cgroups.vals[s.bios.cgroup.At(i)] }
func (s *Side) bioRequest(i int) uint64           { return s.bios.request.At(i) }
func (s *Side) bioMerge(i int) trace.MergeKind    { return trace.MergeKind(s.bios.merge.At(i)) }
func (s *Side) bioQueue(i int) trace.Time         { return trace.Time(s.bios.queue.At(i)) }
func (s *Side) bioIssue(i int) trace.Time         { return trace.Time(s.bios.issue.At(i)) }
func (s *Side) bioDone(i int) trace.Time          { return trace.Time(s.bios.done.At(i)) }
func (s *Side) reqID(i int) uint64                { return s.reqs.id.At(i) + uint64(i) }
func (s *Side) reqPID(i int) uint32               { return uint32(s.reqs.pid.At(i)) }
func (s *Side) reqDev(i int) trace.Dev            { return trace.Dev(s.reqs.dev.At(i)) }
func (s *Side) reqComm(i int) string              { return s.comms.vals[s.reqs.comm.At(i)] }
func (s *Side) reqCat(i int) trace.Category       { return s.cats.vals[s.reqs.cat.At(i)] }
func (s *Side) reqFlags(i int) trace.RequestFlags { return trace.RequestFlags(s.reqs.flags.At(i)) }
func (s *Side) reqFirstBio(i int) uint32          { return uint32(s.reqs.firstBio.At(i)) }
func (s *Side) reqQueue(i int) trace.Time         { return trace.Time(s.reqs.queue.At(i)) }
func (s *Side) reqInsert(i int) trace.Time        { return trace.Time(s.reqs.insert.At(i)) }
func (s *Side) reqIssue(i int) trace.Time         { return trace.Time(s.reqs.issue.At(i)) }
func (s *Side) reqComplete(i int) trace.Time      { return trace.Time(s.reqs.complete.At(i)) }

// RequestAt returns request i (0 <= i < NumRequests), in ID order once the
// Side is finished.
func (s *Side) RequestAt(i int) trace.Request {
	t := &s.reqs
	return trace.Request{
		ID: s.reqID(i), Dev: s.reqDev(i), Sector: t.sector.At(i), Bytes: uint32(t.bytes.At(i)), Cat: s.reqCat(i),
		PID: s.reqPID(i), Comm: s.reqComm(i), Cgroup: s.cgroups.vals[t.cgroup.At(i)],
		Queue: s.reqQueue(i), Get: trace.Time(t.get.At(i)), Insert: s.reqInsert(i), Issue: s.reqIssue(i), Complete: s.reqComplete(i),
		Bios: uint32(t.bios.At(i)), BackMerges: uint32(t.backMerges.At(i)), FrontMerges: uint32(t.frontMerges.At(i)),
		Requeues: uint32(t.requeues.At(i)), FirstBio: s.reqFirstBio(i),
		FromDev: trace.Dev(t.fromDev.At(i)), FromSector: t.fromSector.At(i), Error: int16(uint16(t.errno.At(i))), Flags: s.reqFlags(i),
	}
}

// chunk is how many rows a pass over a table decodes at a time (column's
// Values), into buffers of its own: a few columns' chunks stay in the
// first-level cache.
const chunk = 256

// Requests yields every request with its index, in the Side's order (ID
// order once finished), as RequestAt gives them: decoded a chunk of each
// column at a time into one reused trace.Request, valid during its yield
// only. A pass over every request, cheaper than RequestAt for each.
func (s *Side) Requests() iter.Seq2[int, *trace.Request] {
	return func(yield func(int, *trace.Request) bool) {
		t := &s.reqs
		u, tm := new([17][chunk]uint64), new([5][chunk]int64)
		var r trace.Request
		for from := 0; from < t.n; from += chunk {
			id, dev, sector, bytes, cat := t.id.Values(from, u[0][:]), t.dev.Values(from, u[1][:]), t.sector.Values(from, u[2][:]), t.bytes.Values(from, u[3][:]), t.cat.Values(from, u[4][:])
			pid, comm, cgroup := t.pid.Values(from, u[5][:]), t.comm.Values(from, u[6][:]), t.cgroup.Values(from, u[7][:])
			queue, get, insert, issue, complete := t.queue.Values(from, tm[0][:]), t.get.Values(from, tm[1][:]), t.insert.Values(from, tm[2][:]), t.issue.Values(from, tm[3][:]), t.complete.Values(from, tm[4][:])
			bios, back, front, requeues, firstBio := t.bios.Values(from, u[8][:]), t.backMerges.Values(from, u[9][:]), t.frontMerges.Values(from, u[10][:]), t.requeues.Values(from, u[11][:]), t.firstBio.Values(from, u[12][:])
			fromDev, fromSector, errno, flags := t.fromDev.Values(from, u[13][:]), t.fromSector.Values(from, u[14][:]), t.errno.Values(from, u[15][:]), t.flags.Values(from, u[16][:])
			for j := range id {
				i := from + j
				// Field by field: every field is set.
				r.ID, r.Dev, r.Sector, r.Bytes, r.Cat = id[j]+uint64(i), trace.Dev(dev[j]), sector[j], uint32(bytes[j]), s.cats.vals[cat[j]]
				r.PID, r.Comm, r.Cgroup = uint32(pid[j]), s.comms.vals[comm[j]], s.cgroups.vals[cgroup[j]]
				r.Queue, r.Get, r.Insert, r.Issue, r.Complete = trace.Time(queue[j]), trace.Time(get[j]), trace.Time(insert[j]), trace.Time(issue[j]), trace.Time(complete[j])
				r.Bios, r.BackMerges, r.FrontMerges, r.Requeues, r.FirstBio = uint32(bios[j]), uint32(back[j]), uint32(front[j]), uint32(requeues[j]), uint32(firstBio[j])
				r.FromDev, r.FromSector, r.Error, r.Flags = trace.Dev(fromDev[j]), fromSector[j], int16(uint16(errno[j])), trace.RequestFlags(flags[j])
				if !yield(i, &r) {
					return
				}
			}
		}
	}
}

// FlaggedRequests returns how many requests carry any of flags.
func (s *Side) FlaggedRequests(flags trace.RequestFlags) int {
	n := 0
	for i := range s.reqs.n {
		if s.reqFlags(i)&flags != 0 {
			n++
		}
	}
	return n
}

// BioSlice returns a copy of every bio, as BioAt gives them.
func (s *Side) BioSlice() []trace.Bio {
	out := make([]trace.Bio, s.NumBios())
	for i := range out {
		out[i] = s.BioAt(i)
	}
	return out
}

// RequestSlice returns a copy of every request, as RequestAt gives them
// (what needs them as one slice: the calibration, the TUI's index).
func (s *Side) RequestSlice() []trace.Request {
	out := make([]trace.Request, s.NumRequests())
	for i, r := range s.Requests() {
		out[i] = *r
	}
	return out
}

// BytesHeld returns the memory the Side's bio and request tables hold, in
// bytes.
func (s *Side) BytesHeld() int { return s.bios.bytesHeld() + s.reqs.bytesHeld() }

// addBio and addRequest take a bio and a request as the Rebuilder hands
// them over.
func (s *Side) addBio(b *trace.Bio) {
	s.bios.add(b, &s.cats, &s.cgroups)
	s.stream.add(b)
}
func (s *Side) addRequest(r *trace.Request) { s.reqs.add(r, &s.cats, &s.comms, &s.cgroups) }

// sortTables sorts the bios by (PID, Index), dropping the later of equal
// keys (counted in Duplicates), and the requests by ID, both stably.
func (s *Side) sortTables() {
	s.bios.seal()
	s.reqs.seal()
	if perm := s.bioOrder(); perm != nil {
		s.bios.permute(perm)
	}
	if perm := s.requestOrder(); perm != nil {
		s.reqs.permute(perm)
	}
}

// sortedPerm returns the positions 0..n-1 sorted stably by key(i) (keys of
// at most keyBits bits), or nil when they are in order already.
func sortedPerm(n, keyBits int, key func(i int) uint64) []int32 {
	sorted := true
	for i := 1; i < n; i++ {
		if key(i-1) > key(i) {
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	idxBits := bits.Len(uint(n - 1))
	perm := make([]int32, n)
	if keyBits+idxBits <= packBits {
		ks := make([]uint64, n)
		for i := range ks {
			ks[i] = key(i)<<idxBits | uint64(i)
		}
		radixU64(ks, uint(idxBits), nil)
		mask := uint64(1)<<idxBits - 1
		for j, k := range ks {
			perm[j] = int32(k & mask)
		}
		return perm
	}
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(key(int(a)), key(int(b))) })
	return perm
}

// bioOrder returns the permutation that sorts the bios by (PID, Index) and
// drops duplicate keys, or nil when none is needed.
func (s *Side) bioOrder() []int32 {
	n := s.bios.n
	if n == 0 {
		return nil
	}
	minP, maxP, maxI := s.bioPID(0), s.bioPID(0), uint32(0)
	var pb, xb [chunk]uint64
	for from := 0; from < n; from += chunk {
		pids, idx := s.bios.pid.Values(from, pb[:]), s.bios.index.Values(from, xb[:])
		for j := range pids {
			p := uint32(pids[j])
			minP, maxP, maxI = min(minP, p), max(maxP, p), max(maxI, uint32(idx[j]))
		}
	}
	ib := bits.Len32(maxI)
	pidBits := bits.Len32(maxP - minP)
	key := func(i int) uint64 { return uint64(s.bioPID(i)-minP)<<ib | uint64(s.bioIndex(i)) }
	var perm []int32
	dup := -1 // not counted yet
	if maxP-minP < maxPIDBuckets && ib+bits.Len(uint(n-1)) <= packBits {
		perm, dup = s.bioOrderByPID(minP, maxP)
	} else {
		perm = sortedPerm(n, pidBits+ib, key)
	}
	// Drop duplicate keys, keeping the first.
	at := func(j int) int {
		if perm == nil {
			return j
		}
		return int(perm[j])
	}
	if dup < 0 {
		dup = 0
		for j := 1; j < n; j++ {
			if key(at(j)) == key(at(j-1)) {
				dup++
			}
		}
	}
	if dup == 0 {
		return perm
	}
	s.Duplicates += dup
	out := make([]int32, 0, n-dup)
	for j := range n {
		if j > 0 && key(at(j)) == key(at(j-1)) {
			continue
		}
		out = append(out, int32(at(j)))
	}
	return out
}

// maxPIDBuckets bounds the span of PIDs bioOrderByPID counts in.
const maxPIDBuckets = 1 << 16

// bioOrderByPID is bioOrder's sort (without dropping duplicates) for pids
// minP..maxP: the bios counted out by PID (a trace's bios come as a few
// processes' streams interleaved), then each process's sorted by index
// (nearly in order already, which radixU64 takes in one pass), stably. nil when
// they are in order. dup counts the bios whose key is the one before
// theirs in that order.
func (s *Side) bioOrderByPID(minP, maxP uint32) (perm []int32, dup int) {
	n := s.bios.n
	off := make([]int, maxP-minP+2)
	sorted := true
	var p, x uint32 // bio i-1's PID and Index
	var pb, xb [chunk]uint64
	for from := 0; from < n; from += chunk {
		pids, idx := s.bios.pid.Values(from, pb[:]), s.bios.index.Values(from, xb[:])
		for j := range pids {
			q, y := uint32(pids[j]), uint32(idx[j])
			off[q-minP+1]++
			if from+j > 0 && sorted {
				sorted = p < q || p == q && x <= y
				if p == q && x == y {
					dup++
				}
			}
			p, x = q, y
		}
	}
	if sorted {
		return nil, dup
	}
	for k := 1; k < len(off); k++ {
		off[k] += off[k-1]
	}
	idxBits := uint(bits.Len(uint(n - 1)))
	ks := make([]uint64, n)
	fill := slices.Clone(off)
	for from := 0; from < n; from += chunk {
		pids, idx := s.bios.pid.Values(from, pb[:]), s.bios.index.Values(from, xb[:])
		for j := range pids {
			k := uint32(pids[j]) - minP
			ks[fill[k]] = idx[j]<<idxBits | uint64(from+j)
			fill[k]++
		}
	}
	buf := make([]uint64, 0)
	dup = 0
	for k := 0; k+1 < len(off); k++ {
		if seg := ks[off[k]:off[k+1]]; len(seg) > 1 {
			if cap(buf) < len(seg) {
				buf = make([]uint64, len(seg))
			}
			radixU64(seg, idxBits, buf[:len(seg)])
			for j := 1; j < len(seg); j++ { // equal indexes of the PID
				if seg[j]>>idxBits == seg[j-1]>>idxBits {
					dup++
				}
			}
		}
	}
	perm = make([]int32, n)
	mask := uint64(1)<<idxBits - 1
	for j, k := range ks {
		perm[j] = int32(k & mask)
	}
	return perm, dup
}

// requestOrder returns the permutation that sorts the requests by ID, or
// nil when they are in order.
func (s *Side) requestOrder() []int32 {
	n := s.reqs.n
	if n == 0 {
		return nil
	}
	lo, hi := s.reqID(0), s.reqID(0)
	sorted := true
	var buf [chunk]uint64
	for from := 0; from < n; from += chunk {
		for j, d := range s.reqs.id.Values(from, buf[:]) { // ID less the position
			v := d + uint64(from+j)
			sorted = sorted && v >= hi
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if sorted {
		return nil
	}
	return sortedPerm(n, bits.Len64(hi-lo), func(i int) uint64 { return s.reqID(i) - lo })
}
