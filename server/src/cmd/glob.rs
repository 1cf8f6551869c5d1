//! Redis's glob patterns, as `KEYS`, `SCAN ... MATCH` and `CONFIG GET` read
//! them: `*` (any run of bytes), `?` (any one byte), `[...]` (one byte of a
//! class: bytes, ranges such as `a-z`, `\` escapes, and `^` first to negate
//! it; a class left open runs to the end of the pattern), and `\` (the next
//! byte as itself; a `\` that ends the pattern is itself).
//!
//! Every token but `*` matches exactly one byte, so a pattern is a row of
//! fixed-length segments with a `*` between each two. A name matches when
//! the first segment matches at its start, the last at its end (a pattern
//! without `*` is one segment that must match the whole name), and the
//! segments between occur in order, without overlapping, in what is left:
//! taking each of those at its leftmost occurrence is enough, since any
//! match can move its segments to the left one by one and still match.
//!
//! [`Glob`] compiles a pattern once for all the names a command matches.
//! The anchored segments cost their length; a middle segment of plain bytes
//! is found with `memchr`'s `memmem` (linear in the name); one with `?` or
//! classes by a bit-parallel shift-and (a word of state for each 64 of its
//! tokens, updating only the words that hold a partial match), or, when its
//! tables would not fit [`TABLE_WORDS`], by comparing at each position. Those
//! two can cost up to the name's length times the segment's: that work is
//! counted against a [`Work`] budget, and a match that would spend more
//! fails with [`TooComplex`] rather than keep a client waiting without end.
//!
//! A compiled pattern takes 3 bytes a token, and at most 2 MiB of classes
//! and [`TABLE_WORDS`] of tables; one with more distinct classes than a
//! token can name is matched as written, with no memory ([`raw`]).

use std::collections::HashMap;
use std::ops::Range;

/// Token values, one `u16` a token: a byte (`0..=255`) matches itself.
const ANY: u16 = 256;
/// A run of `*` (compiled as one).
const STAR: u16 = 257;
/// The first class: `SET0 + k` is `sets[k]`.
const SET0: u16 = 258;
/// Distinct classes a compiled pattern can hold; a pattern with more is
/// matched as written ([`raw`]).
const MAX_SETS: usize = (u16::MAX - SET0) as usize + 1;

/// Words (of 64 bits) the shift-and tables of one pattern may take, all
/// together: 8 MiB, enough for segments of 262,144 wildcard-bearing tokens.
/// Segments past it are compared at each position.
const TABLE_WORDS: usize = 1 << 20;

/// A set of bytes, one bit each.
type Set = [u64; 4];

/// The wildcard-search work one command may still do, past a unit a byte of
/// the names searched (the linear part, which every `KEYS` pays in any
/// case): a unit is a word of shift-and state or a byte compared, a
/// nanosecond or less.
pub(crate) struct Work {
    left: u64,
}

impl Work {
    /// What one command may spend matching: about a second of one core.
    /// Only wildcard segments past 64 tokens, searched in long names,
    /// spend anything.
    pub(crate) const LIMIT: u64 = 1 << 31;

    /// A budget of `units`.
    pub(crate) fn new(units: u64) -> Work {
        Work { left: units }
    }

    /// Spends `units`; an error once the budget is gone.
    #[inline]
    fn spend(&mut self, units: u64) -> Result<(), TooComplex> {
        match self.left.checked_sub(units) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.left = 0;
                Err(TooComplex)
            }
        }
    }
}

/// A match that would have taken more than its [`Work`] allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooComplex;

impl TooComplex {
    /// The error a command answers with.
    pub(crate) const MESSAGE: &'static str =
        "ERR pattern too complex: matching it against these keys would take too long";
}

/// A pattern, compiled for matching many names.
pub(crate) struct Glob<'p> {
    form: Form<'p>,
}

enum Form<'p> {
    Compiled(Compiled),
    /// A pattern with more distinct classes than tokens can name, matched
    /// as written.
    Raw(&'p [u8]),
}

struct Compiled {
    /// The tokens, runs of `*` made one.
    toks: Vec<u16>,
    /// Each token's byte where it is one (0 otherwise): a segment of bytes
    /// is its own needle.
    lits: Vec<u8>,
    /// The classes, by `toks` value less `SET0`.
    sets: Vec<Set>,
    /// Tokens that are not `*`: the bytes every match has.
    fixed: usize,
    /// Whether there is a `*`.
    star: bool,
    /// The first segment: `0..first_end` (all of `toks` without a star).
    first_end: usize,
    /// The last segment: `last_start..toks.len()`.
    last_start: usize,
    /// Shift-and tables of middle segments with wildcards, by the segment's
    /// first token, as far as [`TABLE_WORDS`] goes.
    tables: Vec<(usize, Box<[u64]>)>,
    /// An upper bound on the work a name costs, per byte of it.
    per_byte: u64,
}

