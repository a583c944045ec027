package replay

// tagMap is the scheduler tag bitmap of the one hardware queue
// (hctx->sched_tags->bitmap_tags, an sbitmap of NrRequests bits) as Linux
// 6.17 on allocates from it (lib/sbitmap.c after "lib/sbitmap: convert
// shallow_depth from one word to the whole sbitmap", 42e6c6ce03fd):
//   - the bits are split into words of 1<<shift bits
//     (sbitmap_calculate_shift: 64, fewer while 4 words would not fill);
//   - each CPU has an allocation hint (sb->alloc_hint); a full-depth
//     allocation (__sbitmap_get, not round robin) takes the lowest free bit
//     of the hint's word, then of the next words in turn;
//   - a shallow allocation of depth d (sbitmap_get_shallow, d in tags of
//     the whole bitmap) may use only the first mapDepth(i, d) bits of word
//     i (__map_depth_with_shallow: d spread over the words in proportion
//     to their size, the remainder to the first words), searched from the
//     hint's bit with wrap-around;
//   - after a get the hint moves past the bit when the bit was the hint
//     (update_alloc_hint_after_get), to 0 when nothing was free; a freed
//     tag becomes the hint of the CPU that allocated it
//     (sbitmap_update_cpu_hint from sbitmap_queue_clear).
//
// So a request limited to depth 1 (bfq_limit_depth for an entity over its
// request limit) gets a tag only while bit 0 of word 0 is free, however
// few tags are in use; and one limited to d = NrRequests/2 can be refused
// with fewer than d tags in use when its words are full.
//
// The kernel draws each CPU's first hint at random (init_alloc_hint:
// get_random_u32_below(depth)); the model draws it from a fixed hash of
// the CPU number, so a replay stays deterministic. Only the word of the
// hint matters to a full-depth allocation.
type tagMap struct {
	depth int      // bits (NrRequests)
	shift uint     // log2 of the bits per word
	words []uint64 // bit b of words[i] set: tag i<<shift+b in use
	hints map[uint32]int
	used  int // tags in use
}

func newTagMap(depth int) *tagMap {
	shift := TagShift(depth)
	n := (depth + 1<<shift - 1) >> shift
	return &tagMap{depth: depth, shift: shift, words: make([]uint64, n), hints: map[uint32]int{}}
}

// TagShift is sbitmap_calculate_shift: the log2 of the bits per word of
// a scheduler tag bitmap of depth tags, BITS_PER_LONG (64) bits a word,
// halved while 4 words would not fill depth bits. A scheduler's
// LimitDepth (DepthLimiter) computes per-word depths with it.
func TagShift(depth int) uint {
	shift := uint(6)
	if depth >= 4 {
		for (4 << shift) > depth {
			shift--
		}
	}
	return shift
}

// wordDepth is __map_depth: the bits of word i (the last one may be short).
func (m *tagMap) wordDepth(i int) int {
	if i == len(m.words)-1 {
		return m.depth - i<<m.shift
	}
	return 1 << m.shift
}

// mapDepth is __map_depth_with_shallow: the bits of word i that an
// allocation of shallow depth d (tags of the whole bitmap) may use.
func (m *tagMap) mapDepth(i, d int) int {
	w := m.wordDepth(i)
	if d >= m.depth {
		return w
	}
	q := uint64(w) * uint64(d)
	n, rem := q/uint64(m.depth), q%uint64(m.depth)
	if rem >= uint64((i+1)*w) {
		n++
	}
	return int(n)
}

// hint is update_alloc_hint_before_get for cpu.
func (m *tagMap) hint(cpu uint32) int {
	h, ok := m.hints[cpu]
	if !ok || h >= m.depth {
		// splitmix64 of the CPU number, for init_alloc_hint's random draw.
		z := uint64(cpu) + 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		h = int(z % uint64(m.depth))
		m.hints[cpu] = h
	}
	return h
}

// free reports whether an allocation of shallow depth d would find a bit.
func (m *tagMap) free(d int) bool {
	if m.used >= m.depth {
		return false
	}
	if d >= m.depth {
		return true
	}
	for i, w := range m.words {
		n := m.mapDepth(i, d)
		if n > 0 && w|^(uint64(1)<<n-1) != ^uint64(0) {
			return true
		}
	}
	return false
}

// getWord is __sbitmap_get_word: the first free bit of word i below depth
// from bit hint on, wrapping to bit 0 once when hint > 0; -1 if none.
func (m *tagMap) getWord(i, depth, hint int) int {
	for pass := 0; pass < 2; pass++ {
		for b := hint; b < depth; b++ {
			if m.words[i]&(1<<b) == 0 {
				m.words[i] |= 1 << b
				return b
			}
		}
		if hint == 0 {
			break
		}
		hint = 0
	}
	return -1
}

// get allocates a tag for a request submitted on cpu with shallow depth
// d (d >= depth: none), as sbitmap_get and sbitmap_get_shallow do, and
// returns it, or -1 when no bit is free for d.
func (m *tagMap) get(cpu uint32, d int) int {
	hint := m.hint(cpu)
	index := hint >> m.shift
	bit := 0
	if d < m.depth {
		bit = hint & (1<<m.shift - 1) // SB_NR_TO_BIT: the shallow search starts at the hint's bit
	}
	nr := -1
	for range m.words {
		if n := m.mapDepth(index, d); n > 0 {
			if b := m.getWord(index, n, bit); b >= 0 {
				nr = index<<m.shift + b
				break
			}
		}
		bit = 0
		if index++; index >= len(m.words) {
			index = 0
		}
	}
	switch {
	case nr < 0:
		m.hints[cpu] = 0
		return -1
	case nr == hint:
		h := nr + 1
		if h >= m.depth-1 {
			h = 0
		}
		m.hints[cpu] = h
	}
	m.used++
	return nr
}

// put frees tag, allocated on cpu, and makes it cpu's hint.
func (m *tagMap) put(tag int, cpu uint32) {
	i, b := tag>>m.shift, uint(tag)&(1<<m.shift-1)
	if tag < 0 || i >= len(m.words) || m.words[i]&(1<<b) == 0 {
		return
	}
	m.words[i] &^= 1 << b
	m.used--
	m.hints[cpu] = tag
}
