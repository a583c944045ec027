package replay

// engineState is the engine's private bookkeeping in a Request.
type engineState struct {
	recs        []*Record // bios served by the request, in merge order; recs[0] is its first bio
	held        bool      // inserted into the scheduler and not yet dispatched
	plugged     bool      // on its process's plug list
	hashed      bool      // in the engine's merge hashes (byEnd, byStart)
	pendingHash bool      // to be entered in the merge hashes by the next syncHash
	listed      bool      // in Engine.toHash; kept when the struct is reused from the pool, as its entry is
	gone        bool      // merged into another request or completed; back in the pool
	schedSaw    bool      // the scheduler was given it (Insert or InsertAtHead)
	flushSeq    bool      // in the flush machinery's sequence (RQF_FLUSH_SEQ): never merged
	fseq        uint8     // flush steps done (REQ_FSEQ_*)
	flushRq     bool      // a flush request the machinery made (REQ_OP_FLUSH)
	noMerge     bool      // never merged (REQ_NOMERGE of a split's first part, RQF_FLUSH_SEQ, req_set_nomerge)
	segs        int       // physical segments (nr_phys_segments): the sum of its bios' bioSegments
	wbt         bool      // tracked by the writeback throttle (WBT_TRACKED): its freeing is wbt_done
	tag         int       // its scheduler tag (Engine.tags), when the engine keeps the bitmap
	tagCPU      uint32    // the CPU it was allocated on, whose hint the freed tag becomes
}
