package replay

import "github.com/tracesched/tracesched/trace"

// The flush machinery of block/blk-flush.c (Linux 6.18), in the engine.
//
// A bio with REQ_PREFLUSH or REQ_FUA gets a request (G) like any other,
// then blk_mq_submit_bio hands it to blk_insert_flush before the plug:
//
//  1. blk_flush_policy: DATA when it has bytes; with a write-back cache
//     (Queue.WriteCache), PREFLUSH when the bio asked for it and POSTFLUSH
//     when it asked for FUA and the device has none (Queue.FUA). The
//     request loses REQ_PREFLUSH (and REQ_FUA without device FUA) and
//     gains REQ_SYNC.
//  2. No step (an empty flush on a write-through cache): it completes at
//     once. DATA alone: the normal path (plug, scheduler). DATA+POSTFLUSH:
//     the normal path, then the post-flush when its data completes.
//     Otherwise the request enters the sequence (blk_flush_complete_seq):
//     a PREFLUSH or POSTFLUSH step puts it on the pending flush list, the
//     DATA step inserts it at the head of the scheduler's dispatch list
//     (blk_mq_requeue_work -> blk_mq_insert_request(rq,
//     BLK_MQ_INSERT_AT_HEAD); the I event), and DONE completes it (a C of
//     zero bytes, after which its bios complete).
//  3. blk_kick_flush: one flush in flight at a time (pending_idx !=
//     running_idx), and none while a flush's data phase is on the device
//     unless the oldest pending one has waited FLUSH_PENDING_TIMEOUT
//     (5 s); otherwise one REQ_OP_FLUSH request (RWBS "FN", zero bytes,
//     no bio, no scheduler tag) goes to the head of the hardware queue's
//     dispatch list, ahead of everything the scheduler holds, and every
//     request pending at that moment shares it: flush_end_io moves each of
//     them to its next step.
//
// A flush request costs what the device model says of a zero-byte request
// (its "other" class, fitted on the capture's own flushes). The kblockd
// work items that run the steps (requeue work, the run of the queue) are
// taken to cost no time.

// Flush steps (REQ_FSEQ_*), in sequence order.
const (
	fseqPreflush  uint8 = 1 << 0
	fseqData      uint8 = 1 << 1
	fseqPostflush uint8 = 1 << 2
	fseqDone      uint8 = 1 << 3
	fseqActions         = fseqPreflush | fseqData | fseqPostflush
)

// flushPendingTimeout is FLUSH_PENDING_TIMEOUT (5 * HZ).
const flushPendingTimeout = 5 * trace.Time(1e9)

// WriteCache is the device's volatile write cache setting, as
// /sys/block/DEV/queue/write_cache names it.
type WriteCache uint8

const (
	// WriteCacheAuto: derived from the workload (Workload.WriteCache).
	WriteCacheAuto WriteCache = iota
	// WriteBack: a volatile cache; PREFLUSH and FUA need flushes.
	WriteBack
	// WriteThrough: no volatile cache; flushes are dropped.
	WriteThrough
)

func (w WriteCache) String() string {
	switch w {
	case WriteBack:
		return "write back"
	case WriteThrough:
		return "write through"
	}
	return "auto"
}

// AtHeadInserter is implemented by schedulers that take requests inserted
// at the head (insert_requests with BLK_MQ_INSERT_AT_HEAD: bfqd->dispatch,
// dd->dispatch), served before anything else they hold. The engine uses it
// for a flush sequence's data phase. A scheduler without it never sees
// those requests: the engine serves them itself, before asking Dispatch.
type AtHeadInserter interface {
	InsertAtHead(now trace.Time, rq *Request)
}

// flushQueue is struct blk_flush_queue of the one hardware queue.
type flushQueue struct {
	pending      [2][]*Request
	pendingIdx   int
	runningIdx   int
	pendingSince trace.Time
	dataInFlight int
}

// flushPolicy is blk_flush_policy.
func (e *Engine) flushPolicy(rq *Request) uint8 {
	var p uint8
	if rq.Bytes > 0 {
		p |= fseqData
	}
	if e.q.WriteCache == WriteBack {
		if rq.Cat&trace.CatFlush != 0 {
			p |= fseqPreflush
		}
		if !e.q.FUA && rq.Cat&trace.CatFUA != 0 {
			p |= fseqPostflush
		}
	}
	return p
}

