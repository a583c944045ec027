package replay

import (
	"slices"
	"testing"
)

// TestTagShift: sbitmap_calculate_shift (lib/sbitmap.c) starts at
// ilog2(BITS_PER_LONG) = 6 and decrements while 4 << shift > depth.
func TestTagShift(t *testing.T) {
	for _, tc := range []struct {
		depth int
		shift uint
	}{{256, 6}, {128, 5}, {64, 4}, {48, 3}, {4, 0}, {2, 6}} {
		if got := TagShift(tc.depth); got != tc.shift {
			t.Errorf("depth %d: shift %d, want %d", tc.depth, got, tc.shift)
		}
	}
}

// TestMapDepthWithShallow: __map_depth_with_shallow (Linux 6.17 on) gives
// word i word_depth*d/depth bits, one more when the remainder is at least
// (i+1)*word_depth. nr_requests 256, four words of 64: depth 1 leaves bit
// 0 of word 0 only (64/256 = 0 rem 64; 64 >= 64 for word 0 alone); 6 (the
// flusher's share in fs-bfq-fsync-vs-seqread) is 384/256 = 1 rem 128, so
// 2, 2, 1, 1; 4 is one bit a word (the pre-6.17 depth 1 a word); 128, the
// async depth, 32 a word. 48 tags in words of 8: depth 9 is 72/48 = 1 rem
// 24, so 2, 2, 2, 1, 1, 1.
func TestMapDepthWithShallow(t *testing.T) {
	for _, tc := range []struct {
		depth, d int
		want     []int
	}{
		{256, 1, []int{1, 0, 0, 0}},
		{256, 6, []int{2, 2, 1, 1}},
		{256, 4, []int{1, 1, 1, 1}},
		{256, 128, []int{32, 32, 32, 32}},
		{256, 256, []int{64, 64, 64, 64}},
		{48, 9, []int{2, 2, 2, 1, 1, 1}},
		{100, 100, []int{16, 16, 16, 16, 16, 16, 4}},
	} {
		m := newTagMap(tc.depth)
		var got []int
		for i := range m.words {
			got = append(got, m.mapDepth(i, tc.d))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("depth %d, shallow %d: %v, want %v", tc.depth, tc.d, got, tc.want)
		}
	}
}

// TestShallowDepthOneIsBitZero: a full-depth get (__sbitmap_get, not round
// robin) takes the lowest free bit of its CPU's hint word; a get of
// shallow depth 1 may use bit 0 of word 0 only. So with one tag in use, by
// a CPU whose hint is in word 0, the limited request is refused (and its
// CPU's hint goes to 0: update_alloc_hint_after_get on a failed get);
// with a tag in use elsewhere it is not; once bit 0 is freed it gets it,
// and the freed tag is the freeing CPU's hint (sbitmap_update_cpu_hint).
func TestShallowDepthOneIsBitZero(t *testing.T) {
	m := newTagMap(256)
	m.hints[7], m.hints[8], m.hints[9] = 3, 130, 200
	if got := m.get(8, 256); got != 128 {
		t.Fatalf("full get with hint 130: tag %d, want 128 (word 2's lowest free bit)", got)
	}
	if !m.free(1) {
		t.Errorf("tag 128 in use: a depth-1 get is refused, want bit 0 free")
	}
	if got := m.get(7, 256); got != 0 {
		t.Fatalf("full get with hint 3: tag %d, want 0", got)
	}
	if m.free(1) {
		t.Errorf("bit 0 in use: a depth-1 get would succeed")
	}
	if !m.free(4) {
		t.Errorf("bit 0 in use: a depth-4 get (one bit a word) is refused, want bits 64 and 192 free")
	}
	if got := m.get(9, 1); got != -1 || m.hints[9] != 0 {
		t.Errorf("depth-1 get with bit 0 in use: tag %d, hint %d; want -1, 0", got, m.hints[9])
	}
	m.put(0, 7)
	if m.hints[7] != 0 {
		t.Errorf("tag 0 freed: CPU 7's hint %d, want 0", m.hints[7])
	}
	if got := m.get(8, 1); got != 0 {
		t.Errorf("depth-1 get with hint 130: tag %d, want 0 (words 2 and 3 have no bit at depth 1)", got)
	}
	if m.used != 2 {
		t.Errorf("%d tags in use, want 2", m.used)
	}
}

// TestShallowGetFromHint: a shallow get starts at its hint's bit
// (SB_NR_TO_BIT) and wraps once within the word; the hint moves past a
// bit taken at the hint (update_alloc_hint_after_get: nr + 1).
func TestShallowGetFromHint(t *testing.T) {
	m := newTagMap(256)
	m.hints[1] = 70 // word 1, bit 6
	if got := m.get(1, 128); got != 70 {
		t.Fatalf("depth-128 get with hint 70: tag %d, want 70", got)
	}
	if m.hints[1] != 71 {
		t.Errorf("hint %d, want 71", m.hints[1])
	}
	m.hints[1] = 100 // bit 36 of word 1: beyond its 32 bits at depth 128
	if got := m.get(1, 128); got != 64 {
		t.Errorf("depth-128 get with hint 100: tag %d, want 64 (wrapped to the word's bit 0)", got)
	}
	if m.hints[1] != 100 {
		t.Errorf("hint %d, want 100 (unchanged: the bit was not the hint)", m.hints[1])
	}
}