impl<'p> Glob<'p> {
    /// Compiles `pattern`.
    pub(crate) fn new(pattern: &'p [u8]) -> Glob<'p> {
        Glob::with_tables(pattern, TABLE_WORDS)
    }

    /// Compiles `pattern` with at most `table_words` of shift-and tables.
    fn with_tables(pattern: &'p [u8], table_words: usize) -> Glob<'p> {
        let form = match Compiled::new(pattern, table_words) {
            Some(c) => Form::Compiled(c),
            None => Form::Raw(pattern),
        };
        Glob { form }
    }

    /// Whether `text` matches, spending the search's work from `work`.
    pub(crate) fn matches(&self, text: &[u8], work: &mut Work) -> Result<bool, TooComplex> {
        match &self.form {
            Form::Compiled(c) => c.matches(text, work),
            Form::Raw(p) => raw(p, text, work),
        }
    }

    /// An upper bound, in [`Work`]'s units and counting the linear part
    /// too, on what matching `text` costs: for deciding where to run it.
    pub(crate) fn cost(&self, text: &[u8]) -> u64 {
        let per_byte = match &self.form {
            Form::Compiled(c) if text.len() < c.fixed => return 1,
            Form::Compiled(c) => c.per_byte,
            Form::Raw(p) => p.len() as u64 + 1,
        };
        (text.len() as u64)
            .saturating_mul(per_byte)
            .saturating_add(16)
    }
}

/// Whether `text` matches `pattern`, matched as written: time up to
/// `|pattern|·|text|`, no memory. For short texts such as parameter names;
/// key names go through [`Glob`].
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    raw(pattern, text, &mut Work::new(u64::MAX)).unwrap_or(false)
}

impl Compiled {
    /// `pattern` compiled; `None` if it holds more distinct classes than
    /// [`MAX_SETS`].
    fn new(pattern: &[u8], table_words: usize) -> Option<Compiled> {
        let mut toks = Vec::with_capacity(pattern.len());
        let mut lits = Vec::with_capacity(pattern.len());
        let mut sets: Vec<Set> = Vec::new();
        let mut known: HashMap<Set, u16> = HashMap::new();
        let mut p = 0;
        while p < pattern.len() {
            let (tok, next) = match pattern[p] {
                b'*' => {
                    if toks.last() != Some(&STAR) {
                        toks.push(STAR);
                        lits.push(0);
                    }
                    p += 1;
                    continue;
                }
                b'?' => (ANY, p + 1),
                b'[' => {
                    let (set, next) = class_set(pattern, p);
                    let ones: u32 = set.iter().map(|w| w.count_ones()).sum();
                    let tok = match ones {
                        256 => ANY,
                        // One byte: a plain byte, so that its segment can
                        // be searched for as bytes.
                        1 => (0..=255u8).find(|&c| has(&set, c)).map_or(ANY, u16::from),
                        _ => match known.get(&set) {
                            Some(&tok) => tok,
                            None if sets.len() == MAX_SETS => return None,
                            None => {
                                let tok = SET0 + sets.len() as u16;
                                sets.push(set);
                                known.insert(set, tok);
                                tok
                            }
                        },
                    };
                    (tok, next)
                }
                b'\\' if p + 1 < pattern.len() => (u16::from(pattern[p + 1]), p + 2),
                c => (u16::from(c), p + 1),
            };
            toks.push(tok);
            lits.push(if tok < ANY { tok as u8 } else { 0 });
            p = next;
        }
        let stars = toks.iter().filter(|&&t| t == STAR).count();
        let first_end = toks.iter().position(|&t| t == STAR).unwrap_or(toks.len());
        let last_start = toks.iter().rposition(|&t| t == STAR).map_or(0, |i| i + 1);
        let mut compiled = Compiled {
            fixed: toks.len() - stars,
            star: stars > 0,
            first_end,
            last_start,
            toks,
            lits,
            sets,
            tables: Vec::new(),
            per_byte: 1,
        };
        // The middle segments' tables and costs.
        let mut words_left = table_words;
        let mut per_byte: u64 = 1;
        let mut tables = Vec::new();
        for seg in compiled.middles() {
            if compiled.toks[seg.clone()].iter().all(|&t| t < ANY) {
                continue;
            }
            let words = 256 * seg.len().div_ceil(64);
            if words <= words_left {
                words_left -= words;
                per_byte = per_byte.saturating_add((seg.len().div_ceil(64)) as u64);
                let table = compiled.table(seg.clone());
                tables.push((seg.start, table));
            } else {
                per_byte = per_byte.saturating_add(seg.len() as u64);
            }
        }
        compiled.tables = tables;
        compiled.per_byte = per_byte;
        Some(compiled)
    }