// insertFlush is blk_insert_flush: it returns true when the flush
// machinery took rq (the caller neither plugs nor inserts it).
func (e *Engine) insertFlush(rq *Request) bool {
	policy := e.flushPolicy(rq)
	rq.Cat &^= trace.CatFlush
	if !e.q.FUA {
		rq.Cat &^= trace.CatFUA
	}
	rq.Cat |= trace.CatSync
	switch policy {
	case 0:
		rq.eng.flushSeq, rq.eng.noMerge = true, true
		rq.eng.fseq = fseqActions
		e.flushDone(rq)
		return true
	case fseqData:
		return false
	case fseqData | fseqPostflush:
		rq.eng.flushSeq, rq.eng.noMerge = true, true
		rq.eng.fseq = fseqPreflush
		e.fq.dataInFlight++
		return false
	}
	rq.eng.flushSeq, rq.eng.noMerge = true, true
	e.flushSeq(rq, fseqActions&^policy)
	return true
}

// curSeq is blk_flush_cur_seq: the first step not done.
func curSeq(done uint8) uint8 {
	for s := fseqPreflush; s < fseqDone; s <<= 1 {
		if done&s == 0 {
			return s
		}
	}
	return fseqDone
}

// flushSeq is blk_flush_complete_seq: rq has done the steps in seq; it
// moves to its next one, and a flush is kicked if one may go.
func (e *Engine) flushSeq(rq *Request, seq uint8) {
	rq.eng.fseq |= seq
	switch curSeq(rq.eng.fseq) {
	case fseqPreflush, fseqPostflush:
		fq := &e.fq
		if len(fq.pending[fq.pendingIdx]) == 0 {
			fq.pendingSince = e.now
		}
		fq.pending[fq.pendingIdx] = append(fq.pending[fq.pendingIdx], rq)
	case fseqData:
		e.fq.dataInFlight++
		e.insertAtHead(rq)
	case fseqDone:
		e.flushDone(rq)
	}
	e.kickFlush()
}

// kickFlush is blk_kick_flush.
func (e *Engine) kickFlush() {
	fq := &e.fq
	if fq.pendingIdx != fq.runningIdx || len(fq.pending[fq.pendingIdx]) == 0 {
		return
	}
	if fq.dataInFlight > 0 && e.now < fq.pendingSince+flushPendingTimeout {
		return
	}
	fq.pendingIdx ^= 1
	f := e.newKernelRequest(trace.CatFlush)
	f.eng.flushRq = true
	e.res.Flushes++
	// blk_mq_insert_request of a REQ_OP_FLUSH: blk_mq_request_bypass_insert
	// at the head of hctx->dispatch.
	e.bypass = append(e.bypass, nil)
	copy(e.bypass[1:], e.bypass)
	e.bypass[0] = f
	e.kicked = true
}

// flushEnd is flush_end_io: the flush in flight completed; every request
// that shared it goes on to its next step.
func (e *Engine) flushEnd(f *Request) {
	fq := &e.fq
	running := fq.pending[fq.runningIdx]
	fq.pending[fq.runningIdx] = running[:0:0]
	fq.runningIdx ^= 1
	for _, rq := range running {
		e.flushSeq(rq, curSeq(rq.eng.fseq))
	}
	// A flush may go now (blk_kick_flush from blk_flush_complete_seq
	// above, or here when nothing was pending behind it).
	e.kickFlush()
}

// insertAtHead inserts a flush's data phase at the head of the
// scheduler's dispatch list (the I event).
func (e *Engine) insertAtHead(rq *Request) {
	rq.Inserted = e.now
	if e.elev {
		e.emitRq(trace.ActionInsert, rq, rq.PID, trace.CatQueue)
	}
	if h, ok := e.sched.(AtHeadInserter); ok && e.elev {
		rq.eng.held = true
		rq.eng.schedSaw = true
		e.held++
		h.InsertAtHead(e.now, rq)
	} else {
		e.atHead = append(e.atHead, rq)
	}
	e.kicked = true
}

// flushDone is REQ_FSEQ_DONE: the request completes (blk_mq_end_request
// of the restored request: a C of zero bytes) and so do its bios.
func (e *Engine) flushDone(rq *Request) {
	bytes := rq.Bytes
	rq.Bytes = 0
	e.emitRq(trace.ActionComplete, rq, rq.PID, trace.CatComplete)
	rq.Bytes = bytes
	if rq.eng.schedSaw {
		e.sched.Completed(e.now, rq)
	}
	e.finishBios(rq)
}

// newKernelRequest makes a request of the kernel's own (a flush): no bio,
// no scheduler tag.
func (e *Engine) newKernelRequest(cat trace.Category) *Request {
	rq := &Request{}
	e.nextID++
	rq.ID = e.nextID
	rq.Cat = cat
	rq.Queued, rq.Inserted, rq.Issued = e.now, trace.NoTime, trace.NoTime
	return rq
}
