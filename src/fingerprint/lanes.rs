//! The branch-free lane arithmetic that finds a fingerprint (or an empty
//! slot) inside a packed 64-bit word, and reads and writes single lanes.

use super::Width;

/// The high bit of each lane of `x` that is exactly zero.
///
/// Exact, unlike the shorter `(x - LOW) & !x & HIGH`, whose borrow can flag a
/// lane holding 1 just above a zero lane: in an 8-bit table that lane may belong
/// to the neighbouring bucket, and a remove would clear the wrong fingerprint.
/// Adding `0x7f..` to the low bits of a lane cannot carry out of the lane.
///
/// The unused top bits of a word (10, 12, 21-bit lanes) are never flagged,
/// whatever `x` holds there: they are in `!HIGH`, which the last `|` sets and
/// the `!` clears, and adding `!HIGH` to them cannot carry into a lane (they
/// are the top of the word; a carry out of them is lost).
#[inline(always)]
pub(crate) fn zero_lanes<W: Width>(x: u64) -> u64 {
    let low_bits = !W::HIGH;
    !(((x & low_bits).wrapping_add(low_bits)) | x | low_bits)
}

/// 1 if some lane of `words` holds `fp`, else 0: [`matches_in_either`]
/// where every lane of both words is asked about (buckets of 10, 12 and 21
/// bits fill whole words), so that no lane needs to be singled out.
///
/// The short zero-lane test, `(x - LOW) & !x & HIGH` on `x = word ^ fp`
/// in every lane, flags each lane equal to `fp`; its borrow can also flag
/// the lane above one (see [`zero_lanes`]), but only above a lane that is
/// flagged itself, so whether any lane is flagged is exact. With no zero
/// lane nothing borrows, and a lane `v` gets its flag only if `v - 1` has
/// the high bit and `v` has not: `v = 0`. The bits above the top lane are
/// never flagged (they are outside `HIGH`), whatever they hold. Four
/// instructions a word, against seven for the exact [`zero_lanes`].
#[inline(always)]
pub(crate) fn any_lane_holds<W: Width>(words: [u64; 2], fp: u32) -> u32 {
    let pattern = broadcast::<W>(fp);
    let flags = words.iter().fold(0, |flags, &word| {
        let x = word ^ pattern;
        flags | (x.wrapping_sub(W::LOW) & !x)
    });
    u32::from(flags & W::HIGH != 0)
}

/// Nonzero if and only if `masks`' lanes of either of `words` hold `fp`
/// (`masks[k]` flags lanes of `words[k]` by their high bit; `fp` is never 0,
/// so an empty lane never matches): what a lookup asks of a bucket pair, or of
/// a bucket of two words. A number rather than a `bool`, so that a caller can
/// fold it into arithmetic without the compiler turning it into a branch (see
/// `Table::contains`).
///
/// For 8, 16 and 32-bit lanes on x86-64, one SSE2 comparison of both words'
/// lanes with `fp` ([`equal_bytes`]), ANDed with the byte mask of the lanes
/// asked about. The same question by [`Width::holds_in`] on each word, the
/// zero-lane trick, takes about twice the instructions. Other lanes asked
/// about whole ([`any_lane_holds`]) take the short zero-lane test over both
/// words; semi-sorted words and partial masks the per-word way (and give 0
/// or 1).
#[inline(always)]
pub(crate) fn matches_in_either<W: Width>(words: [u64; 2], masks: [u64; 2], fp: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if !W::SORTED && matches!(W::BITS, 8 | 16 | 32) {
        use std::arch::x86_64::{_mm_movemask_epi8, _mm_set_epi64x};
        let equal = equal_bytes::<W>(words, fp);
        // Every bucket of 16 or 32-bit lanes is whole words, so a lookup asks
        // about every lane and the byte mask alone answers. The masks are
        // constants where the lookup is inlined, so this test compiles away,
        // with the AND it saves (four instructions as LLVM lowers it).
        if W::BITS != 8 && masks == [W::HIGH; 2] {
            return equal;
        }
        // A lane's high bit is the top bit of its last byte: that byte's bit
        // in the mask of bytes.
        let [m0, m1] = masks.map(|m| m as i64);
        // SAFETY: SSE2 is enabled for this target (the `cfg` above); these
        // intrinsics compute on values in registers and touch no memory.
        let asked = unsafe { _mm_movemask_epi8(_mm_set_epi64x(m1, m0)) };
        return equal & asked as u32;
    }
    if !W::SORTED && masks == [W::HIGH; 2] {
        // Every lane of both words asked about: whether, not which.
        return any_lane_holds::<W>(words, fp);
    }
    u32::from(W::holds_in_either(words, masks, fp))
}