    /// The segments between the first and the last, in order, none empty.
    fn middles(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        let mut at = self.first_end + 1;
        std::iter::from_fn(move || {
            if at >= self.last_start {
                return None;
            }
            // A star ends every middle segment (the last one's star is at
            // `last_start - 1`), and runs of stars are one token.
            let len = self.toks[at..].iter().position(|&t| t == STAR).unwrap_or(0);
            let seg = at..at + len;
            at += len + 1;
            Some(seg)
        })
    }

    /// Whether token `tok` matches byte `c`.
    #[inline]
    fn accepts(&self, tok: u16, c: u8) -> bool {
        if tok < ANY {
            tok == u16::from(c)
        } else if tok == ANY {
            true
        } else {
            has(&self.sets[usize::from(tok - SET0)], c)
        }
    }

    /// Whether the tokens `seg` match `text`, of the same length.
    fn at(&self, seg: Range<usize>, text: &[u8]) -> bool {
        let toks = &self.toks[seg];
        toks.len() == text.len() && toks.iter().zip(text).all(|(&t, &c)| self.accepts(t, c))
    }

    /// Whether `text` matches: the anchored segments, then each middle one
    /// at its leftmost place after the one before.
    fn matches(&self, text: &[u8], work: &mut Work) -> Result<bool, TooComplex> {
        let n = text.len();
        if n < self.fixed {
            return Ok(false);
        }
        if !self.star {
            return Ok(n == self.fixed && self.at(0..self.toks.len(), text));
        }
        let head = self.first_end;
        let tail = self.toks.len() - self.last_start;
        if !self.at(0..head, &text[..head])
            || !self.at(self.last_start..self.toks.len(), &text[n - tail..])
        {
            return Ok(false);
        }
        let mut hay = &text[head..n - tail];
        for seg in self.middles() {
            match self.find(seg.clone(), hay, work)? {
                Some(at) => hay = &hay[at + seg.len()..],
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Where segment `seg` (not empty) first occurs in `hay`.
    fn find(
        &self,
        seg: Range<usize>,
        hay: &[u8],
        work: &mut Work,
    ) -> Result<Option<usize>, TooComplex> {
        let m = seg.len();
        if hay.len() < m {
            return Ok(None);
        }
        let toks = &self.toks[seg.clone()];
        if toks.iter().all(|&t| t < ANY) {
            return Ok(memchr::memmem::find(hay, &self.lits[seg]));
        }
        match self
            .tables
            .binary_search_by_key(&seg.start, |(start, _)| *start)
        {
            Ok(i) => shift_and(&self.tables[i].1, m, hay, work),
            Err(_) => self.compare_each(toks, hay, work),
        }
    }

    /// The leftmost place in `hay` where `toks` match, trying each in turn.
    fn compare_each(
        &self,
        toks: &[u16],
        hay: &[u8],
        work: &mut Work,
    ) -> Result<Option<usize>, TooComplex> {
        for start in 0..=hay.len() - toks.len() {
            let same = toks
                .iter()
                .zip(&hay[start..])
                .take_while(|&(&t, &c)| self.accepts(t, c))
                .count();
            work.spend(same as u64)?;
            if same == toks.len() {
                return Ok(Some(start));
            }
        }
        Ok(None)
    }

    /// The shift-and table of segment `seg`: for each byte, a bit for each
    /// token that matches it (`256 × words` words, row by byte).
    fn table(&self, seg: Range<usize>) -> Box<[u64]> {
        let words = seg.len().div_ceil(64);
        let mut table = vec![0u64; 256 * words].into_boxed_slice();
        for (j, &tok) in self.toks[seg].iter().enumerate() {
            let (word, bit) = (j / 64, 1u64 << (j % 64));
            if tok < ANY {
                table[usize::from(tok) * words + word] |= bit;
                continue;
            }
            for c in 0..=255u8 {
                if self.accepts(tok, c) {
                    table[usize::from(c) * words + word] |= bit;
                }
            }
        }
        table
    }
}

/// Where a segment of `m` tokens, whose table is `table`, first occurs in
/// `hay`: bit `j` of the state says that its first `j + 1` tokens match the
/// bytes that end here. Only the words up to the highest that holds a bit
/// (and the next, which a carry can reach) are updated.
fn shift_and(
    table: &[u64],
    m: usize,
    hay: &[u8],
    work: &mut Work,
) -> Result<Option<usize>, TooComplex> {
    let words = m.div_ceil(64);
    let (last_word, last_bit) = ((m - 1) / 64, 1u64 << ((m - 1) % 64));
    if words == 1 {
        // One word, the usual case: no state to allocate, linear work.
        let mut state = 0u64;
        for (i, &c) in hay.iter().enumerate() {
            state = ((state << 1) | 1) & table[usize::from(c)];
            if state & last_bit != 0 {
                return Ok(Some(i + 1 - m));
            }
        }
        return Ok(None);
    }
    let mut state = vec![0u64; words];
    // Words `0..live` may hold bits.
    let mut live = 0;
    for (i, &c) in hay.iter().enumerate() {
        let row = &table[usize::from(c) * words..][..words];
        let upto = (live + 1).min(words);
        work.spend(upto as u64 - 1)?;
        let mut carry = 1;
        live = 0;
        for k in 0..upto {
            let old = state[k];
            let new = ((old << 1) | carry) & row[k];
            carry = old >> 63;
            state[k] = new;
            if new != 0 {
                live = k + 1;
            }
        }
        if state[last_word] & last_bit != 0 {
            return Ok(Some(i + 1 - m));
        }
    }
    Ok(None)
}

/// Whether set `s` holds `c`.
#[inline]
fn has(s: &Set, c: u8) -> bool {
    s[usize::from(c >> 6)] >> (c & 63) & 1 == 1
}

/// Adds `lo..=hi` to `s`.
fn add_range(s: &mut Set, lo: u8, hi: u8) {
    for (w, word) in s.iter_mut().enumerate() {
        let (base, top) = (w as u32 * 64, w as u32 * 64 + 63);
        let (from, to) = (u32::from(lo).max(base), u32::from(hi).min(top));
        if from <= to {
            let bits = to - from + 1;
            let mask = if bits == 64 {
                u64::MAX
            } else {
                ((1u64 << bits) - 1) << (from - base)
            };
            *word |= mask;
        }
    }
}

/// The bytes of the class that opens at `pattern[at]`, and the index after
/// it (the pattern's end where it is left open).
fn class_set(pattern: &[u8], at: usize) -> (Set, usize) {
    let mut set = [0u64; 4];
    let mut i = at + 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            add_range(&mut set, pattern[i + 1], pattern[i + 1]);
            i += 2;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
            let (a, b) = (pattern[i], pattern[i + 2]);
            add_range(&mut set, a.min(b), a.max(b));
            i += 3;
        } else {
            add_range(&mut set, pattern[i], pattern[i]);
            i += 1;
        }
    }
    if negate {
        for word in &mut set {
            *word = !*word;
        }
    }
    (set, (i + 1).min(pattern.len()))
}

/// Matches `text` against `pattern` as written, going back to the last `*`
/// on a mismatch: no memory, time up to `|pattern|·|text|`, spent from
/// `work`.
fn raw(pattern: &[u8], text: &[u8], work: &mut Work) -> Result<bool, TooComplex> {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: the pattern after it, the text.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        work.spend(1)?;
        let step = match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, t));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => {
                let (set, next) = class_set(pattern, p);
                work.spend((next - p) as u64)?;
                has(&set, text[t]).then_some(next)
            }
            Some(b'\\') if p + 1 < pattern.len() => (pattern[p + 1] == text[t]).then_some(p + 2),
            Some(&c) => (c == text[t]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                p = next;
                t += 1;
            }
            (None, Some((sp, st))) => {
                p = sp;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            (None, None) => return Ok(false),
        }
    }
    Ok(pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*'))
}

