package replay

// recBlock is the records of one block of a recQueue.
const recBlock = 1024

// recQueue is a FIFO of records, a process's bios read from the workload
// and not yet arrived, held in blocks of recBlock: a push never copies
// what the queue holds, where one growing slice copied all of it at each
// growth and again when compacted. A process may hold most of a workload:
// while another process runs ahead of its captured times the engine reads
// the stream forward for it (on /tmp/x16/cap/big under none, 1.8 M of the
// 2.1 M records at once). The zero value is an empty queue.
type recQueue struct {
	blocks [][]*Record // every block but the last is full; blocks[0][head:] is the front
	head   int         // records popped from blocks[0]
	n      int         // records held
	spare  []*Record   // an emptied block, kept for the next one needed
}

// len returns the records held.
func (q *recQueue) len() int { return q.n }

// push appends r.
func (q *recQueue) push(r *Record) {
	k := len(q.blocks) - 1
	if k < 0 || len(q.blocks[k]) == recBlock {
		b := q.spare
		q.spare = nil
		if b == nil {
			b = make([]*Record, 0, recBlock)
		}
		q.blocks = append(q.blocks, b)
		k++
	}
	q.blocks[k] = append(q.blocks[k], r)
	q.n++
}

// front returns the first record, nil when the queue is empty.
func (q *recQueue) front() *Record {
	if q.n == 0 {
		return nil
	}
	return q.blocks[0][q.head]
}

// pop removes the first record; the queue must not be empty.
func (q *recQueue) pop() {
	b := q.blocks[0]
	b[q.head] = nil
	q.head++
	q.n--
	if q.head < len(b) {
		return
	}
	// blocks[0] is read to its end.
	q.head = 0
	if len(q.blocks) == 1 {
		q.blocks[0] = b[:0]
		return
	}
	q.spare = b[:0]
	q.blocks[0] = nil
	q.blocks = q.blocks[1:]
}

// clear drops every record held and returns their number.
func (q *recQueue) clear() int {
	n := q.n
	for q.n > 0 {
		q.pop()
	}
	return n
}