/// [`matches_in_either`] for a bucket pair of 8-bit lanes: nonzero if and
/// only if the pair holds `fp`, given the word of its bucket `first` and the
/// word of its other bucket.
///
/// Two buckets of 8-bit lanes share a word, bucket `b` being half `b % 2` of
/// word `b / 2` (see `Table::locus`), and the two buckets of a pair are of
/// opposite halves (the alternate flips a bucket's low bit: see
/// `Table::alternate`). So one bucket's parity says which half of each word
/// is the pair's: for an even `first`, bytes 0-3 of the first word and 4-7
/// of the second, bits 0-3 and 12-15 of [`equal_bytes`]; for an odd one,
/// bits 4-7 and 8-11. A shift of one constant picks the mask (a 32-bit shift
/// takes its count mod 32, so by 16 or by 0): a few scalar instructions,
/// where turning the halves' masks into a byte mask, as
/// [`matches_in_either`] does, took seven vector ones (batched 8-bit
/// lookups went from 70 to 64 instructions a key, plain ones 9 % faster).
#[inline(always)]
pub(crate) fn matches_in_halves<W: Width>(words: [u64; 2], first: u64, fp: u32) -> u32 {
    debug_assert!(W::BITS == 8 && W::LANES == 2 * W::SLOTS && !W::SORTED);
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let halves = 0x0ff0_f00f_u32.wrapping_shr((first as u32) << 4);
        equal_bytes::<W>(words, fp) & halves
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        let ours = |bucket: u64| W::HIGH & half_mask((bucket % 2) as u32);
        matches_in_either::<W>(words, [ours(first), ours(first + 1)], fp)
    }
}

/// The mask of bytes of `words` (bit `8k + j` for byte `j` of `words[k]`)
/// that belong to a lane holding `fp`, for lanes of 8, 16 or 32 bits: one
/// SSE2 comparison (`pcmpeqb`, `pcmpeqw` or `pcmpeqd`; a matching lane sets
/// all its bytes) and its byte mask.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn equal_bytes<W: Width>(words: [u64; 2], fp: u32) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi16, _mm_cmpeq_epi32, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi16,
        _mm_set1_epi32, _mm_set1_epi8, _mm_set_epi64x,
    };
    debug_assert!(matches!(W::BITS, 8 | 16 | 32));
    // The casts only reinterpret bits: `fp` fits the lane (it is at most
    // `W::MAX`), and the words are bit patterns.
    let [w0, w1] = words.map(|w| w as i64);
    // SAFETY: SSE2 is enabled for this target (the `cfg` above); these
    // intrinsics compute on values in registers and touch no memory.
    let equal = unsafe {
        let lanes = _mm_set_epi64x(w1, w0);
        _mm_movemask_epi8(match W::BITS {
            8 => _mm_cmpeq_epi8(lanes, _mm_set1_epi8(fp as i8)),
            16 => _mm_cmpeq_epi16(lanes, _mm_set1_epi16(fp as i16)),
            _ => _mm_cmpeq_epi32(lanes, _mm_set1_epi32(fp as i32)),
        })
    };
    equal as u32
}

/// `fp` repeated in every lane.
#[inline(always)]
pub(crate) fn broadcast<W: Width>(fp: u32) -> u64 {
    u64::from(fp).wrapping_mul(W::LOW)
}

/// Index of the lowest lane flagged (by its high bit) in `flags`, which is not 0.
#[inline(always)]
pub(crate) fn first_lane<W: Width>(flags: u64) -> u32 {
    flags.trailing_zeros() / W::BITS
}

/// The fingerprint in `lane` of `word`.
#[inline(always)]
pub(crate) fn lane_value<W: Width>(word: u64, lane: u32) -> u32 {
    ((word >> (lane * W::BITS)) & W::MAX) as u32
}

/// `word` with `lane` set to `fp` (the lane is assumed empty).
#[inline(always)]
pub(crate) fn with_lane<W: Width>(word: u64, lane: u32, fp: u32) -> u64 {
    word | (u64::from(fp) << (lane * W::BITS))
}

/// `word` with `lane` emptied.
#[inline(always)]
pub(crate) fn without_lane<W: Width>(word: u64, lane: u32) -> u64 {
    word & !(W::MAX << (lane * W::BITS))
}