#[cfg(test)]
mod tests {
    use super::{glob, Glob, TooComplex, Work};

    /// The matcher `KEYS` used before patterns were compiled, kept as the
    /// reference: the same loop as [`super::raw`], with each class read
    /// again for every byte it is tried on.
    fn reference(pattern: &[u8], text: &[u8]) -> bool {
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            let step = match pattern.get(p) {
                Some(b'*') => {
                    star = Some((p + 1, t));
                    p += 1;
                    continue;
                }
                Some(b'?') => Some(p + 1),
                Some(b'[') => reference_class(pattern, p, text[t]),
                Some(b'\\') if p + 1 < pattern.len() => {
                    (pattern[p + 1] == text[t]).then_some(p + 2)
                }
                Some(&c) => (c == text[t]).then_some(p + 1),
                None => None,
            };
            match (step, star) {
                (Some(next), _) => {
                    p = next;
                    t += 1;
                }
                (None, Some((sp, st))) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                (None, None) => return false,
            }
        }
        pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
    }

    fn reference_class(pattern: &[u8], at: usize, c: u8) -> Option<usize> {
        let mut i = at + 1;
        let negate = pattern.get(i) == Some(&b'^');
        if negate {
            i += 1;
        }
        let mut matched = false;
        while i < pattern.len() && pattern[i] != b']' {
            if pattern[i] == b'\\' && i + 1 < pattern.len() {
                matched |= pattern[i + 1] == c;
                i += 2;
            } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
                let (lo, hi) = (
                    pattern[i].min(pattern[i + 2]),
                    pattern[i].max(pattern[i + 2]),
                );
                matched |= (lo..=hi).contains(&c);
                i += 3;
            } else {
                matched |= pattern[i] == c;
                i += 1;
            }
        }
        (matched != negate).then_some((i + 1).min(pattern.len()))
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        }

        fn pick(&mut self, from: &[u8], len: usize) -> Vec<u8> {
            (0..len).map(|_| from[self.below(from.len())]).collect()
        }
    }

    /// The three ways a pattern is matched: compiled (shift-and for
    /// wildcard segments), compiled with no tables (compared at each
    /// position), and as written.
    fn all_ways(pattern: &[u8], text: &[u8]) -> [bool; 3] {
        let work = &mut Work::new(u64::MAX);
        [
            Glob::new(pattern).matches(text, work).unwrap(),
            Glob::with_tables(pattern, 0).matches(text, work).unwrap(),
            glob(pattern, text),
        ]
    }

    #[test]
    fn globs() {
        for (p, t, m) in [
            ("*", "", true),
            ("*", "abc", true),
            ("", "", true),
            ("", "a", false),
            ("a*", "abc", true),
            ("a*c", "abbbc", true),
            ("a*c", "abbb", false),
            ("h?llo", "hello", true),
            ("h[ae]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("*b*", "aaa", false),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("[", "a", false),
            ("a\\", "a\\", true),
            ("*[]*", "]", false),
            ("[^]", "x", true),
            ("[z-a]", "m", true),
            ("[a-]", "-", true),
            ("[\\]]", "]", true),
            ("*ab*ab*", "abab", true),
            ("*ab*ab*", "aba", false),
            ("*a?c*", "xxabcxx", true),
            ("**a**", "a", true),
            ("k[0-9][0-9]", "k42", true),
            ("k[0-9][0-9]", "k4x", false),
        ] {
            let expected = [m; 3];
            assert_eq!(all_ways(p.as_bytes(), t.as_bytes()), expected, "{p} {t}");
            assert_eq!(reference(p.as_bytes(), t.as_bytes()), m, "{p} {t}");
        }
    }

    /// Short random patterns and texts over a few bytes, the pattern's
    /// own among them, against the reference.
    #[test]
    fn short_patterns_match_as_the_reference_does() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300_000 {
            let pattern = {
                let len = rng.below(11);
                rng.pick(b"ab*?[]^-\\", len)
            };
            let text = {
                let len = rng.below(13);
                rng.pick(b"ab]-^\\*", len)
            };
            let expected = reference(&pattern, &text);
            assert_eq!(
                all_ways(&pattern, &text),
                [expected; 3],
                "{:?} {:?}",
                String::from_utf8_lossy(&pattern),
                String::from_utf8_lossy(&text)
            );
        }
    }

    /// Long texts and patterns cut from them (so that they often match),
    /// with segments past 64 tokens, so that shift-and keeps several words.
    #[test]
    fn long_segments_match_as_the_reference_does() {
        let mut rng = Rng(42);
        let mut matched = 0;
        for _ in 0..3_000 {
            let text = {
                let len = 50 + rng.below(400);
                rng.pick(b"aab", len)
            };
            // Segments cut from the text in order, from its start and to its
            // end where the pattern is anchored there.
            let segments = 1 + rng.below(4);
            let mut cuts: Vec<usize> = (0..2 * segments)
                .map(|_| rng.below(text.len() + 1))
                .collect();
            cuts.sort_unstable();
            let (anchor_start, anchor_end) = (rng.below(2) == 0, rng.below(2) == 0);
            if anchor_start {
                cuts[0] = 0;
            }
            if anchor_end {
                cuts[2 * segments - 1] = text.len();
            }
            let mut pattern = Vec::new();
            if !anchor_start {
                pattern.push(b'*');
            }
            for (i, cut) in cuts.chunks(2).enumerate() {
                if i > 0 {
                    pattern.push(b'*');
                }
                // Now and then a byte the text does not have there.
                let stray = (rng.below(3) == 0).then(|| cut[0] + rng.below(cut[1] - cut[0] + 1));
                for (at, &c) in text.iter().enumerate().take(cut[1]).skip(cut[0]) {
                    if stray == Some(at) {
                        pattern.push(b'b');
                    }
                    match rng.below(12) {
                        0 => pattern.push(b'?'),
                        1 => pattern.extend_from_slice(b"[ab]"),
                        2 if c == b'a' => pattern.extend_from_slice(b"[^b]"),
                        _ => pattern.push(c),
                    }
                }
            }
            if !anchor_end {
                pattern.push(b'*');
            }
            let expected = reference(&pattern, &text);
            matched += usize::from(expected);
            assert_eq!(
                all_ways(&pattern, &text),
                [expected; 3],
                "{:?} {:?}",
                String::from_utf8_lossy(&pattern),
                String::from_utf8_lossy(&text)
            );
        }
        assert!(matched > 1_000, "{matched} matched");
    }

    /// A long plain segment against a long name: linear, not the product
    /// of their lengths (which took the reference seconds at these sizes).
    #[test]
    fn long_plain_segments_take_linear_time() {
        let text = vec![b'a'; 400_000];
        for tail in ["b", "b*", "ba*", "?b*"] {
            let pattern = [&b"*"[..], &[b'a'; 200_000], tail.as_bytes()].concat();
            let glob = Glob::new(&pattern);
            let work = &mut Work::new(u64::MAX);
            let started = std::time::Instant::now();
            assert_eq!(glob.matches(&text, work), Ok(false), "{tail}");
            assert!(
                started.elapsed().as_secs() < 5,
                "{tail}: {:?}",
                started.elapsed()
            );
        }
        let pattern = [&b"*"[..], &[b'a'; 200_000], b"*"].concat();
        let glob = Glob::new(&pattern);
        assert_eq!(glob.matches(&text, &mut Work::new(u64::MAX)), Ok(true));
    }

    /// Search work past the budget fails the match, rather than run on.
    #[test]
    fn work_past_the_budget_is_refused() {
        let text = vec![b'a'; 20_000];
        let pattern = [&b"*"[..], &[b'a'; 5_000], b"?b*"].concat();
        for glob in [Glob::new(&pattern), Glob::with_tables(&pattern, 0)] {
            let mut work = Work::new(1_000_000);
            assert_eq!(glob.matches(&text, &mut work), Err(TooComplex));
            assert_eq!(glob.matches(&text, &mut Work::new(u64::MAX)), Ok(false));
        }
        // With 79 words of state, shift-and spends at most 79 a byte.
        let glob = Glob::new(&pattern);
        assert!(glob.cost(&text) <= 20_000 * 80 + 16);
        assert_eq!(glob.matches(&text, &mut Work::new(20_000 * 79)), Ok(false));
    }

    /// More distinct classes than tokens can name: matched as written.
    #[test]
    fn a_pattern_of_many_classes_is_matched_as_written() {
        let plain: Vec<u8> = (1..=255u8).filter(|c| !b"]\\-^".contains(c)).collect();
        let k = plain.len();
        let mut pattern = b"*".to_vec();
        let mut text = Vec::new();
        // Distinct classes of three bytes each.
        let triples =
            (0..k).flat_map(|a| (a + 1..k).flat_map(move |b| (b + 1..k).map(move |c| (a, b, c))));
        for (a, b, c) in triples.take(70_000) {
            pattern.extend_from_slice(&[b'[', plain[a], plain[b], plain[c], b']']);
            text.push(plain[c]);
        }
        pattern.push(b'*');
        let glob = Glob::new(&pattern);
        assert!(matches!(glob.form, super::Form::Raw(_)));
        let work = &mut Work::new(u64::MAX);
        assert_eq!(glob.matches(&text, work), Ok(true));
        assert_eq!(glob.matches(&text[1..], work), Ok(false));
    }
}
